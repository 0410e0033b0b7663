// Pure functions: poll scheduling, status categories, result trimming, input validation,
// the UI details, Retry-After parsing, error kinds, when a TOTP code is due and the package version.
// Unit tests: no Temporal server.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ETA_GRACE_MS, nextPollDelay, parseTime, type PollSchedule } from '../src/activities/poll-schedule';
import { PRIOR_WINDOW, TaskDurations, taskKind, type EndWindow } from '../src/activities/task-durations';
import { categorize, isFailedStatus, isUnknownStatus } from '../src/contract/status';
import { fitResults, jsonBytes, truncateString, truncateValue } from '../src/activities/trim';
import type { BrowserTaskInput } from '../src/contract/input';
import { taskInputProblems } from '../src/contract/input-problems';
import { codeProblems } from '../src/contract/one-time-codes';
import { renderDetails } from '../src/workflows/details';
import { redactSecrets as redact } from '../src/browserai/redact';
import type { BrowserTaskState } from '../src/contract/messages';
import { stopSentence } from '../src/cli/stop-sentence';
import type { TaskResultsSummary } from '../src/contract/activity-types';
import type { ResultEntry } from '../src/contract/browserai-types';
import { kindForStatus, parseRetryAfter } from '../src/browserai/errors';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../src/contract/version';
import { TotpKeys, totpMinRemainingMs } from '../src/activities/totp';
import { emptySlots, Slots, type Admission } from '../src/workflows/fleet/slots';
import type { SlotRequest } from '../src/contract/fleet-messages';

describe('nextPollDelay', () => {
  const schedule: PollSchedule = { initialIntervalMs: 1_000, maxIntervalMs: 30_000, targetDetectionMs: 1_000 };
  const now = 1_700_000_000_000;

  test('sleeps towards estimatedCompletion (plus the grace) and resets the interval', () => {
    const eta = now + 10_000;
    assert.deepEqual(nextPollDelay(schedule, 8_000, { estimatedCompletionMs: eta }, now), {
      delayMs: 10_000 + ETA_GRACE_MS,
      nextIntervalMs: 1_000,
    });
  });

  test('never sleeps longer than maxIntervalMs, however far the estimate', () => {
    const { delayMs } = nextPollDelay(schedule, 1_000, { estimatedCompletionMs: now + 3_600_000 }, now);
    assert.equal(delayMs, 30_000);
  });

  test('does not leave a remainder shorter than the initial interval before the estimate', () => {
    // 30.75 s to go with a 30 s cap: sleeping 30 s would leave 0.75 s, which the backoff
    // branch would poll a full second later; sleep straight to the estimate instead.
    const eta = now + 30_500;
    assert.equal(nextPollDelay(schedule, 1_000, { estimatedCompletionMs: eta }, now).delayMs, 30_500 + ETA_GRACE_MS);
    // Far enough out, the cap applies and what remains is at least two initial intervals.
    const far = now + 40_000;
    const first = nextPollDelay(schedule, 1_000, { estimatedCompletionMs: far }, now).delayMs;
    assert.equal(first, 30_000);
    assert.ok(far + ETA_GRACE_MS - (now + first) >= 2 * schedule.initialIntervalMs);
  });

  test('polls promptly just after the estimate, then backs off geometrically', () => {
    // Slept towards the ETA: the interval was reset, so the first poll after it comes quickly.
    const towards = nextPollDelay(schedule, 20_000, { estimatedCompletionMs: now + 5_000 }, now);
    const afterEta = now + 5_000 + ETA_GRACE_MS;
    const first = nextPollDelay(schedule, towards.nextIntervalMs, { estimatedCompletionMs: now + 5_000 }, afterEta);
    assert.equal(first.delayMs, 1_000);
    const second = nextPollDelay(
      schedule,
      first.nextIntervalMs,
      { estimatedCompletionMs: now + 5_000 },
      afterEta + first.delayMs,
    );
    assert.equal(second.delayMs, 1_500);
    assert.ok(second.nextIntervalMs > second.delayMs);
  });

  test('an estimate closer than the initial interval does not poll sooner than the initial interval', () => {
    assert.equal(nextPollDelay(schedule, 1_000, { estimatedCompletionMs: now + 100 }, now).delayMs, 1_000);
  });

  test('geometric backoff is capped at maxIntervalMs', () => {
    let interval = schedule.initialIntervalMs;
    const delays: number[] = [];
    for (let i = 0; i < 15; i++) {
      const next = nextPollDelay(schedule, interval, {}, now);
      delays.push(next.delayMs);
      interval = next.nextIntervalMs;
    }
    assert.deepEqual(delays.slice(0, 4), [1_000, 1_500, 2_250, 3_375]);
    for (let i = 1; i < delays.length; i++) assert.ok(delays[i]! >= delays[i - 1]!, 'never shrinks');
    assert.ok(delays.every((d) => d <= 30_000));
    assert.equal(delays.at(-1), 30_000);
    assert.equal(interval, 30_000);
  });

  test('without an estimate it is plain backoff, never below the initial interval', () => {
    assert.deepEqual(nextPollDelay(schedule, 4_000, {}, now), { delayMs: 4_000, nextIntervalMs: 6_000 });
    assert.deepEqual(nextPollDelay(schedule, 10, {}, now), { delayMs: 1_000, nextIntervalMs: 1_500 });
    assert.deepEqual(nextPollDelay(schedule, 50_000, {}, now), { delayMs: 30_000, nextIntervalMs: 30_000 });
  });

  test('parseTime reads ISO dates and ignores missing or unreadable ones', () => {
    assert.equal(parseTime('2025-01-01T00:00:00.000Z'), Date.UTC(2025, 0, 1));
    assert.equal(parseTime(null), undefined);
    assert.equal(parseTime(undefined), undefined);
    assert.equal(parseTime('soon'), undefined);
  });
});

