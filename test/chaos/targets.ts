// The targets of a chaos run, each checked against the facts. A row lists every workflow or task
// that misses it, by name, so a miss can be looked up rather than inferred from a count.
import type { ChaosFacts, WorkflowFacts } from './facts';

export interface TargetRow {
  measure: string;
  target: string;
  measured: string;
  /** undefined: reported, no pass/fail. */
  met: boolean | undefined;
  misses: string[];
}

const AMBIGUOUS = 'failed: AmbiguousRequest';

/** "0: a · 1: b · >1: c" over a list of counts. */
function spread(counts: number[]): string {
  const zero = counts.filter((n) => n === 0).length;
  const one = counts.filter((n) => n === 1).length;
  return `0: ${zero} · 1: ${one} · >1: ${counts.length - zero - one} (of ${counts.length})`;
}

/** One line per workflow: what it is, how it ended and what BrowserAI holds for it. */
export function describeWorkflow(w: WorkflowFacts, extra = ''): string {
  const tasks =
    w.tasks.length === 0
      ? 'no task'
      : w.tasks
          .map((t) => `${t.executionId} ${t.status}${t.stopCommands ? ` (${t.stopCommands} stop)` : ''}`)
          .join(', ');
  const problems = w.problems.length > 0 ? `; ${w.problems.join('; ')}` : '';
  return `\`${w.workflowId}\` (${w.kind}, ${w.outcome}${w.message ? `: ${shorten(w.message, 200)}` : ''}; ${tasks}${extra}${problems})`;
}

/**
 * TOTP tasks across the deploy: each refuses its first code, so the worker waits up to a step for
 * the next one, and the deploy (and the kills) meet some of those waits. A wait must never turn
 * into a stopped task: a TOTP workflow that failed AmbiguousRequest on typing its code although
 * none of its appends was in doubt (left without a whole answer, or a kill or Temporal restart
 * right after one) was stopped for a code never sent. (An ambiguous create is the create row's
 * business.) A code typed twice is a miss too.
 */
