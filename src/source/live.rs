//! Live MCP server loader: asks a running server for its tools, over stdio or streamable HTTP.
//!
//! rmcp drives the protocol (handshake, request ids, HTTP sessions). The tools themselves are
//! taken from the raw JSON of each `tools/list` result, not from rmcp's typed `Tool`: that type
//! keeps only the fields it knows, and drift in a vendor key or a non-standard annotation is
//! drift all the same. A tap beside the transport keeps those raw results: `TapTransport`
//! notes the id of every outgoing `tools/list`, and the byte-level readers (`TapReader` for
//! stdio, `TapClient` for HTTP) hand the matching raw response to `RawTap`.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientJsonRpcMessage, ClientRequest, ErrorCode,
    Implementation, JsonRpcMessage, ListToolsRequest, PaginatedRequestParams, ProtocolVersion,
    RequestId, ServerJsonRpcMessage,
};
use rmcp::service::{ClientInitializeError, RoleClient, RunningService, ServiceError};
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio::process::{Child, ChildStderr};

use crate::http::secret::{Secret, redact_cut};
use crate::{Error, Result};

/// How to talk to a live server.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    /// Bound on the whole exchange: spawn or connect, handshake, every `tools/list` page.
    pub timeout: Duration,
    /// What a stdio server needs from our environment to start at all (PATH, HOME, the locale,
    /// proxies): passed as they are, not secret.
    pub base_env: Vec<(String, String)>,
    /// What `--server-env` gives the server. Values never appear in errors.
    pub env: Vec<(String, String)>,
    /// Start a stdio server with our whole environment plus `env` (`--server-inherit-env`):
    /// API keys and tokens then reach it.
    pub inherit_env: bool,
    /// Values masked in every message besides the env and header values (our own keys and
    /// tokens: a server that echoes its environment must not print them).
    pub secrets: Vec<Secret>,
    /// Sent with every HTTP request (e.g. `Authorization`). Values never appear in errors.
    pub headers: Vec<(String, String)>,
}

impl Default for LiveOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(60),
            base_env: Vec::new(),
            env: Vec::new(),
            inherit_env: false,
            secrets: Vec::new(),
            headers: Vec::new(),
        }
    }
}

/// What a live server said about its tools.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveCapture {
    /// Tool objects exactly as the server sent them, in order, across all pages.
    pub tools: Vec<Value>,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    /// Protocol version the server chose in its `initialize` answer.
    pub protocol_version: String,
    /// Number of `tools/list` requests it took to reach the end of the list.
    pub pages: usize,
}

/// Time a server gets to exit by itself once its stdin is closed, before it is killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// How much of a server's stderr is kept for error messages.
const STDERR_TAIL: usize = 4096;
/// Env and header values shorter than this are not scrubbed from messages: a port or a
/// flag like `1` is no secret, and scrubbing it would garble every message it occurs in.
const MIN_SECRET_LEN: usize = 6;

