// The one fence of outside callers (src/contract/callers.ts), driven by TASK_INPUT_FIELDS' `caller`
// column: every field the table gives an allowance is refused by default and opened by it, each
// refusal names the surface's setting; prefixes end at a separator; a caller's tasks take its key.
// Unit tests: no Temporal server.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CALLER_ALLOWANCE_KINDS,
  callerProblems,
  DEFAULT_CALLER_MAX_TIMEOUT_MS,
  inCallersLane,
  underPrefix,
  type CallerAllowances,
  type CallerSurface,
} from '../src/contract/callers';
import { TASK_INPUT_FIELDS, type BrowserTaskInput, type CallerAllowanceName } from '../src/contract/input';

const surface: CallerSurface = {
  to: 'to testers',
  allowWith: Object.fromEntries(Object.keys(CALLER_ALLOWANCE_KINDS).map((name) => [name, `<${name}>`])) as Record<
    CallerAllowanceName,
    string
  >,
};

/** A value of the field that asks for what its allowance guards, and the allowance that opens it. */
const asked: Record<string, [unknown, CallerAllowances]> = {
  timeoutMs: [DEFAULT_CALLER_MAX_TIMEOUT_MS + 1, { maxTimeoutMs: DEFAULT_CALLER_MAX_TIMEOUT_MS + 1 }],
  awaitingInputTimeoutMs: [DEFAULT_CALLER_MAX_TIMEOUT_MS + 1, { maxTimeoutMs: 7 * 86_400_000 }],
  stopRetryWindowMs: [DEFAULT_CALLER_MAX_TIMEOUT_MS + 1, { maxTimeoutMs: 7 * 86_400_000 }],
  codeInstructionTemplate: ['Type {code}', { codeInstructionTemplates: true }],
  notifyWorkflowId: ['partner-7', { notifyWorkflowIdPrefixes: ['partner'] }],
  totpSecretName: ['PORTAL', { totpSecretNames: ['PORTAL'] }],
  webhook: [{ events: ['task.finished'] }, { webhooks: true }],
  priority: [1, { priority: true }],
  fairnessKey: ['mine', { priority: true }],
  fairnessWeight: [1000, { priority: true }],
};

describe('the fence of outside callers', () => {
  test('each field the table closes is refused by default, naming the setting, and opened by its allowance', () => {
    const closed = Object.entries(TASK_INPUT_FIELDS).filter(([, spec]) => spec.caller !== true);
    assert.deepEqual(
      closed.map(([field]) => field).sort(),
      Object.keys(asked).sort(),
      'a value for every closed field',
    );
    for (const [field, spec] of closed) {
      const [value, allowance] = asked[field]!;
      const problems = callerProblems({ [field]: value }, {}, surface);
      assert.equal(problems.length, 1, field);
      assert.match(
        problems[0]!,
        new RegExp(`^task\\.${field} .*to testers \\(the operator can allow it with <${spec.caller}>\\)$`),
      );
      assert.deepEqual(callerProblems({ [field]: value }, allowance, surface), [], `${field} with its allowance`);
    }
  });

  test('the open fields and an object field’s own fields', () => {
    const open: Partial<BrowserTaskInput> = {
      instructions: [{ action: 'x' }],
      project: 'any',
      timeoutMs: DEFAULT_CALLER_MAX_TIMEOUT_MS,
      notifyWorkflowId: false,
      activityOptions: { retry: { initialIntervalMs: 500 } },
      webhook: undefined,
    };
    assert.deepEqual(callerProblems(open, {}, surface), []);
    assert.deepEqual(
      callerProblems(
        { activityOptions: { taskQueue: 'q', priorityKey: 1, fairnessWeight: 2 }, webhook: { reference: 'r:1' } },
        { webhooks: true, activityTaskQueues: ['q'] },
        surface,
        'overrides.',
      ),
      [
        'overrides.activityOptions.priorityKey is not allowed to testers (the operator can allow it with <priority>)',
        'overrides.activityOptions.fairnessWeight is not allowed to testers (the operator can allow it with <priority>)',
        'overrides.webhook.reference "r:1" is not allowed to testers (the operator can allow it with <webhookReferencePrefixes>)',
      ],
    );
  });

  test('a code recipient only by its address, in its normal form', () => {
    const task = { codeRecipient: { address: '+1 (555) 010-0100', senders: ['GitHub'] } };
    assert.deepEqual(callerProblems(task, {}, surface), [
      'task.codeRecipient.address "+1 (555) 010-0100" is not allowed to testers (the operator can allow it with <codeRecipients>)',
    ]);
    assert.deepEqual(callerProblems(task, { codeRecipients: ['+15550100100'] }, surface), []);
    assert.equal(callerProblems(task, { codeRecipients: ['+15550100101'] }, surface).length, 1);
  });

  test('a prefix ends at a separator', () => {
    assert.ok(underPrefix('nexus:team-a:1', 'nexus:team-a'));
    assert.ok(underPrefix('nexus:team-a', 'nexus:team-a'));
    assert.ok(underPrefix('nexus:team-a2:1', 'nexus:'), 'a prefix that ends in one covers what follows');
    assert.ok(!underPrefix('nexus:team-a2:1', 'nexus:team-a'));
    assert.ok(!underPrefix('billing-7', ''));
  });

  test("a caller's tasks take its key, unless it may choose and did", () => {
    const task = { project: 'operators-project', fairnessKey: undefined as string | undefined };
    assert.equal(inCallersLane(task, {}, 'nexus:team-a').fairnessKey, 'nexus:team-a');
    assert.equal(inCallersLane({ ...task, fairnessKey: 'x' }, {}, 'nexus:team-a').fairnessKey, 'nexus:team-a');
    assert.equal(inCallersLane({ ...task, fairnessKey: 'x' }, { priority: true }, 'c').fairnessKey, 'x');
    assert.equal(inCallersLane(task, { priority: true }, 'c').fairnessKey, 'c');
    assert.equal(inCallersLane(task, {}, 'é'.repeat(40)).fairnessKey, 'é'.repeat(32), "cut to Temporal's 64 bytes");
  });
});
