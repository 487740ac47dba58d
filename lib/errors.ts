/**
 * The contract's error codes and the one place they map to HTTP statuses.
 * Services throw AppError; the gateway turns any error into `{ error: { code, message, field? } }`.
 */
import { Errors } from "moleculer";

export const ERROR_STATUS = {
  INVALID: 400,
  INVITE_NOT_REDEEMABLE: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  BODY_TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorData {
  field?: string;
  retryAfterSec?: number;
  /** The message was written for clients and holds no internals: a 5xx answers with it rather than the generic one. */
  forClients?: true;
}

/**
 * A MoleculerClientError whose `type` is the contract's code: it survives the trip between
 * nodes (Moleculer rebuilds errors from name, message, code, type and data).
 */
export class AppError extends Errors.MoleculerClientError {
  constructor(code: ErrorCode, message: string, data: ErrorData = {}) {
    super(message, ERROR_STATUS[code], code, data);
    this.name = "AppError";
  }
}

export const invalid = (message: string, field?: string) => new AppError("INVALID", message, field ? { field } : {});
export const notFound = (what: string) => new AppError("NOT_FOUND", `${what} not found`);
export const forbidden = (message: string) => new AppError("FORBIDDEN", message);
export const conflict = (message: string, field?: string) => new AppError("CONFLICT", message, field ? { field } : {});
export const unauthorized = (message = "Authentication required") => new AppError("UNAUTHORIZED", message);
export const tooLarge = () => new AppError("PAYLOAD_TOO_LARGE", "Request body too large");
export const notRedeemable = (message = "The invite is expired, already used or revoked") => new AppError("INVITE_NOT_REDEEMABLE", message);

export interface HttpError {
  status: number;
  body: { error: { code: ErrorCode; message: string; field?: string } };
  retryAfterSec?: number;
}

const GENERIC_MESSAGE: Partial<Record<ErrorCode, string>> = {
  INTERNAL: "Internal server error",
  UNAVAILABLE: "Service temporarily unavailable",
};

const NOT_NOW = new Set([
  "ServiceUnavailableError",
  "ServiceNotFoundError",
  "ServiceNotAvailableError",
  "RequestTimeoutError",
  "RequestRejectedError",
  "QueueIsFullError",
  "BrokerDisconnectedError",
]);

/** Leaf name of a validator path: `newKeys[3].wrapSignature` -> `wrapSignature`, `items` -> `items`. */
function leafField(path: unknown): string | undefined {
  if (typeof path !== "string" || path === "") return undefined;
  const parts = path
    .replace(/\[\d+\]/g, "")
    .split(".")
    .filter(Boolean);
  return parts[parts.length - 1];
}

/**
 * A body that could not be read as JSON (body-parser's error), as the contract's error. The
 * original carries the raw body: it must never be thrown or logged.
 */
export function bodyError(err: unknown): AppError {
  const type = (err as { type?: unknown })?.type;
  if (type === "entity.too.large") return tooLarge();
  return new AppError("INVALID", "Request body is not valid JSON");
}

/**
 * Any error, from any layer, to the response the client sees. 5xx bodies never carry internals.
 */
export function toHttpError(err: unknown): HttpError {
  const e = err as { type?: unknown; code?: unknown; status?: unknown; name?: unknown; message?: unknown; data?: unknown };
  const type = typeof e?.type === "string" ? e.type : undefined;
  const data = (e?.data ?? {}) as Record<string, unknown>;

  if (type && type in ERROR_STATUS && e?.name !== "MoleculerServerError") {
    const code = type as ErrorCode;
    const status = ERROR_STATUS[code];
    const message = (data.forClients === true ? undefined : GENERIC_MESSAGE[code]) ?? String(e.message ?? code);
    const field = typeof data.field === "string" ? data.field : undefined;
    const retryAfterSec = typeof data.retryAfterSec === "number" ? data.retryAfterSec : undefined;
    return { status, body: { error: { code, message, ...(field ? { field } : {}) } }, retryAfterSec };
  }
  // fastest-validator through Moleculer's validator middleware
  if (type === "VALIDATION_ERROR" && Array.isArray(e.data)) {
    const first = e.data[0] as { field?: unknown; message?: unknown } | undefined;
    const field = leafField(first?.field);
    const message = typeof first?.message === "string" ? first.message : "Validation failed";
    return { status: 400, body: { error: { code: "INVALID", message, ...(field ? { field } : {}) } } };
  }
  // moleculer-web's own errors
  const name = typeof e?.name === "string" ? e.name : "";
  if (name === "NotFoundError") {
    return { status: 404, body: { error: { code: "NOT_FOUND", message: "Not found" } } };
  }
  // Moleculer's "not now": no node runs the action (any more), a node or NATS went away, a deadline.
  // A node that died is serving again within seconds (its replacement), so: try again in one.
  if (NOT_NOW.has(name)) {
    return { status: 503, body: { error: { code: "UNAVAILABLE", message: GENERIC_MESSAGE.UNAVAILABLE! } }, retryAfterSec: 1 };
  }
  return { status: 500, body: { error: { code: "INTERNAL", message: GENERIC_MESSAGE.INTERNAL! } } };
}
