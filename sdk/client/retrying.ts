/** Requests sent again while the server is away: a node restarting, a `503`, a `429` with its `Retry-After`. */
import { ApiError } from "../errors";

/** How long one request is tried again, at most. */
export const RETRY_FOR_MS = 180_000;

/** Whether an error is the server being away or busy (worth the same request again), rather than a refusal. */
export const transient = (err: unknown): boolean =>
  err instanceof ApiError && (err.status === 0 || err.status === 408 || err.status === 429 || err.status >= 500);

/** `request`, again after each transient failure (waiting its `Retry-After`, else backing off) until it lands or `forMs` has passed. */
export async function retrying<T>(request: () => Promise<T>, forMs = RETRY_FOR_MS): Promise<T> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await request();
    } catch (err) {
      if (!transient(err) || Date.now() - started > forMs) throw err;
      const after = (err as ApiError).retryAfter;
      const waitMs = after !== undefined && Number.isFinite(after) ? after * 1000 : Math.min(5_000, 100 * 2 ** attempt);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}
