/**
 * `browserai-temporal/mcp`: the MCP server of BrowserAI tasks, for stdio (`serveMcpStdio`) or
 * Streamable HTTP (`startMcpHttpServer`), both protocol generations (2025-11-25 and 2026-07-28),
 * and the tools' contract. The CLI's `browserai-temporal mcp` runs it; docs/mcp.md shows clients
 * how to connect.
 *
 * @module browserai-temporal/mcp
 */
export { createMcpServer, type McpServerOptions } from './server';
export { startMcpHttpServer, MCP_PATH, type McpHttpOptions, type McpHttpServer } from './http';
export { serveMcpStdio, type McpStdioServer } from './stdio';
export { DEFAULT_ID_PREFIX, type McpFenceOptions } from './fence';
export { TASKS_EXTENSION, type DetailedMcpTask, type McpTaskState } from './mcp-tasks';
export type * from './contract';