/// Spawns `cmd` (split with shell-word rules, run without a shell), lists its tools over
/// stdio, then closes its stdin and kills it (and its process group) if it lingers.
pub async fn list_tools_stdio(cmd: &str, opts: &LiveOptions) -> Result<LiveCapture> {
    let secrets = Secrets::new(opts, None);
    let shown = secrets.scrub(cmd);
    let argv = shell_words::split(cmd)
        .map_err(|e| Error::Usage(format!("cannot parse server command `{shown}`: {e}")))?;
    let Some((program, args)) = argv.split_first() else {
        return Err(Error::Usage("server command is empty".into()));
    };

    let mut command = tokio::process::Command::new(program);
    if !opts.inherit_env {
        // The PR's server runs with what it needs, not the job's keys and tokens.
        command
            .env_clear()
            .envs(opts.base_env.iter().map(|(k, v)| (k, v)));
    }
    command
        .args(args)
        .envs(opts.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own process group, so shutdown also reaches what the server spawned
    // (`npx`, `uv run` and shell wrappers leave the real server as a grandchild).
    #[cfg(unix)]
    command.process_group(0);
    // Spawned and registered under the registry's lock, which `sweep` holds while it scans:
    // a scan never sees this server before it is known as one.
    let mut child = {
        let mut running = servers();
        STARTED_ONE.store(true, std::sync::atomic::Ordering::SeqCst);
        let child = command.spawn().map_err(|e| {
            let program = secrets.scrub(program);
            match e.kind() {
                io::ErrorKind::NotFound => Error::Usage(format!(
                    "cannot start server command `{shown}`: `{program}`: command not found"
                )),
                _ => Error::Usage(format!("cannot start server command `{shown}`: {e}")),
            }
        })?;
        if let Some(pid) = child.id() {
            running.insert(pid);
        }
        child
    };
    let pgid = child.id();
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        unreachable!("all three pipes were requested");
    };
    let stderr = StderrTail::collect(stderr);

    let tap = Arc::new(RawTap::default());
    let transport = TapTransport {
        inner: AsyncRwTransport::new_client(TapReader::new(stdout, tap.clone()), stdin),
        tap: tap.clone(),
    };
    let phase = Mutex::new(Phase::Initialize);
    let outcome = tokio::time::timeout(opts.timeout, exchange(transport, &tap, &phase)).await;
    let outcome = match outcome {
        Ok(Ok((capture, mut client))) => {
            // Closing the service drops our end of stdin: a stdio server exits on EOF.
            let _ = client.close_with_timeout(SHUTDOWN_GRACE).await;
            Ok(capture)
        }
        Ok(Err(failure)) => Err(failure),
        Err(_elapsed) => Err(Failure::TimedOut),
    };
    // A server that missed the deadline gets no grace; one that failed may be exiting.
    let grace = if matches!(outcome, Err(Failure::TimedOut)) {
        Duration::ZERO
    } else {
        SHUTDOWN_GRACE
    };
    let status = finish(&mut child, pgid, grace).await;
    let failure = match outcome {
        Ok(capture) => return Ok(capture),
        Err(failure) => failure,
    };

    let phase = *phase.lock().expect("phase lock");
    if let Some(bytes) = tap.oversized() {
        return Err(Error::Usage(too_long(&shown, phase, bytes)));
    }
    let tail = secrets.scrub(&stderr.text().await);
    let stderr_note = if tail.is_empty() {
        " (stderr was empty)".to_string()
    } else {
        format!("; stderr:\n{tail}")
    };
    let message = match (failure, status) {
        (Failure::TimedOut, _) => format!(
            "server command `{shown}` did not answer {phase} within {}{stderr_note}",
            seconds(opts.timeout)
        ),
        (Failure::Broken(_), Some(status)) => format!(
            "server command `{shown}` {} before answering {phase}{stderr_note}",
            describe_exit(status)
        ),
        (Failure::Broken(detail), None) => format!(
            "server command `{shown}` failed during {phase}: {}{stderr_note}",
            secrets.scrub(&detail)
        ),
        (Failure::Answer(detail), _) => format!(
            "server command `{shown}` {}{stderr_note}",
            secrets.scrub(&detail)
        ),
    };
    Err(Error::Incomplete(message))
}

/// A stdio message line past rmcp's limit: named, not "did not answer". The tool list is
/// input we refuse (exit 2), like a file over the input cap.
fn too_long(shown: &str, phase: Phase, bytes: usize) -> String {
    format!(
        "server command `{shown}` sent a message line of over {mib} MiB during {phase} \
         (stopped reading at {bytes} bytes); a JSON-RPC message may be at most {mib} MiB",
        mib = DEFAULT_MAX_LINE_LENGTH / (1 << 20),
    )
}

