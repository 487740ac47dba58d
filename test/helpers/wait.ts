/** Waiting in tests and benchmarks: one pause and one poll loop for all of them. */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface PollOptions {
  /** Give up after this long (default 15 s). */
  timeoutMs?: number;
  /** Pause between probes (default 100 ms). */
  everyMs?: number;
}

/**
 * Probes until the answer is neither undefined nor false, and returns that answer. A probe that
 * throws counts as "not yet" (a server still starting). On timeout it fails naming `what`, with the
 * probe's last error if it had one.
 */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 15_000, everyMs = 100 }: PollOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const answer = await probe();
      if (answer !== undefined && answer !== false) return answer;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? ` (last: ${lastError.message})` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await sleep(everyMs);
  }
}
