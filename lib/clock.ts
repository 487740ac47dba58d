/**
 * The time every expiry is decided by: tokens, invites, refresh tokens. One per runtime, so a test
 * moves it forward (`AdjustableClock.advance`) instead of sleeping until something expires.
 */
import { timestamp } from "./domain/encoding";

export interface Clock {
  nowMs(): number;
  /** ISO 8601, as the store and the API write times. */
  timestamp(): string;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  timestamp: () => timestamp(),
};

/** The system time plus an offset that only grows: time runs on, and a test can skip ahead. */
export class AdjustableClock implements Clock {
  private offsetMs = 0;

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  timestamp(): string {
    return timestamp(new Date(this.nowMs()));
  }

  advance(ms: number): void {
    if (ms < 0) throw new Error("A clock only moves forward");
    this.offsetMs += ms;
  }
}