describe('polling where tasks of a kind end', () => {
  const schedule: PollSchedule = { initialIntervalMs: 1_000, maxIntervalMs: 30_000, targetDetectionMs: 1_000 };
  const start = 1_700_000_000_000;
  /** The elapsed times (since the start) of the looks made until `untilMs`. */
  function looks(window: EndWindow, untilMs: number): number[] {
    const at: number[] = [];
    let interval = schedule.initialIntervalMs;
    for (let now = start; now - start < untilMs;) {
      const next = nextPollDelay(schedule, interval, { window: { ...window, startedAtMs: start } }, now);
      interval = next.nextIntervalMs;
      now += next.delayMs;
      at.push(now - start);
    }
    return at;
  }

  test('a learned window: one look halfway, then every 2 x targetDetectionMs inside it and half its width past it, then backoff', () => {
    const at = looks({ fromMs: 40_000, toMs: 50_000, basis: 'kind' }, 60_000);
    assert.deepEqual(at.slice(0, 2), [20_000, 40_000]);
    assert.deepEqual(at.slice(2, 7), [42_000, 44_000, 46_000, 48_000, 50_000]);
    assert.deepEqual(at.slice(7, 12), [52_000, 54_000, 56_000, 58_000, 61_000], 'half a width past it, then backoff');
  });

  test('a guessed window (the prior) starts from the initial interval, so a short task of a new kind is found soon', () => {
    const at = looks(PRIOR_WINDOW, 30_000);
    assert.deepEqual(at.slice(0, 3), [1_000, 3_000, 9_000]);
    assert.equal(at[3], PRIOR_WINDOW.fromMs);
    // A vague window is looked at more sparsely: at most about 20 looks across it.
    assert.equal(at[4]! - at[3]!, (PRIOR_WINDOW.toMs - PRIOR_WINDOW.fromMs) / 20);
  });

  test('a window narrower than the spacing is looked at on both edges', () => {
    const at = looks({ fromMs: 1_300, toMs: 1_600, basis: 'kind' }, 2_000);
    assert.deepEqual(at.slice(0, 3), [1_000, 1_300, 1_600]);
  });

  test('an estimate, when BrowserAI gives one, wins over the window', () => {
    const next = nextPollDelay(
      schedule,
      1_000,
      {
        estimatedCompletionMs: start + 5_000,
        window: { fromMs: 40_000, toMs: 50_000, basis: 'kind', startedAtMs: start },
      },
      start,
    );
    assert.equal(next.delayMs, 5_000 + ETA_GRACE_MS);
  });

  test('TaskDurations: the window covers the samples with a margin that shrinks with more samples; unknown kinds use the prior', () => {
    const durations = new TaskDurations();
    assert.deepEqual(durations.expectedEnd('k'), PRIOR_WINDOW);
    durations.record('k', { afterMs: 58_000, byMs: 60_000 });
    const one = durations.expectedEnd('k');
    assert.equal(one.basis, 'kind');
    assert.ok(
      one.fromMs < 59_000 && one.fromMs > 50_000 && one.toMs > 59_000 && one.toMs < 68_000,
      JSON.stringify(one),
    );
    durations.record('k', { afterMs: 61_000, byMs: 62_000 });
    durations.record('k', { afterMs: 59_000, byMs: 60_000 });
    const three = durations.expectedEnd('k');
    assert.ok(three.toMs - three.fromMs < one.toMs - one.fromMs + 1_000, 'a smaller margin with three samples');
    durations.record('k', { afterMs: 10, byMs: 5 });
    assert.equal(durations.size.samples, 3, 'an impossible sample is ignored');
  });

  test('TaskDurations: a worker that saw many short kinds polls a new kind as a fresh worker does', () => {
    const durations = new TaskDurations();
    for (let i = 0; i < 50; i++) durations.record(`short-${i}`, { afterMs: 1_000 + i * 150, byMs: 1_500 + i * 150 });
    assert.deepEqual(durations.expectedEnd('new'), PRIOR_WINDOW);
    assert.deepEqual(durations.expectedEnd(undefined), PRIOR_WINDOW, 'nor after an input');
  });

  test("TaskDurations: one 10-minute run among a 2-s kind's samples does not spread its window", () => {
    const durations = new TaskDurations();
    for (let i = 0; i < 7; i++) durations.record('k', { afterMs: 1_800 + i * 50, byMs: 2_200 + i * 50 });
    durations.record('k', { afterMs: 599_000, byMs: 601_000 });
    const window = durations.expectedEnd('k');
    assert.equal(window.basis, 'kind');
    assert.ok(window.toMs < 3_000, JSON.stringify(window));
  });

  test('TaskDurations keeps the last 8 samples of a kind and forgets the least recently used kinds', () => {
    const durations = new TaskDurations();
    for (let i = 0; i < 20; i++)
      durations.record('k', { afterMs: i < 12 ? 10_000 : 50_000, byMs: i < 12 ? 10_500 : 50_500 });
    assert.equal(durations.size.samples, 8);
    assert.ok(durations.expectedEnd('k').fromMs > 40_000, 'old samples are gone');
    for (let i = 0; i < 6_000; i++) durations.record(`kind-${i}`, { afterMs: 1_000, byMs: 2_000 });
    assert.equal(durations.size.kinds, 5_000);
    assert.equal(durations.expectedEnd('k').basis, 'prior', 'the least recently used kind was forgotten');
  });

  test('taskKind: the same type, project and instructions make one kind; any difference makes another', () => {
    const task = {
      type: 'crawler_automation' as const,
      project: 'p',
      instructions: [{ action: 'a' }, { action: 'b' }],
    };
    assert.equal(taskKind(task), taskKind({ ...task, instructions: [{ action: 'a' }, { action: 'b' }] }));
    assert.notEqual(taskKind(task), taskKind({ ...task, instructions: [{ action: 'ab' }] }));
    assert.notEqual(taskKind(task), taskKind({ ...task, project: 'q' }));
    assert.doesNotMatch(taskKind(task), /\ba\b.*\bb\b/, 'the instruction texts are not in it');
    const long = taskKind({ ...task, project: 'p'.repeat(10_000) });
    assert.ok(long.length < 60 && !long.includes('pp'), 'the project is hashed: a kind key stays small');
  });
});

