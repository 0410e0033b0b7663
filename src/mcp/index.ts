// `browserai-temporal/mcp`: the MCP server of BrowserAI tasks, for stdio (`createMcpServer` and the
// SDK's StdioServerTransport) or Streamable HTTP (`startMcpHttpServer`), and the tools' contract.
// The CLI's `browserai-temporal mcp` runs it; docs/mcp.md shows clients how to connect.
export { createMcpServer, type McpServerOptions } from './server';
export { startMcpHttpServer, MCP_PATH, type McpHttpOptions, type McpHttpServer } from './http';
export { DEFAULT_ID_PREFIX, type McpFenceOptions } from './fence';
export type * from './contract';
