/**
 * `browserai-temporal/agent-tool`: a browser for an AI agent written as a Temporal workflow: the
 * agent's model calls the `browserTask` tool, which runs the task as a child `browserTask`
 * workflow (src/workflows/agent-tool.ts says how). Workflow-safe: import it in workflow code only.
 *
 * @module browserai-temporal/agent-tool
 */
export {
  browserTaskTool,
  type AgentToolDefinition,
  type BrowserTaskTool,
  type BrowserTaskToolArgs,
  type BrowserTaskToolOptions,
  type BrowserTaskToolResult,
} from './workflows/agent-tool';