/// Lists the tools of a streamable-HTTP server at `url` (e.g. `http://127.0.0.1:3001/mcp`).
/// `opts.env` does not apply; `opts.headers` go with every request.
pub async fn list_tools_http(url: &str, opts: &LiveOptions) -> Result<LiveCapture> {
    let mut parsed = reqwest::Url::parse(url)
        .map_err(|e| Error::Usage(format!("invalid server URL `{url}`: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::Usage(format!(
            "invalid server URL `{url}`: expected http:// or https://"
        )));
    }
    let password = parsed.password().map(str::to_string);
    let secrets = Secrets::new(opts, password.clone());
    if password.is_some() {
        let _ = parsed.set_password(Some("***"));
    }
    let shown = secrets.scrub(parsed.as_str());

    let mut headers = HeaderMap::new();
    for (name, value) in &opts.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| Error::Usage(format!("invalid HTTP header name `{name}`")))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| Error::Usage(format!("invalid value for HTTP header `{name}`")))?;
        value.set_sensitive(true);
        headers.append(name, value);
    }
    // No per-request timeout: responses may be SSE streams; `opts.timeout` bounds the exchange.
    let http = crate::http::client_with(None, headers)?;

    let tap = Arc::new(RawTap::default());
    let client = TapClient {
        http,
        tap: tap.clone(),
    };
    let transport = TapTransport {
        inner: StreamableHttpClientTransport::with_client(
            client,
            StreamableHttpClientTransportConfig::with_uri(url),
        ),
        tap: tap.clone(),
    };
    let phase = Mutex::new(Phase::Initialize);
    let outcome = tokio::time::timeout(opts.timeout, exchange(transport, &tap, &phase)).await;
    let failure = match outcome {
        Ok(Ok((capture, mut client))) => {
            // Ends the HTTP session (DELETE) so the server can free it; failure is harmless.
            let _ = client.close_with_timeout(SHUTDOWN_GRACE).await;
            return Ok(capture);
        }
        Ok(Err(failure)) => failure,
        Err(_elapsed) => Failure::TimedOut,
    };
    let phase = *phase.lock().expect("phase lock");
    let message = match failure {
        Failure::TimedOut => format!(
            "server at {shown} did not answer {phase} within {}",
            seconds(opts.timeout)
        ),
        Failure::Broken(detail) => format!(
            "server at {shown} failed during {phase}: {}",
            secrets.scrub(&detail)
        ),
        Failure::Answer(detail) => format!("server at {shown} {}", secrets.scrub(&detail)),
    };
    Err(Error::Incomplete(message))
}

/// Which request the exchange is waiting on; named in timeout and failure messages.
#[derive(Debug, Clone, Copy)]
enum Phase {
    Initialize,
    ListTools,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Initialize => "initialize",
            Phase::ListTools => "tools/list",
        })
    }
}

enum Failure {
    /// The caller's deadline passed first.
    TimedOut,
    /// The connection or the server broke down (for stdio, usually: the server exited).
    Broken(String),
    /// The server answered, but not with something usable; phrased to follow "server … ".
    Answer(String),
}

