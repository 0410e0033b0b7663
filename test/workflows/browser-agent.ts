// Test-only workflow for test/agent-tool.test.ts: an AI agent written as a Temporal workflow, the
// way docs/mcp.md shows, whose model (a scripted activity: deterministic, no LLM) calls the
// `browserTask` tool once and answers from its output.
import { proxyActivities } from '@temporalio/workflow';
import { browserTaskTool, type AgentToolDefinition } from '../../src/workflows/agent-tool';
import type { BrowserTaskInput } from '../../src/contract/input';

/** One message of the conversation, as the model activity takes it. */
export interface AgentMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
}

/** What the model answers: a tool call or the final text. */
export type ModelTurn = { toolCall: { name: string; arguments: unknown } } | { text: string };

export interface ModelActivities {
  model(messages: AgentMessage[], tools: AgentToolDefinition[]): Promise<ModelTurn>;
}

const { model } = proxyActivities<ModelActivities>({ startToCloseTimeout: '10 seconds' });

export interface BrowserAgentInput {
  question: string;
  /** The queue of the workers that run browserTask. */
  browserTaskQueue: string;
  task: Omit<BrowserTaskInput, 'instructions'>;
}

export async function browserAgent(input: BrowserAgentInput): Promise<{ answer: string; messages: AgentMessage[] }> {
  const browser = browserTaskTool({ task: input.task, taskQueue: input.browserTaskQueue });
  const messages: AgentMessage[] = [{ role: 'user', content: input.question }];
  for (let turn = 0; turn < 5; turn++) {
    const reply = await model(messages, [browser.definition]);
    if ('text' in reply) return { answer: reply.text, messages };
    if (reply.toolCall.name !== browser.definition.name) throw new Error(`unknown tool ${reply.toolCall.name}`);
    messages.push({ role: 'assistant', content: JSON.stringify(reply.toolCall) });
    messages.push({ role: 'tool', content: JSON.stringify(await browser.execute(reply.toolCall.arguments)) });
  }
  throw new Error('the model did not answer in 5 turns');
}
