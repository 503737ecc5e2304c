//! Loaders: one `--tools`-style argument, sniffed from content.
//!
//! A spec is a file path, `REV:PATH` (the file at a git revision, read with `git show`, no
//! checkout), or a live server (`--server-cmd` / `--server-url`). A file may hold a `tools/list`
//! result, a full JSON-RPC response, a bare array of tools, or a driftgate lockfile.

pub mod live;
pub mod tree;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use self::live::LiveOptions;
use crate::error::{Error, Result};
use crate::tools::{ToolSet, json_kind, lock};

/// Where a tool set comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    File(PathBuf),
    GitRev { rev: String, path: String },
    ServerCmd(String),
    ServerUrl(String),
}

impl Spec {
    /// A path that exists is a file; otherwise `REV:PATH` is a git revision. Checking the file
    /// first keeps paths that contain a colon usable.
    pub fn parse(s: &str) -> Spec {
        if Path::new(s).exists() {
            return Spec::File(PathBuf::from(s));
        }
        match s.split_once(':') {
            Some((rev, path)) if !rev.is_empty() && !path.is_empty() && !s.contains("://") => {
                Spec::GitRev {
                    rev: rev.to_string(),
                    path: path.to_string(),
                }
            }
            _ => Spec::File(PathBuf::from(s)),
        }
    }

    pub fn label(&self) -> String {
        match self {
            Spec::File(p) => p.display().to_string(),
            Spec::GitRev { rev, path } => format!("{rev}:{path}"),
            Spec::ServerCmd(c) => format!("server-cmd `{c}`"),
            Spec::ServerUrl(u) => format!("server-url {u}"),
        }
    }
}

/// What shape a tools document had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    ToolsList,
    JsonRpc,
    BareArray,
    Lockfile,
    Live,
}

/// A loaded tool set plus what is needed to point back into its source.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub tools: ToolSet,
    pub label: String,
    pub format: Format,
    /// Path of the file in the repository (for annotations); `None` for live servers.
    pub file: Option<String>,
    /// Raw text, kept to find the line of each tool.
    pub text: Option<String>,
}

impl Loaded {
    /// 1-based line of the tool's `"name": "…"` entry in the source text, if it can be found.
    pub fn line_of(&self, tool: &str) -> Option<usize> {
        line_of_tool(self.text.as_deref()?, tool)
    }

    /// The line of every tool's `"name"`, found in one pass over the text.
    pub fn lines(&self) -> std::collections::HashMap<String, usize> {
        self.text.as_deref().map(name_lines).unwrap_or_default()
    }
}

pub async fn load(spec: &Spec, live_opts: &LiveOptions) -> Result<Loaded> {
    match spec {
        Spec::File(path) => {
            let text = crate::fs::read_text(path, crate::fs::MAX_INPUT_BYTES, live_opts.timeout)
                .map_err(|e| Error::io(path, e))?;
            let label = path.display().to_string();
            let (tools, format) = parse_text(&text, &label)?;
            Ok(Loaded {
                tools,
                format,
                file: Some(label.clone()),
                label,
                text: Some(text),
            })
        }
        Spec::GitRev { rev, path } => {
            let text = git_show(rev, path)?;
            let label = format!("{rev}:{path}");
            let (tools, format) = parse_text(&text, &label)?;
            Ok(Loaded {
                tools,
                format,
                file: Some(path.trim_start_matches("./").to_string()),
                label,
                text: Some(text),
            })
        }
        Spec::ServerCmd(cmd) => {
            let cap = live::list_tools_stdio(cmd, live_opts).await?;
            from_capture(spec.label(), cap)
        }
        Spec::ServerUrl(url) => {
            let cap = live::list_tools_http(url, live_opts).await?;
            from_capture(spec.label(), cap)
        }
    }
}

pub fn from_capture(label: String, cap: live::LiveCapture) -> Result<Loaded> {
    let tools = ToolSet::from_array(&cap.tools, &label, "/tools")?;
    Ok(Loaded {
        tools,
        label,
        format: Format::Live,
        file: None,
        text: None,
    })
}