/// Handshake, then `tools/list` page by page, following `nextCursor` to the end.
/// Returns the still-open client so the caller decides how to shut the server down.
async fn exchange<T>(
    transport: TapTransport<T>,
    tap: &RawTap,
    phase: &Mutex<Phase>,
) -> Result<(LiveCapture, RunningService<RoleClient, ClientConfig>), Failure>
where
    T: Transport<RoleClient> + 'static,
{
    let client = client_info()
        .serve(transport)
        .await
        .map_err(|e| Failure::Broken(describe_init_error(&e)))?;
    *phase.lock().expect("phase lock") = Phase::ListTools;

    let info = client.peer_info();
    let implementation = info.as_ref().and_then(|i| i.server_info.as_ref());
    let declares_tools = info
        .as_ref()
        .is_some_and(|i| i.capabilities.tools.is_some());
    let mut capture = LiveCapture {
        tools: Vec::new(),
        server_name: implementation.map(|i| i.name.clone()),
        server_version: implementation.map(|i| i.version.clone()),
        protocol_version: info
            .as_ref()
            .map(|i| i.protocol_version.to_string())
            .unwrap_or_default(),
        pages: 0,
    };

    let mut cursor: Option<String> = None;
    let mut seen_cursors = HashSet::new();
    loop {
        let request = ListToolsRequest {
            method: Default::default(),
            params: cursor
                .clone()
                .map(|c| PaginatedRequestParams::default().with_cursor(Some(c))),
            extensions: Default::default(),
        };
        // `send_request`, not `list_tools`: the latter answers from rmcp's response cache.
        match client
            .send_request(ClientRequest::ListToolsRequest(request))
            .await
        {
            Ok(_typed) => {}
            // A server without the tools capability may refuse the method: it has no tools.
            Err(ServiceError::McpError(e))
                if e.code == ErrorCode::METHOD_NOT_FOUND && !declares_tools && cursor.is_none() =>
            {
                return Ok((capture, client));
            }
            Err(ServiceError::McpError(e)) => {
                return Err(Failure::Answer(format!(
                    "answered tools/list with error {}: {}",
                    e.code.0, e.message
                )));
            }
            Err(ServiceError::TransportSend(e)) => {
                return Err(Failure::Broken(format!(
                    "send tools/list request: {}",
                    transport_error(&*e.error)
                )));
            }
            Err(e) => return Err(Failure::Broken(error_chain(&e))),
        }
        capture.pages += 1;
        let raw = tap.take().ok_or_else(|| {
            Failure::Answer("answered tools/list, but the raw result was not captured".into())
        })?;
        let Some(Value::Array(tools)) = raw.get("tools") else {
            return Err(Failure::Answer(
                "answered tools/list without a `tools` array".into(),
            ));
        };
        if let Some(i) = tools.iter().position(|t| !t.is_object()) {
            return Err(Failure::Answer(format!(
                "answered tools/list with a non-object at tools[{}] (page {})",
                capture.tools.len() + i,
                capture.pages
            )));
        }
        capture.tools.extend(tools.iter().cloned());
        cursor = match raw.get("nextCursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) if c.is_empty() => None,
            Some(Value::String(c)) => Some(c.clone()),
            Some(other) => {
                return Err(Failure::Answer(format!(
                    "answered tools/list with a non-string nextCursor {other}"
                )));
            }
        };
        match &cursor {
            None => return Ok((capture, client)),
            Some(c) if !seen_cursors.insert(c.clone()) => {
                return Err(Failure::Answer(format!(
                    "repeated tools/list cursor {c:?} after {} pages; the listing never ends",
                    capture.pages
                )));
            }
            Some(_) => {}
        }
    }
}

fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("driftgate", env!("CARGO_PKG_VERSION")),
    )
    // rmcp defaults to its newest version, which has no `initialize` handshake; we
    // perform the handshake, so offer the newest version that still has one.
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// Raw `result` of each `tools/list` response, matched to its request by JSON-RPC id.
#[derive(Default)]
struct RawTap(Mutex<TapState>);

#[derive(Default)]
struct TapState {
    /// Ids (as compact JSON, so `1` and `"1"` differ) of `tools/list` requests in flight.
    awaiting: HashSet<String>,
    results: Vec<Value>,
    /// Bytes of the first line that outgrew rmcp's line limit (rmcp would drop it unread).
    oversized: Option<usize>,
}

impl RawTap {
    fn expect(&self, id: &RequestId) {
        let key = serde_json::to_string(id).expect("a request id serializes");
        self.0.lock().expect("tap lock").awaiting.insert(key);
    }

    fn is_waiting(&self) -> bool {
        !self.0.lock().expect("tap lock").awaiting.is_empty()
    }

    fn observe_bytes(&self, bytes: &[u8]) {
        // Most traffic (handshake, notifications) is of no interest; skip parsing it.
        if self.is_waiting() {
            if let Ok(message) = serde_json::from_slice::<Value>(bytes) {
                self.observe(&message);
            }
        }
    }

    fn observe(&self, message: &Value) {
        // JSON-RPC batches (allowed by older protocol versions) are looked into one by one.
        if let Value::Array(batch) = message {
            batch.iter().for_each(|m| self.observe(m));
            return;
        }
        let (Some(id), Some(result)) = (message.get("id"), message.get("result")) else {
            return;
        };
        let mut state = self.0.lock().expect("tap lock");
        if state.awaiting.remove(&id.to_string()) {
            state.results.push(result.clone());
        }
    }

    fn note_oversized(&self, bytes: usize) {
        let mut state = self.0.lock().expect("tap lock");
        state.oversized.get_or_insert(bytes);
    }

    fn oversized(&self) -> Option<usize> {
        self.0.lock().expect("tap lock").oversized
    }

