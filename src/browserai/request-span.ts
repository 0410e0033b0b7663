// One OpenTelemetry CLIENT span per BrowserAI HTTP request, named and tagged as the HTTP semantic
// conventions ask (`POST /tasks/{id}/instructions`): method, route template, server, status.
// Never the body, the query, the path with its execution ID, or a header: instructions, codes and
// the token stay out of traces as they stay out of metrics.
//
// Only @opentelemetry/api is used: without an SDK registered in the process (a worker without
// OTEL_* settings, a team's worker without tracing) every call here is a no-op. Inside an activity
// traced by Temporal's OpenTelemetry interceptors, the span is a child of its RunActivity span.
import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../contract/version';

const tracer = trace.getTracer(PACKAGE_NAME, PACKAGE_VERSION);

/** How a request ended, as the client's `onRequest` hook also sees it. */
export interface RequestOutcome {
  status?: number;
  failure?: 'network' | 'timeout' | 'aborted';
}

/** Starts the span of a request to `route` (a template, e.g. `/tasks/{id}`) on `baseUrl`; call `end` once it is answered or failed. */
export function startRequestSpan(method: string, route: string, baseUrl: URL): { end(outcome: RequestOutcome): void } {
  const span: Span = tracer.startSpan(`${method} ${route}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': method,
      'url.template': route,
      'server.address': baseUrl.hostname,
      'server.port': Number(baseUrl.port) || (baseUrl.protocol === 'https:' ? 443 : 80),
    },
  });
  return {
    end({ status, failure }) {
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      // error.type: the status code for a 4xx/5xx, else why no answer came (semantic conventions).
      const errorType = status !== undefined ? (status >= 400 ? String(status) : undefined) : failure;
      if (errorType) {
        span.setAttribute('error.type', errorType);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
  };
}