/// Read `PATH` at `REV` without touching the work tree. `PATH` is relative to the current
/// directory, like the plain file argument at head; an absolute path inside the current directory
/// is made relative to it (git does not accept absolute paths after `REV:`).
pub fn git_show(rev: &str, path: &str) -> Result<String> {
    // A revision starting with `-` would reach git as an option (`--output=…`).
    if rev.is_empty() || rev.starts_with('-') {
        return Err(Error::Usage(format!(
            "{rev}:{path}: {rev:?} is not a revision (a revision cannot be empty or start with `-`)"
        )));
    }
    let under_cwd = || {
        let cwd = std::env::current_dir().ok()?;
        let rel = Path::new(path).strip_prefix(&cwd).ok()?;
        Some(format!("./{}", rel.display()))
    };
    let rel = if path.starts_with('/') {
        under_cwd().unwrap_or_else(|| path.to_string())
    } else if path.starts_with("./") || path.starts_with("../") {
        path.to_string()
    } else {
        format!("./{path}")
    };
    let out = Command::new("git")
        .args(["show", "--end-of-options", &format!("{rev}:{rel}")])
        .output()
        .map_err(|e| Error::Usage(format!("{rev}:{path}: cannot run git: {e}")))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(Error::Usage(format!(
            "{rev}:{path}: git show failed: {}",
            stderr.trim()
        )));
    }
    String::from_utf8(out.stdout)
        .map_err(|_| Error::Usage(format!("{rev}:{path}: file is not valid UTF-8")))
}

/// Parse a tools document of any accepted shape.
pub fn parse_text(text: &str, source: &str) -> Result<(ToolSet, Format)> {
    // Editors on Windows like to start UTF-8 files with a byte-order mark; JSON has none.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Value = serde_json::from_str(text).map_err(|e| Error::Json {
        source_name: source.to_string(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })?;
    parse_value(&value, source)
}

/// serde_json appends " at line L column C"; we print the position ourselves.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

pub fn parse_value(value: &Value, source: &str) -> Result<(ToolSet, Format)> {
    match value {
        Value::Array(items) => Ok((ToolSet::from_array(items, source, "")?, Format::BareArray)),
        Value::Object(obj) if obj.contains_key(lock::MARKER) => {
            Ok((lock::parse(value, source)?, Format::Lockfile))
        }
        Value::Object(obj) if obj.contains_key("tools") => match &obj["tools"] {
            Value::Array(items) => Ok((
                ToolSet::from_array(items, source, "/tools")?,
                Format::ToolsList,
            )),
            v => Err(Error::shape(
                source,
                "/tools",
                crate::tools::expected("array of tools", v),
            )),
        },
        Value::Object(obj) if obj.contains_key("result") || obj.contains_key("error") => {
            if let Some(err) = obj.get("error") {
                let msg = err.get("message").and_then(Value::as_str).unwrap_or("");
                return Err(Error::shape(
                    source,
                    "/error",
                    format!("expected a result, found a JSON-RPC error: {msg}"),
                ));
            }
            match obj["result"].get("tools") {
                Some(Value::Array(items)) => Ok((
                    ToolSet::from_array(items, source, "/result/tools")?,
                    Format::JsonRpc,
                )),
                Some(v) => Err(Error::shape(
                    source,
                    "/result/tools",
                    crate::tools::expected("array of tools", v),
                )),
                None => Err(Error::shape(
                    source,
                    "/result",
                    "expected a tools/list result with a \"tools\" array",
                )),
            }
        }
        Value::Object(obj) => {
            let keys: Vec<&str> = obj.keys().map(String::as_str).take(8).collect();
            Err(Error::shape(
                source,
                "",
                format!(
                    "expected a tools/list result {{\"tools\":[…]}}, a JSON-RPC response \
                     {{\"result\":{{\"tools\":[…]}}}}, a bare array of tools or a driftgate \
                     lockfile; found an object with keys [{}]",
                    keys.join(", ")
                ),
            ))
        }
        v => Err(Error::shape(
            source,
            "",
            format!(
                "expected a tools/list result, a JSON-RPC response, an array of tools or a \
                 driftgate lockfile, found {}",
                json_kind(v)
            ),
        )),
    }
}

/// 1-based line of the first `"name": "<tool>"` in `text`.
pub fn line_of_tool(text: &str, tool: &str) -> Option<usize> {
    name_lines(text).get(tool).copied()
}