    /// The newest captured result; requests are sent one at a time, so it is the answer
    /// to the request that just completed.
    fn take(&self) -> Option<Value> {
        let mut state = self.0.lock().expect("tap lock");
        let latest = state.results.pop();
        state.results.clear();
        latest
    }
}

/// Wraps a transport to tell the tap which outgoing requests are `tools/list`.
struct TapTransport<T> {
    inner: T,
    tap: Arc<RawTap>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for TapTransport<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = &item {
            if matches!(request.request, ClientRequest::ListToolsRequest(_)) {
                // Registered before sending, so the answer cannot arrive unexpected.
                self.tap.expect(&request.id);
            }
        }
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// Passes a stdio server's stdout through unchanged, showing each complete line to the tap.
struct TapReader<R> {
    inner: R,
    tap: Arc<RawTap>,
    line: Vec<u8>,
    /// The current line outgrew rmcp's limit; rmcp drops it, so the tap ignores it too.
    oversized: bool,
}

impl<R> TapReader<R> {
    fn new(inner: R, tap: Arc<RawTap>) -> Self {
        Self {
            inner,
            tap,
            line: Vec::new(),
            oversized: false,
        }
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(end) = bytes.iter().position(|b| *b == b'\n') {
            self.push(&bytes[..end]);
            if !self.oversized {
                self.tap.observe_bytes(&self.line);
            }
            self.line.clear();
            self.oversized = false;
            bytes = &bytes[end + 1..];
        }
        self.push(bytes);
    }

    fn push(&mut self, part: &[u8]) {
        if self.oversized {
            return;
        }
        if self.line.len() + part.len() > DEFAULT_MAX_LINE_LENGTH {
            self.oversized = true;
            self.tap.note_oversized(self.line.len() + part.len());
            self.line = Vec::new();
        } else {
            self.line.extend_from_slice(part);
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for TapReader<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let start = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        this.feed(&buf.filled()[start..]);
        if this.tap.oversized().is_some() {
            buf.set_filled(start);
            // rmcp would skip the line and wait for an answer that never comes; end the
            // stream instead, so the caller can say what happened (see `too_long`).
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "message line over the JSON-RPC line limit",
            )));
        }
        Poll::Ready(Ok(()))
    }
}

/// An HTTP client for rmcp's streamable-HTTP transport that shows raw `tools/list`
/// responses to the tap. Everything else is left to rmcp's own reqwest client.
#[derive(Clone)]
struct TapClient {
    http: reqwest::Client,
    tap: Arc<RawTap>,
}

type HttpResult<T> = std::result::Result<T, StreamableHttpError<reqwest::Error>>;

impl TapClient {
    /// POSTs a `tools/list` request the way rmcp's reqwest client does, but keeps the raw
    /// response: rmcp's client parses JSON bodies straight into typed messages.
    async fn post_tools_list(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let mut request = self
            .http
            .post(uri.as_ref())
            .header(
                ACCEPT,
                format!("{JSON_MIME_TYPE}, {EVENT_STREAM_MIME_TYPE}"),
            )
            .json(&message);
        if let Some(token) = auth_token {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom_headers {
            request = request.header(name, value);
        }
        if let Some(session_id) = &session_id {
            request = request.header(HEADER_SESSION_ID, session_id.as_ref());
        }
        let response = request.send().await?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        let new_session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.to_ascii_lowercase());
        let is = |mime: &str| {
            content_type
                .as_deref()
                .is_some_and(|ct| ct.starts_with(mime))
        };

        if !status.is_success() {
            let body = read_body(response, limits.max_error_response_size, true).await?;
            // A JSON-RPC error is the server's answer; rmcp reports those as such.
            if let Ok(error @ JsonRpcMessage::Error(_)) =
                serde_json::from_slice::<ServerJsonRpcMessage>(&body)
            {
                return Ok(StreamableHttpPostResponse::Json(error, new_session));
            }
            return Err(StreamableHttpError::UnexpectedServerResponse(
                format!("HTTP {status}: {}", String::from_utf8_lossy(&body).trim()).into(),
            ));
        }
        if is(EVENT_STREAM_MIME_TYPE) {
            // This stream carries only the answer to one request, so a cap on its whole
            // size stands in for rmcp's per-event cap.
            let cap = limits.max_json_response_size.max(limits.max_sse_event_size);
            let mut received = 0usize;
            let bytes = response.bytes_stream().map(move |chunk| {
                let chunk = chunk.map_err(io::Error::other)?;
                received += chunk.len();
                if received > cap {
                    return Err(io::Error::other(format!(
                        "tools/list event stream exceeded {cap} bytes"
                    )));
                }
                Ok(chunk)
            });
            let tap = self.tap.clone();
            let events = sse_stream::SseStream::from_bytes_stream(bytes)
                .inspect(move |event| {
                    if let Ok(sse_stream::Sse {
                        data: Some(data), ..
                    }) = event
                    {
                        tap.observe_bytes(data.as_bytes());
                    }
                })
                .boxed();
            return Ok(StreamableHttpPostResponse::Sse(events, new_session));
        }
        if is(JSON_MIME_TYPE) {
            let body = read_body(response, limits.max_json_response_size, false).await?;
            self.tap.observe_bytes(&body);
            let message = serde_json::from_slice::<ServerJsonRpcMessage>(&body)?;
            return Ok(StreamableHttpPostResponse::Json(message, new_session));
        }
        Err(StreamableHttpError::UnexpectedContentType(content_type))
    }
}

