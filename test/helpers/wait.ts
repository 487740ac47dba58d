/** Waiting in tests and benchmarks: one pause and one poll loop for all of them. */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface PollOptions {
  /** Give up after this long (default 15 s). */
  timeoutMs?: number;
  /** Pause between probes (default 100 ms). */
  everyMs?: number;
}

/** What `within` answers for work still running at its deadline. */
export const UNANSWERED = Symbol("unanswered");

/** `work`'s outcome, or UNANSWERED once `ms` have passed without one (the work itself is not stopped). */
export async function within<T>(work: Promise<T>, ms: number): Promise<T | typeof UNANSWERED> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<typeof UNANSWERED>((resolve) => (timer = setTimeout(resolve, ms, UNANSWERED)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Probes until the answer is neither undefined nor false, and returns that answer. A probe that
 * throws counts as "not yet" (a server still starting). On timeout it fails naming `what`, with the
 * probe's last error if it had one; a probe that has not answered by then (a page's script waiting
 * on something that never comes) fails it too, rather than leave the test waiting for ever.
 */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 15_000, everyMs = 100 }: PollOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    let answer: Awaited<ReturnType<typeof probe>> | typeof UNANSWERED = undefined;
    lastError = undefined;
    try {
      answer = await within(Promise.resolve().then(probe), Math.max(0, deadline - Date.now()));
    } catch (err) {
      lastError = err;
    }
    if (answer === UNANSWERED) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (its last probe never answered)`);
    if (answer !== undefined && answer !== false) return answer;
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? ` (last: ${lastError.message})` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await sleep(everyMs);
  }
}