describe('status categories', () => {
  test('ended statuses, case-insensitively', () => {
    for (const s of ['finalized', 'completed', 'failed', 'stopped', 'cancelled', 'canceled', 'error']) {
      for (const variant of [s, s.toUpperCase(), s[0]!.toUpperCase() + s.slice(1), ` ${s} `]) {
        assert.equal(categorize(variant), 'ended', variant);
        assert.equal(isUnknownStatus(variant), false, variant);
      }
    }
  });

  test('awaiting, case-insensitively', () => {
    for (const s of ['awaiting', 'AWAITING', 'Awaiting']) {
      assert.equal(categorize(s), 'awaiting');
      assert.equal(isUnknownStatus(s), false);
    }
  });

  test('known running statuses are running and not unknown', () => {
    for (const s of ['queued', 'running', 'RUNNING', 'pending', 'in_progress', 'processing', 'started']) {
      assert.equal(categorize(s), 'running', s);
      assert.equal(isUnknownStatus(s), false, s);
    }
  });

  test('unknown values count as running and are reported as unknown', () => {
    for (const s of ['thinking', 'THINKING', 'paused', '', undefined, null, 42]) {
      assert.equal(categorize(s), 'running', String(s));
      assert.equal(isUnknownStatus(s), true, String(s));
    }
  });

  test('isFailedStatus: failed and error only', () => {
    assert.equal(isFailedStatus('FAILED'), true);
    assert.equal(isFailedStatus('error'), true);
    assert.equal(isFailedStatus('stopped'), false);
    assert.equal(isFailedStatus('finalized'), false);
  });
});

const MARK_START = '…[truncated';

