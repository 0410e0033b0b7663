// Spaces requests evenly so one worker never exceeds a request rate BrowserAI may enforce
// (its limits are undocumented). Slots are handed out in call order, without timers per slot.
export class RequestPacer {
  readonly #gapMs: number;
  #nextSlot = 0;

  constructor(maxRequestsPerSecond: number) {
    this.#gapMs = 1000 / maxRequestsPerSecond;
  }

  async wait(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    const now = Date.now();
    const slot = Math.max(now, this.#nextSlot);
    this.#nextSlot = slot + this.#gapMs;
    const delay = slot - now;
    if (delay <= 0) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(done, delay);
      function done() {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }
      function onAbort() {
        clearTimeout(timer);
        reject(signal?.reason ?? new Error('aborted'));
      }
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
