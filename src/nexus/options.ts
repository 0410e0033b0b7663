// What the operator of a Nexus endpoint lets its callers do. A Nexus caller is another team, in
// another namespace, with access to the endpoint only: it is not trusted with what a client in the
// service's namespace may do. By default it gets none of the allowances; each one is opened by
// name here, on the service's worker (BrowserAIPlugin `nexusService: { ... }`, or
// WORKER_NEXUS_ALLOW). They are the allowances of every outside caller (src/contract/callers.ts),
// as MCP clients have them too. Types only: the handler reads them through fence.ts.
import type { CallerAllowances } from '../contract/callers';

/**
 * What callers of the `browserai` Nexus service may set in `runTask`'s task, beyond the task
 * itself (see `CallerAllowances`). Everything here is off by default: a caller that sets an option
 * not allowed is refused (`NexusOptionNotAllowed`), nothing is started. Callers reach only the
 * tasks they started through the service, whatever these options say, and their tasks queue under
 * the endpoint's fairness key (`nexus:<endpoint>`) unless `priority` lets them choose.
 */
export type NexusServiceOptions = CallerAllowances;