/// Reads a response body up to `limit` bytes: beyond it, either the prefix (`truncate`,
/// for diagnostics) or an error.
async fn read_body(
    response: reqwest::Response,
    limit: usize,
    truncate: bool,
) -> HttpResult<Vec<u8>> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk?;
        if body.len() + chunk.len() > limit {
            if truncate {
                body.extend_from_slice(&chunk[..limit - body.len()]);
                break;
            }
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn is_tools_list(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::ListToolsRequest(_)))
}

impl StreamableHttpClient for TapClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        if is_tools_list(&message) {
            return self
                .post_tools_list(uri, message, session_id, auth_token, custom_headers, limits)
                .await;
        }
        self.http
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_token,
                custom_headers,
                limits,
            )
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        self.http
            .delete_session(uri, session_id, auth_token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<
        futures::stream::BoxStream<
            'static,
            std::result::Result<sse_stream::Sse, sse_stream::Error>,
        >,
    > {
        self.http
            .get_stream(uri, session_id, last_event_id, auth_token, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<
        futures::stream::BoxStream<
            'static,
            std::result::Result<sse_stream::Sse, sse_stream::Error>,
        >,
    > {
        self.http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_token,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

/// The last `STDERR_TAIL` bytes a server wrote to stderr, read as it goes so the
/// server never blocks on a full pipe.
struct StderrTail {
    buffer: Arc<Mutex<Vec<u8>>>,
    reader: tokio::task::JoinHandle<()>,
}

impl StderrTail {
    fn collect(mut stderr: ChildStderr) -> Self {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let sink = buffer.clone();
        let reader = tokio::spawn(async move {
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut chunk).await {
                let mut kept = sink.lock().expect("stderr lock");
                kept.extend_from_slice(&chunk[..n]);
                // Trim in bulk, not per chunk, to keep copying linear.
                if kept.len() > 2 * STDERR_TAIL {
                    let excess = kept.len() - STDERR_TAIL;
                    kept.drain(..excess);
                }
            }
        });
        Self { buffer, reader }
    }

    /// The kept tail as text, starting at a line boundary when it was cut.
    async fn text(self) -> String {
        // Normally done once the server exits; a grandchild may keep the pipe open.
        let _ = tokio::time::timeout(Duration::from_millis(500), self.reader).await;
        let kept = self.buffer.lock().expect("stderr lock");
        let cut = kept.len().saturating_sub(STDERR_TAIL);
        let mut tail = &kept[cut..];
        if cut > 0 {
            if let Some(newline) = tail.iter().position(|b| *b == b'\n') {
                tail = &tail[newline + 1..];
            }
        }
        let text = String::from_utf8_lossy(tail).trim_end().to_string();
        if cut > 0 {
            format!("…\n{text}")
        } else {
            text
        }
    }
}

/// Waits up to `grace` for the server to exit, then kills whatever is left of its
/// process group. Returns the exit status if it exited by itself.
async fn finish(child: &mut Child, pgid: Option<u32>, grace: Duration) -> Option<ExitStatus> {
    // `timeout` polls the wait first, so an exited server is reaped even with zero grace.
    let status = match tokio::time::timeout(grace, child.wait()).await {
        Ok(Ok(status)) => Some(status),
        _ => None,
    };
    #[cfg(unix)]
    if let Some(pgid) = pgid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) takes no pointers. The group was created for this server; its id
        // cannot be reused while any member lives, and ESRCH (none left) is harmless.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pgid;
    if status.is_none() {
        let _ = child.kill().await;
    }
    if let Some(pid) = pgid {
        servers().remove(&pid);
    }
    // What escaped the group (a `setsid` daemon) was reparented to us: killed too.
    for _ in 0..10 {
        if sweep() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    status
}

/// The server processes running now (each the leader of its own group).
/// Whether this process ever started a server: only then can orphans of a server's tree be ours
/// to sweep (a command that started none skips reading every process's `/proc` entry at exit).
static STARTED_ONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn servers() -> std::sync::MutexGuard<'static, std::collections::BTreeSet<u32>> {
    static SERVERS: std::sync::Mutex<std::collections::BTreeSet<u32>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    SERVERS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kill every process a finished server left behind: our children (we are a child subreaper,
/// see `app::process`, so orphans of the server's tree are reparented to us) outside our own
/// process group that are no running server, with their groups; reaped so none stays a zombie.
/// Returns how many were found. Linux only: elsewhere the server's group kill is all there is.
pub fn sweep() -> usize {
    if !STARTED_ONE.load(std::sync::atomic::Ordering::SeqCst) {
        return 0;
    }
    #[cfg(target_os = "linux")]
    {
        let me = std::process::id();
        // SAFETY: getpgrp takes no arguments.
        let own_group = unsafe { libc::getpgrp() };
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return 0;
        };
        // Held for the whole scan: no server is spawned half-registered meanwhile.
        let running = servers();
        let mut found = 0;
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // `pid (comm) state ppid pgrp …`: comm may hold spaces and parentheses.
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            let (Some(ppid), Some(pgrp)) = (
                f.get(1).and_then(|x| x.parse::<u32>().ok()),
                f.get(2).and_then(|x| x.parse::<i32>().ok()),
            ) else {
                continue;
            };
            if ppid != me || pgrp == own_group || running.contains(&(pgrp as u32)) {
                continue;
            }
            found += 1;
            // SAFETY: kill and waitpid take no pointers but the null status; the pid is our
            // child, so it cannot be reused before we reap it.
            unsafe {
                libc::kill(-pgrp, libc::SIGKILL);
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
            }
        }
        found
    }
    #[cfg(not(target_os = "linux"))]
    0
}

fn describe_exit(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    format!("exited ({status})")
}

fn seconds(duration: Duration) -> String {
    format!("{}s", duration.as_secs_f64())
}

/// rmcp's transport errors name the transport by its full generic type; say only what failed.
fn describe_init_error(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, context } => {
            format!("{context}: {}", transport_error(&*error.error))
        }
        other => error_chain(other),
    }
}

