//! One scripted loopback HTTP/1.1 server for every remote the tests fake (OpenAI-compatible and
//! Anthropic chat, OpenAI-compatible embeddings, GitHub REST): on 127.0.0.1:0, on its own thread
//! and runtime (so a test may run the driftgate binary synchronously, or call the library from
//! its own runtime, while it answers), keep-alive, recording every request.
//!
//! Answers come from a script: a FIFO of [`Step`]s, then a handler closure that decides from the
//! request itself (so concurrent requests may arrive in any order), then `418` when neither is
//! left. A step is any status, headers and body, optionally after a delay; or a hang (say nothing,
//! then close) or an immediate close. The wire formats of each provider are thin helpers on top
//! (`support::openai`, `support::anthropic`, `support::github`). The server stops when the
//! [`Fake`] is dropped.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// One request as the fake received it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
    /// Names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON; `Null` when empty or not JSON.
    pub body: Value,
    /// The body's bytes (a multipart upload is not JSON).
    pub raw: Vec<u8>,
    /// Arrival order over the server's life, from 0.
    pub index: usize,
    /// How many identical requests (same method, target and body bytes) came before this one:
    /// 0 for the first attempt, 1 for the first retry, …
    pub nth: usize,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The target without its query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or(&self.target)
    }

    /// Query parameter `key`.
    pub fn query(&self, key: &str) -> Option<&str> {
        let q = self.target.split_once('?')?.1;
        q.split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Reply,
    /// Say nothing for this long, then close.
    Hang(Duration),
    /// Close the connection without answering.
    Close,
}

/// What the fake does with one request.
#[derive(Debug, Clone)]
pub struct Step {
    kind: Kind,
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    delay: Duration,
    echo: bool,
}

impl Step {
    /// Answer `status` with `body` (`content-type: application/json` unless a header says
    /// otherwise).
    pub fn reply(status: u16, body: impl Into<String>) -> Step {
        Step {
            kind: Kind::Reply,
            status,
            headers: Vec::new(),
            body: body.into().into_bytes(),
            delay: Duration::ZERO,
            echo: false,
        }
    }

    /// Answer `status` with these bytes (a download: set its content-type).
    pub fn bytes(status: u16, body: Vec<u8>) -> Step {
        Step {
            body,
            ..Step::reply(status, "")
        }
    }

    /// Say nothing for `d`, then close: a server slower than the client's timeout.
    pub fn hang(d: Duration) -> Step {
        Step {
            kind: Kind::Hang(d),
            ..Step::reply(0, "")
        }
    }

