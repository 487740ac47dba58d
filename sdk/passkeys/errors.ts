/** Why a passkey was not made, listed or used: each refusal by name, with the `DOMException` name a page is given. */
export type PasskeyProblem =
  "INSECURE_ORIGIN" | "NOT_A_DOMAIN" | "RP_ID_MISMATCH" | "NO_ALGORITHM" | "EXCLUDED" | "NO_PASSKEY" | "BAD_REQUEST" | "BAD_KEY";

/** What a page's `navigator.credentials` call rejects with for each problem, as browsers name them. */
export const DOM_EXCEPTION_NAME: Record<PasskeyProblem, string> = {
  INSECURE_ORIGIN: "SecurityError",
  NOT_A_DOMAIN: "SecurityError",
  RP_ID_MISMATCH: "SecurityError",
  NO_ALGORITHM: "NotSupportedError",
  EXCLUDED: "InvalidStateError",
  NO_PASSKEY: "NotAllowedError",
  BAD_REQUEST: "TypeError",
  BAD_KEY: "NotAllowedError",
};

export class PasskeyError extends Error {
  override readonly name = "PasskeyError";
  constructor(
    readonly code: PasskeyProblem,
    message: string,
  ) {
    super(message);
  }
}
