//! MCP server.
