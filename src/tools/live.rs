//! Live MCP server loader (rmcp). Placeholder until the rmcp loader lands on this branch.
use crate::error::{Error, Result};

#[derive(Debug, Clone, Default)]
pub struct LiveOptions {
    pub timeout: std::time::Duration,
    pub env: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
}

pub struct LiveCapture {
    pub tools: Vec<serde_json::Value>,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub protocol_version: String,
    pub pages: usize,
}

pub async fn list_tools_stdio(_cmd: &str, _opts: &LiveOptions) -> Result<LiveCapture> {
    Err(Error::Usage("live loader not built".into()))
}

pub async fn list_tools_http(_url: &str, _opts: &LiveOptions) -> Result<LiveCapture> {
    Err(Error::Usage("live loader not built".into()))
}
