//! Live MCP server loader (rmcp).
