// A planned workflow and its twin for the MCP client's loop: the same instruction text, the same
// duration (registered for each side's project), the same start moment and the same code.
import { DEFAULTS } from '../../src/contract/input';
import type { McpTask } from '../mcp-client';
import { taskInput, type TaskShape } from '../plan';
import type { BenchStack } from '../stack';
import type { PlannedCode, PlannedTask } from '../task';

/** The MCP client's tasks run in their own project, so the duration book keeps the two sides apart. */
export const MCP_PROJECT = 'bench-mcp';

export interface TwinSpec {
  workflowId: string;
  group: string;
  shape: TaskShape;
  startAtMs: number;
  code?: PlannedCode;
}

export function plannedTwins(stack: BenchStack, specs: TwinSpec[]): { ours: PlannedTask[]; mcp: McpTask[] } {
  const ours = specs.map((spec): PlannedTask => ({
    workflowId: spec.workflowId,
    group: spec.group,
    input: taskInput(stack, spec.shape),
    startAtMs: spec.startAtMs,
    durationMs: spec.shape.durationMs,
    code: spec.code,
  }));
  const mcp = specs.map((spec): McpTask => ({
    key: spec.workflowId,
    startAtMs: spec.startAtMs,
    input: taskInput(stack, { ...spec.shape, project: MCP_PROJECT }),
    code: spec.code?.value,
    codeInstruction: DEFAULTS.codeInstructionTemplate,
  }));
  return { ours, mcp };
}