    /// Close the connection without answering.
    pub fn close() -> Step {
        Step {
            kind: Kind::Close,
            ..Step::reply(0, "")
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Step {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub fn headers(self, headers: &[(&str, &str)]) -> Step {
        headers.iter().fold(self, |s, (k, v)| s.header(k, v))
    }

    /// Wait this long before answering.
    pub fn delay(mut self, d: Duration) -> Step {
        self.delay = d;
        self
    }

    /// The status this step answers with (0 for a hang or a close).
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The body this step answers with, as text.
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Replace `{{header-name}}` in the body by that request header's value: a server that
    /// echoes credentials back.
    pub fn echo_headers(mut self) -> Step {
        self.echo = true;
        self
    }
}

/// `Step::reply(status, body)`.
pub fn reply(status: u16, body: impl Into<String>) -> Step {
    Step::reply(status, body)
}

/// `Step::reply(status, body)` with extra headers.
pub fn reply_with(status: u16, headers: &[(&str, &str)], body: impl Into<String>) -> Step {
    Step::reply(status, body).headers(headers)
}

type Handler = dyn Fn(&Request) -> Step + Send + Sync;
/// Method, target and body bytes: what makes two requests "the same request" (a retry).
type RequestKey = (String, String, Vec<u8>);

struct Shared {
    script: Mutex<VecDeque<Step>>,
    handler: Option<Box<Handler>>,
    seen: Mutex<Vec<Request>>,
    counts: Mutex<HashMap<RequestKey, usize>>,
}

impl Shared {
    fn next(&self, req: &Request) -> Step {
        if let Some(step) = self.script.lock().unwrap().pop_front() {
            return step;
        }
        match &self.handler {
            Some(h) => h(req),
            None => Step::reply(418, r#"{"error":"fake: no scripted response left"}"#),
        }
    }
}

/// The server. Stops (and drops every open connection) when dropped.
pub struct Fake {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Fake {
    /// Answer the requests with `steps`, in arrival order; `418` after the last.
    pub fn script(steps: impl IntoIterator<Item = Step>) -> Fake {
        Fake::start(steps.into_iter().collect(), None)
    }

    /// Answer every request with `handler`.
    pub fn handler(handler: impl Fn(&Request) -> Step + Send + Sync + 'static) -> Fake {
        Fake::start(VecDeque::new(), Some(Box::new(handler)))
    }

    fn start(script: VecDeque<Step>, handler: Option<Box<Handler>>) -> Fake {
        let shared = Arc::new(Shared {
            script: Mutex::new(script),
            handler,
            seen: Mutex::new(Vec::new()),
            counts: Mutex::new(HashMap::new()),
        });
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let s = shared.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("fake server runtime");
            rt.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
                addr_tx
                    .send(listener.local_addr().expect("addr"))
                    .expect("send addr");
                let accept = async {
                    while let Ok((stream, _)) = listener.accept().await {
                        tokio::spawn(serve(stream, s.clone()));
                    }
                };
                tokio::select! {
                    _ = accept => {}
                    _ = stopped => {}
                }
            });
        });
        let addr = addr_rx.recv().expect("fake server started");
        Fake {
            addr,
            shared,
            _stop: stop,
        }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// The JSON bodies of every request so far, in arrival order.
    pub fn bodies(&self) -> Vec<Value> {
        self.requests().into_iter().map(|r| r.body).collect()
    }
}

/// Read one request; `None` when the client closed the connection or sent garbage.
async fn read_request(stream: &mut BufReader<TcpStream>, shared: &Shared) -> Option<Request> {
    let mut request_line = String::new();
    if stream.read_line(&mut request_line).await.ok()? == 0 {
        return None;
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if stream.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':')?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await.ok()?;
    let nth = {
        let mut counts = shared.counts.lock().unwrap();
        let n = counts
            .entry((method.clone(), target.clone(), body.clone()))
            .or_insert(0);
        *n += 1;
        *n - 1
    };
    let mut seen = shared.seen.lock().unwrap();
    let request = Request {
        method,
        target,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw: body,
        index: seen.len(),
        nth,
    };
    seen.push(request.clone());
    Some(request)
}

/// Serve requests on one (keep-alive) connection until the client closes it, a step hangs or
/// closes, or a reply says `connection: close`.
async fn serve(stream: TcpStream, shared: Arc<Shared>) {
    let mut stream = BufReader::new(stream);
    while let Some(request) = read_request(&mut stream, &shared).await {
        let step = shared.next(&request);
        match step.kind {
            Kind::Hang(d) => {
                tokio::time::sleep(d).await;
                return;
            }
            Kind::Close => return,
            Kind::Reply => {}
        }
        tokio::time::sleep(step.delay).await;
        let mut body = step.body;
        if step.echo {
            let mut text = String::from_utf8_lossy(&body).into_owned();
            for (k, v) in &request.headers {
                text = text.replace(&format!("{{{{{k}}}}}"), v);
            }
            body = text.into_bytes();
        }
        let mut head = format!("HTTP/1.1 {} {}\r\n", step.status, reason(step.status));
        if !step
            .headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            head.push_str("content-type: application/json\r\n");
        }
        head.push_str(&format!("content-length: {}\r\n", body.len()));
        let mut close = false;
        for (k, v) in &step.headers {
            close |= k.eq_ignore_ascii_case("connection") && v.eq_ignore_ascii_case("close");
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        let out = stream.get_mut();
        if out.write_all(head.as_bytes()).await.is_err()
            || out.write_all(&body).await.is_err()
            || out.flush().await.is_err()
        {
            return;
        }
        if close {
            let _ = out.shutdown().await;
            return;
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        302 => "Found",
        404 => "Not Found",
        418 => "I'm a teapot",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}
