// The one fence of outside callers (src/contract/callers.ts), as Nexus callers meet it: each
// refusal names the `NexusServiceOptions` field and the WORKER_NEXUS_ALLOW word that would allow
// the option, and a caller's tasks queue under its endpoint.
import { allowanceArgument, type CallerSurface } from '../contract/callers';
import type { CallerAllowanceName } from '../contract/input';
import { NEXUS_ALLOW_WORDS } from '../config/nexus-allow';

/** How the plugin's option is written, by the allowance's argument. */
const optionValue = (argument: string) => (argument === '' ? 'true' : argument === 'MS' ? 'MS' : `['${argument}']`);

/** Nexus callers, as the fence's refusals name them and the operator's settings. */
export const NEXUS_CALLERS: CallerSurface = {
  to: 'through Nexus',
  allowWith: Object.fromEntries(
    Object.entries(NEXUS_ALLOW_WORDS).map(([name, word]) => {
      const argument = allowanceArgument(name as CallerAllowanceName);
      const setting = `WORKER_NEXUS_ALLOW=${word}${argument ? `:${argument}` : ''}`;
      return [name, `the Nexus service option ${name}: ${optionValue(argument)}, or ${setting}`];
    }),
  ) as Record<CallerAllowanceName, string>,
};

/**
 * The fairness key of the tasks that come through `endpoint` (the endpoint the Temporal server
 * says the request was addressed to; a server before 1.30 names none, and every endpoint then
 * shares `nexus:`). The handler is told nothing trustworthy about the caller beyond it.
 */
export function nexusCallerKey(endpoint: string): string {
  return `nexus:${endpoint}`;
}
