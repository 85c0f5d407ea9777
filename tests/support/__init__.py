"""Helpers shared by the tests: MCP and HTTP clients, servers and upstreams they start, the fake
LLM provider, the throwaway fault app, the browser driver, the Node.js runtime, and the npm
clients (``ts_client``, ``inspector``, ``mcp_conformance``, ``fs_server``). Not tests themselves."""