function withoutMark(text: string): string {
  const at = text.indexOf(MARK_START);
  return at < 0 ? text : text.slice(0, at);
}

describe('truncateString and fitResults', () => {
  test('truncateString leaves a string within budget untouched', () => {
    assert.equal(truncateString('héllo', 6), 'héllo');
    assert.equal(truncateString('', 0), '');
  });

  test('truncateString never splits a multi-byte character', () => {
    const text = 'aé€😀b𝄞ü日本語🙂z'; // 1-, 2-, 3- and 4-byte characters
    const bytes = Buffer.byteLength(text, 'utf8');
    for (let maxBytes = 0; maxBytes < bytes; maxBytes++) {
      const out = truncateString(text, maxBytes);
      assert.ok(out.includes(MARK_START), `marked at ${maxBytes}`);
      const kept = withoutMark(out);
      assert.ok(text.startsWith(kept), `a prefix at ${maxBytes}: ${JSON.stringify(kept)}`);
      assert.ok(!kept.includes('\uFFFD'), `no replacement character at ${maxBytes}`);
      assert.ok(!/[\uD800-\uDBFF]$/.test(kept), `no lone high surrogate at ${maxBytes}`);
      const keptBytes = Buffer.byteLength(kept, 'utf8');
      assert.ok(keptBytes <= maxBytes, `within budget at ${maxBytes}`);
      assert.ok(keptBytes > maxBytes - 4, `keeps as much as fits at ${maxBytes}`);
    }
  });

  test('truncateValue cuts strings and oversized values, keeps small ones', () => {
    const small = { a: 1 };
    assert.equal(truncateValue(small, 100), small);
    assert.equal(truncateValue(null, 1), null);
    const big = truncateValue({ text: 'x'.repeat(1000) }, 100);
    assert.equal(typeof big, 'string');
    assert.ok(Buffer.byteLength(withoutMark(big as string)) <= 100);
  });

  test('fitResults returns results within budget untouched, without a report', () => {
    const results: ResultEntry[] = [{ model_output: 'ok', result: 'done', state: 'done', history_index: 0 }];
    const out = fitResults(results, 10_000);
    assert.equal(out.results, results);
    assert.equal(out.trimmed, undefined);
  });

  test('fitResults truncates fields to fit the budget, never splitting characters, and reports what it cut', () => {
    const results: ResultEntry[] = [
      { model_output: 'Step 1 ok', result: 'small', state: 'done', history_index: 0 },
      {
        model_output: 'Step 2 ok',
        result: '日本語😀é'.repeat(20_000),
        state: 'done',
        history_index: 1,
        metadata: { big: 'x'.repeat(50_000) },
      },
    ];
    const maxBytes = 16 * 1024;
    const { results: kept, trimmed } = fitResults(results, maxBytes);
    assert.ok(jsonBytes(kept) <= maxBytes, `kept ${jsonBytes(kept)} bytes`);
    assert.ok(trimmed);
    assert.equal(trimmed.originalBytes, jsonBytes(results));
    assert.equal(trimmed.keptBytes, jsonBytes(kept));
    assert.equal(trimmed.droppedEntries, 0);
    assert.equal(kept.length, 2);
    // The untouched fields are kept as they were; the two large ones are cut.
    assert.deepEqual(kept[0], results[0]);
    assert.equal(kept[1]!.model_output, 'Step 2 ok');
    assert.equal(trimmed.truncatedFields, 2);
    const cut = kept[1]!.result as string;
    assert.ok(cut.includes(MARK_START));
    assert.ok(results[1]!.result!.startsWith(withoutMark(cut)));
    assert.ok(!cut.includes('\uFFFD'));
    assert.match(trimmed.note, /2 field\(s\) truncated, 0 oldest entries dropped/);
  });

  test('fitResults drops the oldest entries when truncating fields is not enough', () => {
    const results: ResultEntry[] = Array.from({ length: 40 }, (_, i) => ({
      model_output: `Step ${i} `.padEnd(400, '.'),
      result: `Result ${i} `.padEnd(400, '.'),
      state: 'done',
      history_index: i,
    }));
    const maxBytes = 4 * 1024;
    const { results: kept, trimmed } = fitResults(results, maxBytes);
    assert.ok(jsonBytes(kept) <= maxBytes);
    assert.ok(trimmed);
    assert.ok(kept.length > 0 && kept.length < results.length);
    assert.equal(trimmed.droppedEntries, results.length - kept.length);
    // The newest entries survive, in order.
    assert.deepEqual(
      kept.map((e) => e.history_index),
      results.slice(results.length - kept.length).map((e) => e.history_index),
    );
    assert.equal(trimmed.keptBytes, jsonBytes(kept));
    const plural = trimmed.droppedEntries === 1 ? 'entry' : 'entries';
    assert.ok(trimmed.note.includes(`${trimmed.droppedEntries} oldest ${plural} dropped`), trimmed.note);
  });

  test('fitResults gives up to an empty list when not even one entry fits', () => {
    const results: ResultEntry[] = [{ a: 'x'.repeat(3000), b: 'y'.repeat(3000), c: 'z'.repeat(3000) }];
    const { results: kept, trimmed } = fitResults(results, 300);
    assert.deepEqual(kept, []);
    assert.equal(trimmed?.droppedEntries, 1);
    assert.equal(trimmed?.keptBytes, 2);
  });
});

