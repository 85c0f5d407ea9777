"""The MCP server: episodes, transports (stdio, streamable HTTP) and the control API."""