/// The 1-based line of the first `"name": "<string>"` for every name in `text`, in one pass (a
/// lookup per tool rescanning the file made large tool sets quadratic).
pub fn name_lines(text: &str) -> std::collections::HashMap<String, usize> {
    let mut out = std::collections::HashMap::new();
    let (mut offset, mut line, mut counted) = (0, 1, 0);
    while let Some(i) = text[offset..].find("\"name\"") {
        let start = offset + i + "\"name\"".len();
        offset = start;
        let rest = text[start..].trim_start();
        let Some(rest) = rest.strip_prefix(':') else {
            continue;
        };
        let value = rest.trim_start();
        if !value.starts_with('"') {
            continue;
        }
        // The string literal: up to the first quote not escaped by an odd run of backslashes.
        let bytes = value.as_bytes();
        let mut end = None;
        let mut k = 1;
        while k < bytes.len() {
            match bytes[k] {
                b'\\' => k += 2,
                b'"' => {
                    end = Some(k);
                    break;
                }
                _ => k += 1,
            }
        }
        let Some(end) = end else { break };
        let Ok(name) = serde_json::from_str::<String>(&value[..=end]) else {
            continue;
        };
        line += text[counted..start].matches('\n').count();
        counted = start;
        out.entry(name).or_insert(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_every_shape() {
        let t = r#"{"name":"a","inputSchema":{"type":"object"}}"#;
        for (doc, fmt) in [
            (format!("[{t}]"), Format::BareArray),
            (format!(r#"{{"tools":[{t}]}}"#), Format::ToolsList),
            (
                format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{t}]}}}}"#),
                Format::JsonRpc,
            ),
        ] {
            let (set, f) = parse_text(&doc, "x.json").unwrap();
            assert_eq!((set.len(), f), (1, fmt));
        }
        let one = parse_text(&format!("[{t}]"), "x.json").unwrap().0;
        let locked = lock::render(&one, &lock::LockMeta::default());
        let (set, f) = parse_text(&locked, "lock.json").unwrap();
        assert_eq!((set.names(), f), (vec!["a"], Format::Lockfile));
    }

    #[test]
    fn a_byte_order_mark_is_read_past() {
        let (set, f) = parse_text("\u{feff}[{\"name\":\"a\"}]", "bom.json").unwrap();
        assert_eq!((set.names(), f), (vec!["a"], Format::BareArray));
    }

    #[test]
    fn a_revision_is_never_an_option() {
        for rev in ["--output=/tmp/x", "-p", ""] {
            let e = git_show(rev, "tools.json").unwrap_err().to_string();
            assert!(e.contains("is not a revision"), "{e}");
        }
    }

    #[test]
    fn errors_say_where_and_what() {
        let e = parse_text(
            r#"{"tools":[{"name":"a"},{"name":"b","inputSchema":"s"}]}"#,
            "tools.json",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "tools.json: /tools/1/inputSchema: expected object, found string"
        );
        let e = parse_text("{\n  \"tools\": [,]\n}", "t.json").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.json: invalid JSON at line 2, column 13: expected value"
        );
        let e = parse_text(r#"{"foo":1}"#, "t.json").unwrap_err();
        assert!(
            e.to_string().contains("found an object with keys [foo]"),
            "{e}"
        );
        let e = parse_text(
            r#"{"jsonrpc":"2.0","error":{"code":-1,"message":"nope"}}"#,
            "t.json",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("/error: expected a result, found a JSON-RPC error: nope")
        );
        let e = parse_text("42", "t.json").unwrap_err();
        assert!(e.to_string().ends_with("found number"));
    }

    #[test]
    fn spec_parsing() {
        assert_eq!(
            Spec::parse("origin/main:tools.json"),
            Spec::GitRev {
                rev: "origin/main".into(),
                path: "tools.json".into()
            }
        );
        assert_eq!(
            Spec::parse("Cargo.toml"),
            Spec::File(PathBuf::from("Cargo.toml"))
        );
        assert_eq!(
            Spec::parse("http://x/mcp"),
            Spec::File(PathBuf::from("http://x/mcp"))
        );
    }

    #[test]
    fn finds_tool_lines() {
        let text = "[\n {\n  \"name\": \"a\"\n },\n {\"name\" : \"b\\\"q\"}\n]";
        assert_eq!(line_of_tool(text, "a"), Some(3));
        assert_eq!(line_of_tool(text, "b\"q"), Some(5));
        assert_eq!(line_of_tool(text, "c"), None);
    }
}
#[cfg(test)]
mod name_lines_tests {
    use super::*;

    #[test]
    fn one_pass_finds_every_first_name_line() {
        let text = "[\n {\"name\": \"a\",\n  \"inputSchema\": {\"properties\": {\"name\": {\"type\": \"string\"}}}},\n {\"name\" : \"b\\\"q\"},\n {\"name\":\"a\"}\n]";
        let lines = name_lines(text);
        assert_eq!(lines.get("a"), Some(&2));
        assert_eq!(lines.get("b\"q"), Some(&4));
        assert_eq!(lines.len(), 2);
        assert_eq!(line_of_tool(text, "b\"q"), Some(4));
        assert_eq!(line_of_tool(text, "missing"), None);
    }
}