/// rmcp's HTTP `Client` error variant does not expose the reqwest error as its source,
/// which hides the useful part ("connection refused"); reach into it.
fn transport_error(error: &(dyn std::error::Error + Send + Sync + 'static)) -> String {
    match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(inner)) => error_chain(inner),
        _ => error_chain(error),
    }
}

/// An error with its causes, skipping causes whose text the message already includes.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text
}

/// Values that must never reach an error message: env values, header values (and the
/// token of an `Authorization: Scheme token` header), the password of the server URL.
struct Secrets(Vec<Secret>);

impl Secrets {
    fn new(opts: &LiveOptions, url_password: Option<String>) -> Self {
        let mut values: Vec<String> = opts.env.iter().map(|(_, v)| v.clone()).collect();
        for (_, value) in &opts.headers {
            values.push(value.clone());
            if let Some((_scheme, token)) = value.split_once(' ') {
                values.push(token.trim().to_string());
            }
        }
        values.extend(url_password);
        values.retain(|v| v.len() >= MIN_SECRET_LEN);
        let mut all: Vec<Secret> = values.into_iter().map(Secret::new).collect();
        all.extend(opts.secrets.iter().cloned());
        Self(all)
    }

    fn scrub(&self, text: &str) -> String {
        redact_cut(text, &self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sweep (another server finishing) running while a server starts must never take the new
    /// server for something left behind: CI saw a `sleep 30` server killed a second after its
    /// start when the scan's snapshot of the running servers predated it.
    #[cfg(target_os = "linux")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_sweep_never_kills_a_server_that_is_starting() {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let sweeper = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    sweep();
                }
            })
        };
        let opts = LiveOptions {
            timeout: Duration::from_millis(400),
            base_env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            ..LiveOptions::default()
        };
        for _ in 0..8 {
            let e = list_tools_stdio("sleep 30", &opts)
                .await
                .unwrap_err()
                .to_string();
            assert!(e.contains("did not answer initialize within"), "{e}");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        sweeper.join().unwrap();
    }

    fn tap_expecting(id: u32) -> Arc<RawTap> {
        let tap = Arc::new(RawTap::default());
        tap.expect(&RequestId::Number(id.into()));
        tap
    }

    #[test]
    fn tap_reader_keeps_the_raw_result_split_across_reads() {
        let tap = tap_expecting(7);
        let mut reader = TapReader::new(tokio::io::empty(), tap.clone());
        let line = br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a","x-v":1}]}}"#;
        reader.feed(&line[..10]);
        assert!(
            tap.take().is_none(),
            "nothing is captured before the newline"
        );
        reader.feed(&line[10..]);
        reader.feed(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n");
        let raw = tap.take().expect("captured");
        assert_eq!(raw["tools"][0]["x-v"], 1);
    }

    #[tokio::test]
    async fn tap_reader_stops_at_a_line_over_the_limit() {
        let tap = tap_expecting(1);
        let mut big = vec![b'x'; DEFAULT_MAX_LINE_LENGTH + 10];
        big.push(b'\n');
        let mut reader = TapReader::new(&big[..], tap.clone());
        let mut sink = Vec::new();
        let err = reader.read_to_end(&mut sink).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(tap.oversized().unwrap() > DEFAULT_MAX_LINE_LENGTH);
        assert!(tap.take().is_none());
    }

    #[test]
    fn tap_ignores_answers_to_other_requests() {
        let tap = tap_expecting(2);
        tap.observe(&serde_json::json!({"id": 1, "result": {"tools": []}}));
        tap.observe(&serde_json::json!({"id": "2", "result": {"tools": []}}));
        assert!(
            tap.take().is_none(),
            "id 1 and string id \"2\" are not request 2"
        );
        tap.observe(&serde_json::json!([{"id": 2, "result": {"tools": [1]}}]));
        assert_eq!(tap.take(), Some(serde_json::json!({"tools": [1]})));
    }

    #[test]
    fn secrets_are_scrubbed_longest_first_and_short_values_kept() {
        let opts = LiveOptions {
            env: vec![
                ("A".into(), "hunter22".into()),
                ("DEBUG".into(), "1".into()),
            ],
            headers: vec![("Authorization".into(), "Bearer tok-123456".into())],
            ..LiveOptions::default()
        };
        let secrets = Secrets::new(&opts, None);
        assert_eq!(
            secrets.scrub("pw hunter22 sent Bearer tok-123456 then tok-123456, exit 1"),
            "pw *** sent *** then ***, exit 1"
        );
    }

    /// An error whose message may or may not already include its cause, as in the wild.
    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[test]
    fn error_chain_appends_only_causes_not_yet_said() {
        let refused = Layer("connection refused", None);
        let sending = Layer(
            "error sending request: connection refused",
            Some(Box::new(refused)),
        );
        let outer = Layer("transport error", Some(Box::new(sending)));
        assert_eq!(
            error_chain(&outer),
            "transport error: error sending request: connection refused"
        );
    }
}