describe('taskInputProblems', () => {
  const valid: BrowserTaskInput = {
    instructions: [{ action: 'Open example.com and read the title' }],
    type: 'crawler_automation',
    project: 'default',
    geoLocation: { country: 'US' },
  };
  const withInput = (patch: Record<string, unknown>) => ({ ...valid, ...patch }) as BrowserTaskInput;

  function assertProblem(input: unknown, pattern: RegExp): void {
    const problems = taskInputProblems(input as BrowserTaskInput);
    assert.ok(problems.length > 0, `no problem found for ${JSON.stringify(input)}`);
    assert.ok(
      problems.some((p) => pattern.test(p)),
      `${JSON.stringify(problems)} should match ${pattern}`,
    );
  }

  test('a valid input has no problems', () => {
    assert.deepEqual(taskInputProblems(valid), []);
    assert.deepEqual(
      taskInputProblems({
        ...valid,
        type: 'script_automation',
        geoLocation: { country: 'GB', city: 'London' },
        timeoutMs: 60_000,
        awaitingInputTimeoutMs: 30_000,
        polling: { initialIntervalMs: 500, maxIntervalMs: 10_000, heartbeatTimeoutMs: 30_000, maxSpanMs: 60_000 },
        codeInstructionTemplate: 'Type {code} into the form',
        delivery: 'at-least-once',
        maxResultBytes: 64 * 1024,
        awaitable: true,
      }),
      [],
    );
  });

  test('not an object', () => {
    assertProblem(null, /input must be an object/);
    assertProblem('go', /input must be an object/);
  });

  test('empty or missing instructions', () => {
    assertProblem(withInput({ instructions: [] }), /^instructions must be a non-empty array/);
    assertProblem(withInput({ instructions: undefined }), /^instructions must be a non-empty array/);
    assertProblem(withInput({ instructions: 'Open example.com' }), /^instructions must be a non-empty array/);
    assertProblem(
      withInput({ instructions: [{ action: '   ' }] }),
      /instructions\[0\]\.action must be a non-empty string/,
    );
  });

  test('a non-string action', () => {
    assertProblem(withInput({ instructions: [{ action: 'ok' }, { action: 42 }] }), /instructions\[1\]\.action/);
    assertProblem(withInput({ instructions: [{}] }), /instructions\[0\]\.action/);
    assertProblem(withInput({ instructions: [null] }), /instructions\[0\]\.action/);
  });

  test('an unknown type', () => {
    assertProblem(
      withInput({ type: 'magic_automation' }),
      /^type must be one of crawler_automation, script_automation/,
    );
    assertProblem(withInput({ type: undefined }), /^type must be one of/);
  });

  test('an empty project', () => {
    for (const project of ['', '   ', undefined, 7])
      assertProblem(withInput({ project }), /^project must be a non-empty string/);
  });

  test('a country that is not an ISO 3166-1 alpha-2 code', () => {
    for (const country of ['UK', 'usa', 'USA', 'XX', '', 1]) {
      assertProblem(
        withInput({ geoLocation: { country } }),
        /^geoLocation\.country must be an ISO 3166-1 alpha-2 code/,
      );
    }
    assertProblem(withInput({ geoLocation: undefined }), /^geoLocation\.country/);
  });

  test('bad numbers', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '1000']) {
      assertProblem(withInput({ timeoutMs: bad }), /^timeoutMs must be a number of milliseconds from 1000 to/);
      assertProblem(
        withInput({ awaitingInputTimeoutMs: bad }),
        /^awaitingInputTimeoutMs must be a number of milliseconds from 1000 to/,
      );
      assertProblem(
        withInput({ stopRetryWindowMs: bad }),
        /^stopRetryWindowMs must be a number of milliseconds from 1000 to/,
      );
      for (const field of ['initialIntervalMs', 'maxIntervalMs', 'heartbeatTimeoutMs', 'maxSpanMs']) {
        assertProblem(
          withInput({ polling: { [field]: bad } }),
          new RegExp(`^polling\\.${field} must be a number of milliseconds from`),
        );
      }
    }
    // Sane bounds: polling faster than 4 requests a second, or a heartbeat timeout under a second, is refused.
    assertProblem(
      withInput({ polling: { initialIntervalMs: 249 } }),
      /^polling\.initialIntervalMs must be a number of milliseconds from 250 to 60000/,
    );
    assertProblem(
      withInput({ polling: { heartbeatTimeoutMs: 999 } }),
      /^polling\.heartbeatTimeoutMs must be a number of milliseconds from 1000/,
    );
    assertProblem(
      withInput({ polling: { inputSettleMs: 60_001 } }),
      /^polling\.inputSettleMs must be a number of milliseconds from 0 to 60000/,
    );
    assertProblem(
      withInput({ polling: { notFoundGraceMs: 999 } }),
      /^polling\.notFoundGraceMs must be a number of milliseconds from 1000 to 600000/,
    );
    assert.deepEqual(taskInputProblems({ ...withInput({}), resume: { executionId: 'exec_x' } } as never), [
      'resume is not an input: continue-as-new carries its own state',
    ]);
    assertProblem(
      withInput({ polling: { initialIntervalMs: 5_000, maxIntervalMs: 1_000 } }),
      /initialIntervalMs must not exceed/,
    );
    for (const bad of [0, 100, 1023, 10 * 1024 * 1024, Number.NaN]) {
      assertProblem(withInput({ maxResultBytes: bad }), /^maxResultBytes must be between 1024 and/);
    }
  });

  test('a code template without {code}, and an unknown delivery', () => {
    assertProblem(
      withInput({ codeInstructionTemplate: 'Enter the code' }),
      /codeInstructionTemplate must contain the placeholder \{code\}/,
    );
    assertProblem(withInput({ delivery: 'exactly-once' }), /^delivery must be/);
  });

  test('lists every problem, not just the first', () => {
    const problems = taskInputProblems({
      instructions: [],
      type: 'x',
      project: '',
      geoLocation: { country: 'UK' },
    } as unknown as BrowserTaskInput);
    assert.equal(problems.length, 4, JSON.stringify(problems));
  });
});

