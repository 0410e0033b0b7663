// Worker-side metrics: recorded through the activity context's metric meter, so they carry the
// SDK's tags (namespace, taskQueue, activityType) and go wherever the Runtime exports metrics.
import { Context } from '@temporalio/activity';
import type { MetricMeter } from '@temporalio/common';
import type { BrowserAIRequestEvent } from '../browserai/client';
import { AMBIGUOUS_REQUESTS, RATE_LIMITED, REQUEST_DURATION, REQUESTS, RETRY_AFTER } from './names';

/** The running activity's meter; undefined outside an activity (a starter, the CLI): nothing is recorded then. */
function activityMeter(): MetricMeter | undefined {
  try {
    return Context.current().metricMeter;
  } catch {
    return undefined;
  }
}

/**
 * A BrowserAIClient `onRequest` hook: counts each request by route template and status class,
 * times it, and counts 429s with their Retry-After. Never throws.
 */
export function recordBrowserAIRequest(event: BrowserAIRequestEvent): void {
  const meter = activityMeter();
  if (!meter) return;
  try {
    const tags = { endpoint: `${event.method} ${event.route}`, status_class: statusClass(event) };
    meter.createCounter(REQUESTS, '1', 'BrowserAI HTTP requests, by route template and status class').add(1, tags);
    meter
      .createHistogram(REQUEST_DURATION, 'float', 's', 'BrowserAI request latency')
      .record(event.durationMs / 1000, tags);
    if (event.status === 429) {
      meter
        .createCounter(RATE_LIMITED, '1', 'BrowserAI 429 (rate limited) answers')
        .add(1, { endpoint: tags.endpoint });
      if (event.retryAfterMs !== undefined) {
        meter
          .createHistogram(RETRY_AFTER, 'float', 's', 'Retry-After of BrowserAI 429 answers')
          .record(event.retryAfterMs / 1000, { endpoint: tags.endpoint });
      }
    }
  } catch {
    // Metrics never fail a request.
  }
}

/** Counts a send that failed with AmbiguousRequest; the activity type is the SDK's own tag. */
export function recordAmbiguousRequest(): void {
  try {
    activityMeter()
      ?.createCounter(
        AMBIGUOUS_REQUESTS,
        '1',
        'Sends that failed AmbiguousRequest (the answer was lost after the request may have arrived)',
      )
      .add(1);
  } catch {
    // Metrics never fail an activity.
  }
}

function statusClass(event: BrowserAIRequestEvent): string {
  if (event.status !== undefined) return `${Math.floor(event.status / 100)}xx`;
  return event.failure ?? 'network';
}
