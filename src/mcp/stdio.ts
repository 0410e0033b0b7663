// The MCP server over stdio, for both protocol generations: the SDK's `serveStdio` decides a
// connection's generation from its first message and keeps one instance for it. stdout carries
// the protocol only: diagnostics go to the `log` option (the CLI: stderr).
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { mcpServing, type McpServerOptions } from './server';

/** A stdio server: `closed` settles when the client closes stdin. */
export interface McpStdioServer {
  /** Settles when the client closes stdin. */
  closed: Promise<void>;
  /** Closes the connection and its server instance. */
  close(): Promise<void>;
}

/** Serves MCP on this process's stdin and stdout. */
export function serveMcpStdio(options: McpServerOptions): McpStdioServer {
  const { factory, log } = mcpServing(options);
  const closed = new Promise<void>((resolve) => process.stdin.once('end', resolve));
  const handle = serveStdio(factory, { onerror: (err) => log(`mcp stdio: ${err.message}`) });
  return { closed, close: () => handle.close() };
}