describe('codeProblems', () => {
  test('accepts up to 64 letters, digits or dashes, at least 4 of them letters or digits', () => {
    for (const code of ['123456', '0000', 'AB-12-cd', 'x'.repeat(64)]) assert.deepEqual(codeProblems(code), [], code);
    for (const code of ['0', '12', '1-2-3'])
      assert.match(codeProblems(code).join(), /^code must have at least 4 letters or digits/, code);
  });

  test('rejects anything else', () => {
    for (const code of [
      'x'.repeat(65),
      '12 34',
      '1234\n',
      '12;DROP',
      '１２３４',
      '١٢٣٤',
      123456,
      null,
      undefined,
      ['1234'],
    ]) {
      const problems = codeProblems(code);
      assert.equal(problems.length, 1, JSON.stringify(code));
      assert.match(problems[0]!, /^code must be 4 to 64 letters, digits or dashes/);
    }
  });
});

describe('renderDetails', () => {
  const CODE = '482913';
  const INSTRUCTION = 'Log in as alice@example.com with password hunter2';

  function state(patch: Partial<BrowserTaskState> = {}): BrowserTaskState {
    return {
      executionId: 'exec_abc',
      status: 'awaiting',
      awaitingInput: true,
      progress: {
        status: `Typing ${CODE}`,
        logs: ['Opening browser', `Entered code ${CODE}`, 'Waiting for a one-time code'],
      },
      started: '2025-01-01T00:00:00.000Z',
      estimatedCompletion: '2025-01-01T00:05:00.000Z',
      pendingInstructions: 2,
      error: `Code ${CODE} was rejected`,
      outcome: null,
      stopConfirmed: null,
      inputRequest: null,
      ...patch,
    };
  }

  const results: TaskResultsSummary = {
    executionId: 'exec_abc',
    status: 'awaiting',
    results: [
      {
        model_output: `Executed: ${INSTRUCTION}`,
        result: INSTRUCTION,
        metadata: { instruction: INSTRUCTION },
        screenshot_url: 'http://emulator/artifacts/exec_abc/0/screenshot',
        html_url: 'http://emulator/artifacts/exec_abc/0/html',
      },
    ],
  };

  test('masks one-time codes in progress, logs and error', () => {
    const text = renderDetails(state(), results, [CODE]);
    assert.ok(!text.includes(CODE), text);
    assert.ok(text.includes('Typing •••'));
    assert.ok(text.includes('Entered code •••'));
    assert.ok(text.includes('Error: Code ••• was rejected'));
  });

  test('never includes instruction texts, but shows status, pending count and artifact links', () => {
    const text = renderDetails(state(), results, [CODE]);
    assert.ok(!text.includes(INSTRUCTION), text);
    assert.ok(!text.includes('hunter2'), text);
    assert.ok(text.includes('exec_abc'));
    assert.ok(text.includes('**awaiting**'));
    assert.ok(text.includes('Instructions waiting to be sent: 2'));
    assert.ok(text.includes('[screenshot](http://emulator/artifacts/exec_abc/0/screenshot)'));
    assert.ok(text.includes('submitCode'));
  });

  test('shows only the latest three log lines, and handles a task not created yet', () => {
    const logs = ['one', 'two', 'three', 'four', 'five'];
    const text = renderDetails(state({ progress: { logs }, error: null, awaitingInput: false }), null, []);
    assert.ok(!text.includes('- one') && !text.includes('- two'));
    assert.ok(text.includes('- three') && text.includes('- five'));
    assert.ok(renderDetails(state({ executionId: null }), null, []).includes('not created yet'));
  });

  test('redact masks every occurrence of each secret and ignores empty ones', () => {
    assert.equal(redact('1234 and 1234', ['1234']), '••• and •••');
    assert.equal(redact('abc', ['']), 'abc');
  });

  test('redact masks a code whole when another code is its prefix', () => {
    // Two codes sent in one session, the first a prefix of the second (a retyped code).
    const text = redact('Entered 123456', ['1234', '123456']);
    assert.ok(!text.includes('56'), `leaks the tail of the longer code: ${text}`);
  });
});

