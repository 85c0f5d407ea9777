// Connects the official TypeScript MCP SDK client to an mcpgym server, lists the tools and
// calls one. Usage:
//   node client.mjs stdio <command> [args...]
//   node client.mjs http <mcp_url>
// Prints one JSON line: {"tools": N, "names": [...], "wallet": {...}, "error": {...}}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, ...rest] = process.argv.slice(2);
const transport =
  mode === "stdio"
    ? new StdioClientTransport({ command: target, args: rest, stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: "mcpgym-ts-test", version: "0.0.0" });
await client.connect(transport);
const listed = await client.listTools();
const wallet = await client.callTool({ name: "system_get_wallet_balance", arguments: {} });
const bad = await client.callTool({ name: "shop_get_item", arguments: { item_id: "item-does-not-exist" } });
console.log(
  JSON.stringify({
    tools: listed.tools.length,
    names: listed.tools.map((t) => t.name),
    readOnly: listed.tools.find((t) => t.name === "system_get_wallet_balance")?.annotations?.readOnlyHint,
    wallet: wallet.structuredContent,
    walletIsError: wallet.isError ?? false,
    error: JSON.parse(bad.content[0].text),
    errorIsError: bad.isError,
  }),
);
await client.close();