function totpRow(started: WorkflowFacts[], disruptions: Disruptions): TargetRow {
  const totp = started.filter((w) => w.kind === 'totp');
  const { outage } = disruptions;
  const inDoubt = (w: WorkflowFacts) =>
    w.tasks.some(
      (t) =>
        t.appendsWithoutAnswer > 0 ||
        t.appendTimes.some(
          (at) =>
            disruptions.strikesAt.some((strike) => strike >= at && strike - at <= DOUBT_WINDOW_MS) ||
            (outage !== undefined && at >= outage.from - DOUBT_WINDOW_MS && at <= outage.to),
        ),
    );
  const ambiguousCode = totp.filter((w) => w.outcome === AMBIGUOUS && w.message?.startsWith(TYPING_TOTP));
  const neverSent = ambiguousCode.filter((w) => !inDoubt(w));
  const typedTwice = totp.filter((w) => w.tasks.some((t) => new Set(t.codesReceived).size < t.codesReceived.length));
  const { deploy } = disruptions;
  const metDeploy = deploy
    ? totp.filter((w) =>
        w.tasks.some((t) => {
          const [refused, next] = t.codeChecks;
          return refused !== undefined && refused.at < deploy.endedAt && (next?.at ?? Infinity) > deploy.startedAt;
        }),
      ).length
    : 0;
  return {
    measure: 'TOTP tasks stopped for a code never sent (the wait for a time step met by the deploy and the kills)',
    target: '0 (and no TOTP code typed twice)',
    measured:
      `${neverSent.length} of ${totp.length} TOTP workflows; waits that met the deploy: ${metDeploy}; ` +
      `AmbiguousRequest on a code with a send in doubt: ${ambiguousCode.length - neverSent.length}; codes typed twice: ${typedTwice.length}`,
    met: neverSent.length === 0 && typedTwice.length === 0,
    misses: [
      ...neverSent.map((w) => describeWorkflow(w, '; no send in doubt')),
      ...typedTwice.map((w) => describeWorkflow(w, '; a TOTP code typed twice')),
    ],
  };
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Worker kills and Temporal restarts that struck right after a create or an append reached BrowserAI. */
export interface StrikesAtRequests {
  workerKills: number;
  temporalRestarts: number;
}

/** What may leave a send in doubt, and the deploy (for the TOTP row). */
export interface Disruptions {
  /** SIGKILLs of workers and Temporal restarts, epoch ms: an answer BrowserAI gave just before may never be recorded. */
  strikesAt: number[];
  /** The Temporal outage (paused), epoch ms: an answer given just before or during it may never be recorded. */
  outage?: { from: number; to: number };
  deploy?: { startedAt: number; endedAt: number };
}

/** How the failure of a TOTP code's send begins (the activity's deliverOnce `what`). */
const TYPING_TOTP = 'Typing a TOTP code';

/** How long after an append a strike can still lose its answer: the workers' request timeout and the time to record it. */
const DOUBT_WINDOW_MS = 15_000;

export function evaluateTargets(facts: ChaosFacts, strikes: StrikesAtRequests, disruptions: Disruptions): TargetRow[] {
  const started = facts.workflows.filter((w) => w.outcome !== 'not started');
  const ambiguous = started.filter((w) => w.outcome === AMBIGUOUS);
  const rows: TargetRow[] = [];

  // At most once everywhere; exactly once unless the workflow says it cannot know (AmbiguousRequest).
  const unambiguous = started.filter((w) => w.outcome !== AMBIGUOUS);
  // Cancelled before its create was sent (a slow start): creating nothing is right. The create
  // is not cancellable once sent, so a cancelled workflow without a task never sent one.
  const cancelledFirst = unambiguous.filter((w) => w.outcome === 'cancelled' && w.tasks.length === 0);
  const createMisses = [
    ...unambiguous.filter((w) => w.tasks.length !== 1 && !cancelledFirst.includes(w)).map((w) => describeWorkflow(w)),
    ...ambiguous
      .filter((w) => w.tasks.length > 1)
      .map((w) => describeWorkflow(w, '; more than one task despite AmbiguousRequest')),
    ...started
      .filter((w) => w.recordedExecutionId && !w.tasks.some((t) => t.executionId === w.recordedExecutionId))
      .map((w) => describeWorkflow(w, `; records ${w.recordedExecutionId}, which is not among its tasks`)),
  ];
  rows.push({
    measure: 'BrowserAI tasks created per workflow (workflows that did not fail AmbiguousRequest)',
    target: 'exactly 1 each (≤ 1 with AmbiguousRequest, 0 when cancelled before the create)',
    measured: `${spread(unambiguous.map((w) => w.tasks.length))}, of which cancelled before the create: ${cancelledFirst.length}; AmbiguousRequest ones with >1: ${ambiguous.filter((w) => w.tasks.length > 1).length}`,
    met: createMisses.length === 0,
    misses: createMisses,
  });

  rows.push({
    measure: 'Workflows failed AmbiguousRequest',
    target: 'no target: each is a create or append whose answer may have been lost',
    measured: `${ambiguous.length} (creates/appends left without a whole answer by a fault: ${facts.requests.createsOrAppendsWithoutAnswer}; worker kills right after a create/append: ${strikes.workerKills}; Temporal restarts right after one: ${strikes.temporalRestarts})`,
    met: undefined,
    misses: ambiguous.map((w) => describeWorkflow(w)),
  });

  const submitted = started.filter((w) => w.codeSubmitted);
  const codeMisses = submitted.filter((w) => w.codeTyped > 1 || (w.codeTyped === 0 && w.outcome !== AMBIGUOUS));
  rows.push({
    measure: 'Times each submitted one-time code was typed',
    target: 'exactly 1 (≤ 1 with AmbiguousRequest)',
    measured: `${spread(submitted.map((w) => w.codeTyped))}; submitted more than once after a failed signal: ${submitted.filter((w) => w.codeSignals > 1).length}`,
    met: codeMisses.length === 0,
    misses: codeMisses.map((w) => describeWorkflow(w, `; code typed ${w.codeTyped}×`)),
  });

  const stillOpen = started.filter((w) => w.outcome === 'not closed');
  rows.push({
    measure: `BrowserAI tasks still running after every workflow closed${stillOpen.length > 0 ? ' (measured at the deadline instead)' : ''}`,
    target: '0',
    measured: String(facts.runningTasks.length),
    met: facts.runningTasks.length === 0,
    misses: facts.runningTasks.map((t) => {
      const owner = facts.workflows.find((w) => w.workflowId === t.workflowId);
      return `${t.executionId} ${t.status}, of ${owner ? describeWorkflow(owner) : 'no known workflow'}`;
    }),
  });

  rows.push({
    measure: 'Workflows not closed by the deadline',
    target: '0',
    measured: `${stillOpen.length} of ${started.length}`,
    met: stillOpen.length === 0,
    misses: stillOpen.map((w) =>
      describeWorkflow(
        w,
        `; Temporal: ${w.temporalStatus ?? '?'}${w.code ? `; code ${w.codeSubmitted ? 'submitted' : 'not submitted'}` : ''}${w.cancelRequested ? '; cancel sent' : ''}`,
      ),
    ),
  });

  // A workflow cancelled before any task existed has nothing to stop: it is left out, and counted.
  // A task that ended by itself before the cancel reached the workflow needs no stop: the
  // workflow may have seen the end already (a cancel held up while Temporal was paused).
  const cancelled = started.filter((w) => w.cancelRequested && w.outcome === 'cancelled');
  const withTask = cancelled.filter((w) => w.tasks.length > 0);
  const endedFirst = withTask.filter((w) =>
    w.tasks.every((t) => t.status !== 'stopped' && t.endedAt !== null && t.endedAt <= (w.cancelDoneAt ?? 0)),
  );
  const stopsRight = (w: WorkflowFacts) => w.stops === 1 || (w.stops === 0 && endedFirst.includes(w));
  rows.push({
    measure: 'Stops per cancelled workflow (cancelled after its task existed)',
    target: 'exactly 1 each (0 when the task ended by itself before the cancel arrived)',
    measured: `${spread(withTask.map((w) => w.stops))}; cancelled before any task existed: ${cancelled.length - withTask.length}; task ended by itself before the cancel arrived: ${endedFirst.length} (of which stopped anyway: ${endedFirst.filter((w) => w.stops > 0).length})`,
    met: withTask.every(stopsRight),
    misses: withTask
      .filter((w) => !stopsRight(w))
      .map((w) => describeWorkflow(w, `; ${w.stops} stops, cancel sent at: ${w.cancelTrigger}`)),
  });

  // A workflow that ends AmbiguousRequest after its task exists stops it on purpose (an append or
  // code of unknown delivery): only the others must never see a stop.
  const neverCancelled = started.filter((w) => !w.cancelRequested && w.outcome !== AMBIGUOUS);
  const stoppedAnyway = neverCancelled.filter((w) => w.stops > 0);
  rows.push({
    measure:
      'Stops sent for workflows neither cancelled nor ended AmbiguousRequest (kills and deploys must not stop tasks)',
    target: '0',
    measured: `${stoppedAnyway.reduce((sum, w) => sum + w.stops, 0)} stops on ${stoppedAnyway.length} of ${neverCancelled.length} workflows`,
    met: stoppedAnyway.length === 0,
    misses: stoppedAnyway.map((w) => describeWorkflow(w)),
  });

  rows.push(totpRow(started, disruptions));

  const unexpected = facts.workflows.filter(
    (w) => w.outcome !== w.expected && w.outcome !== AMBIGUOUS && w.outcome !== 'not closed',
  );
  rows.push({
    measure: 'Workflows ending otherwise than their kind should (AmbiguousRequest and not closed aside)',
    target: '0',
    measured: `${unexpected.length} of ${facts.workflows.length}`,
    met: unexpected.length === 0,
    misses: unexpected.map((w) => describeWorkflow(w, `; expected ${w.expected}`)),
  });
  return rows;
}