describe('parseRetryAfter', () => {
  test('seconds', () => {
    assert.equal(parseRetryAfter('5'), 5_000);
    assert.equal(parseRetryAfter(' 120 '), 120_000);
    assert.equal(parseRetryAfter('0'), 0);
    assert.equal(parseRetryAfter('1.5'), 1_500);
  });

  test('HTTP-date, relative to now', () => {
    const now = Date.UTC(2025, 0, 1, 12, 0, 0);
    assert.equal(parseRetryAfter('Wed, 01 Jan 2025 12:00:30 GMT', now), 30_000);
    assert.equal(parseRetryAfter(new Date(now + 90_000).toUTCString(), now), 90_000);
    assert.equal(parseRetryAfter('Wed, 01 Jan 2025 11:59:00 GMT', now), 0, 'a past date means now');
  });

  test('absent or unreadable', () => {
    for (const value of [undefined, null, '', '   ', 'soon', 5, ['5']])
      assert.equal(parseRetryAfter(value), undefined, String(value));
  });
});

describe('kindForStatus', () => {
  const cases: Array<[number, string | undefined, string, string]> = [
    [400, 'Invalid input or project not found', '/tasks', 'InvalidInput'],
    [400, 'Invalid input', '/tasks/exec_1/instructions', 'InvalidInput'],
    [400, undefined, '/saved_tasks', 'InvalidInput'],
    [400, 'Invalid command or task ID', '/tasks/exec_1/command', 'InvalidCommand'],
    [401, 'Unauthorized', '/tasks', 'Unauthorized'],
    [403, undefined, '/tasks/exec_1', 'Unauthorized'],
    [400, 'Unauthorized', '/tasks', 'Unauthorized'],
    [404, 'Task not found', '/tasks/exec_1', 'TaskNotFound'],
    [404, 'Task not found', '/results/exec_1', 'TaskNotFound'],
    [400, 'Task not found', '/tasks/exec_1/instructions', 'TaskNotFound'],
    [404, 'Saved task not found', '/saved_tasks/name/x', 'SavedTaskNotFound'],
    [404, undefined, '/saved_tasks/name/x', 'SavedTaskNotFound'],
    [409, 'Task already ended', '/tasks/exec_1/command', 'Conflict'],
    [429, 'Too many requests', '/tasks', 'RateLimited'],
    [500, 'Internal server error', '/tasks', 'ServerError'],
    [502, undefined, '/tasks/exec_1', 'ServerError'],
    [503, 'Task not found', '/tasks/exec_1', 'ServerError'],
  ];
  for (const [status, message, path, kind] of cases) {
    test(`${status} ${JSON.stringify(message ?? null)} on ${path} -> ${kind}`, () => {
      assert.equal(kindForStatus(status, message, path), kind);
    });
  }
});

