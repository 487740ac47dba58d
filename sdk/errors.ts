/**
 * What the SDK throws. `ApiError` is the server saying no; `SecurityError` is the SDK refusing
 * something the server handed it (a wrap whose signature fails, a changed key, a tampered item).
 */

export { SecurityError, UnlockError, type SecurityProblem } from "../protocol/errors";

export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    /** Seconds, from `Retry-After` on 429. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** A master password the client refuses to register with (`checkMasterPassword`): `reasons` say why. */
export class WeakPasswordError extends Error {
  override readonly name = "WeakPasswordError";
  readonly code = "WEAK_PASSWORD";
  constructor(
    readonly reasons: string[],
    readonly suggestions: string[] = [],
  ) {
    super(`the master password is too weak: ${reasons.join(" ")}`);
  }
}

/** A login of an account with a second factor, on a client that was given no way to ask for it (`secondFactor`). */
export class SecondFactorRequiredError extends Error {
  constructor(readonly methods: readonly string[]) {
    super(`this account asks for a second factor (${methods.join(", ")}): sign in where you can give one`);
    this.name = "SecondFactorRequiredError";
  }
}
