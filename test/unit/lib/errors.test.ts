/** Errors to answers (lib/errors.ts: toHttpError, bodyError, AppError): the contract's error body; internals never leave. */
import { Errors } from "moleculer";
import { bodyError, toHttpError, AppError } from "../../../lib/errors";

describe("errors", () => {
  test("any error maps to the contract's body; internals never leave a 5xx", () => {
    expect(toHttpError(new AppError("CONFLICT", "taken", { field: "email" }))).toEqual({
      status: 409,
      body: { error: { code: "CONFLICT", message: "taken", field: "email" } },
      retryAfterSec: undefined,
    });
    const internal = toHttpError(new Error("SQLITE_CORRUPT: at /var/lib/secret/path"));
    expect(internal).toEqual({ status: 500, body: { error: { code: "INTERNAL", message: "Internal server error" } } });
    const validation = toHttpError({ type: "VALIDATION_ERROR", data: [{ field: "newKeys[3].wrapSignature", message: "bad" }] });
    expect(validation.body.error).toEqual({ code: "INVALID", message: "bad", field: "wrapSignature" });
    const tooLarge = bodyError({ type: "entity.too.large", status: 413 });
    expect(toHttpError(tooLarge).body.error.code).toBe("PAYLOAD_TOO_LARGE");
    const badJson = bodyError({ type: "entity.parse.failed", body: '{"authHash": "secret"' });
    expect(toHttpError(badJson)).toEqual({
      status: 400,
      body: { error: { code: "INVALID", message: "Request body is not valid JSON" } },
      retryAfterSec: undefined,
    });
    expect(JSON.stringify(badJson)).not.toContain("secret");
    expect(toHttpError({ code: 11000, message: "duplicate key" }).status).toBe(500);
  });

  test("a node or NATS away is 503 UNAVAILABLE with Retry-After: 1, whichever of Moleculer's errors says it, with no internals", () => {
    const away = [
      new Errors.ServiceNotAvailableError({ action: "items.create", nodeID: "node-1" }),
      new Errors.ServiceNotFoundError({ action: "items.create", nodeID: "node-1" }),
      new Errors.RequestRejectedError({ action: "items.create", nodeID: "node-1" }),
      new Errors.RequestTimeoutError({ action: "items.create", nodeID: "node-1" }),
    ];
    for (const err of away)
      expect(toHttpError(err)).toEqual({
        status: 503,
        body: { error: { code: "UNAVAILABLE", message: "Service temporarily unavailable" } },
        retryAfterSec: 1,
      });
  });

  test("a 5xx whose message was written for clients keeps it; any other 5xx message is replaced", () => {
    const written = new AppError("UNAVAILABLE", "Not every service is reachable: items", { retryAfterSec: 1, forClients: true });
    expect(toHttpError(written)).toEqual({
      status: 503,
      body: { error: { code: "UNAVAILABLE", message: "Not every service is reachable: items" } },
      retryAfterSec: 1,
    });
    const driver = new AppError("UNAVAILABLE", "connect ECONNREFUSED 10.0.0.7:5432");
    expect(toHttpError(driver).body.error.message).toBe("Service temporarily unavailable");
  });
});