describe('when a TOTP code is due', () => {
  const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
  const keys = new TotpKeys({ fast: { secret, period: 10 }, usual: secret });

  test('the margin is 10 s, or half the step for periods under 20 s', () => {
    assert.equal(totpMinRemainingMs(30_000), 10_000);
    assert.equal(totpMinRemainingMs(20_000), 10_000);
    assert.equal(totpMinRemainingMs(10_000), 5_000);
  });

  test('a 10-s step: due with 5 s or more left; otherwise the wait runs to the next step', () => {
    const stepStart = 1_700_000_000_000; // a multiple of 10 s
    assert.deepEqual(keys.dueStep('fast', -1, stepStart + 5_000), { step: stepStart / 10_000 });
    assert.deepEqual(keys.dueStep('fast', -1, stepStart + 5_001), { waitMs: 4_999 + 5 });
    // A step already typed is never typed again, however much of it is left.
    assert.deepEqual(keys.dueStep('fast', stepStart / 10_000, stepStart + 1_000), { waitMs: 9_000 + 5 });
  });

  test('a 30-s step keeps the 10-s margin', () => {
    const stepStart = 1_700_000_010_000; // a multiple of 30 s
    assert.deepEqual(keys.dueStep('usual', -1, stepStart + 20_000), { step: stepStart / 30_000 });
    assert.deepEqual(keys.dueStep('usual', -1, stepStart + 20_001), { waitMs: 9_999 + 5 });
  });
});

describe('version', () => {
  test("PACKAGE_VERSION and PACKAGE_NAME equal package.json's", () => {
    const pkg = JSON.parse(readFileSync(resolve(__dirname, '../../package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    assert.equal(PACKAGE_VERSION, pkg.version);
    assert.equal(PACKAGE_NAME, pkg.name);
  });
});

describe('CLI stop sentence', () => {
  test('never says a task was stopped unless the stop was confirmed', () => {
    assert.match(stopSentence(true, 'exec_1'), /was stopped/);
    for (const unconfirmed of [false, null, undefined])
      assert.doesNotMatch(stopSentence(unconfirmed, 'exec_1'), /was stopped/);
    assert.match(stopSentence(false, 'exec_1'), /could NOT be confirmed: it may still be running/);
    assert.match(stopSentence(null, null), /No BrowserAI task had been created/);
  });
});

describe('fleet slots: who gets the next free one', () => {
  const limits = { maxRunning: 1, checkIntervalMs: 60_000 };
  const ask = (slots: Slots, id: string, extra: Partial<SlotRequest> = {}) =>
    slots.request(
      {
        holderId: id,
        workflowId: id,
        runId: 'r',
        project: 'p',
        priority: 3,
        fairnessKey: 'k',
        fairnessWeight: 1,
        ...extra,
      },
      0,
    );
  const position = (admission: Admission) => (admission.held ? 0 : admission.position);
  const drain = (slots: Slots, count: number): string[] =>
    Array.from({ length: count }, () => {
      const holder = slots.holders[0]!;
      slots.release(holder.holderId);
      slots.grant(0);
      return slots.holders[0]?.workflowId ?? '';
    });

  test('a weight of 2 takes two turns to the other key one', () => {
    const slots = new Slots(emptySlots(), limits);
    ask(slots, 'first');
    for (let i = 1; i <= 4; i++) ask(slots, `heavy-${i}`, { fairnessKey: 'heavy', fairnessWeight: 2 });
    for (let i = 1; i <= 2; i++) ask(slots, `light-${i}`, { fairnessKey: 'light' });
    assert.deepEqual(drain(slots, 6), ['heavy-1', 'light-1', 'heavy-2', 'heavy-3', 'light-2', 'heavy-4']);
  });

  test('a project at its own limit is passed over, not waited behind; a repeat ask changes nothing', () => {
    const slots = new Slots(emptySlots(), { maxRunning: 2, perProject: { shop: 1 }, checkIntervalMs: 60_000 });
    assert.deepEqual(ask(slots, 'shop-1', { project: 'shop' }).admission, { held: true });
    assert.deepEqual(position(ask(slots, 'shop-2', { project: 'shop' }).admission), 1);
    assert.deepEqual(ask(slots, 'crm-1', { project: 'crm' }).admission, { held: true });
    assert.deepEqual(ask(slots, 'crm-1', { project: 'crm' }).admission, { held: true });
    assert.equal(slots.held, 2);
    slots.release('shop-1');
    assert.deepEqual(
      slots.grant(0).map((h) => h.holderId),
      ['shop-2'],
    );
  });
});
