/**
 * One id per request, in every log line written while serving it, on every node it reaches.
 *
 * The gateway gives each request an id (the client's `X-Request-Id` when it is safe, else 16 random
 * hex digits), echoes it and makes it the Moleculer request id, which every nested call inherits
 * and which tracing uses as the trace id. Each action runs in an AsyncLocalStorage scope holding
 * it; the log formatter adds it to each line written inside that scope.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import type { Context, Middleware } from "moleculer";

export interface RequestScope {
  /** The request's id, which is also its trace id (Moleculer's `ctx.requestID`). */
  requestId: string;
}

const scope = new AsyncLocalStorage<RequestScope>();

export const currentRequest = (): RequestScope | undefined => scope.getStore();

/** Runs `fn` with `requestId` as the current request. */
export function inRequest<T>(requestId: string, fn: () => T): T {
  return scope.run({ requestId }, fn);
}

/** A new request id: 64 random bits in hex, which is also a valid Zipkin/W3C trace id. */
export const newRequestId = (): string => randomBytes(8).toString("hex");

/** Each local action and event handler runs in its request's scope. */
export function requestScopes(): Middleware {
  const wrap = (handler: (ctx: Context) => unknown) => (ctx: Context) =>
    ctx.requestID && currentRequest()?.requestId !== ctx.requestID ? inRequest(ctx.requestID, () => handler(ctx)) : handler(ctx);
  return {
    name: "RequestScopes",
    localAction: wrap,
    localEvent: wrap,
  } as unknown as Middleware;
}

export type LogFormat = "text" | "json";

type Bindings = { nodeID: string; mod: string };
type PrintArgs = { printArgs(args: unknown[]): unknown[] };

/**
 * Moleculer's log formatter: `text` is one readable line (`[time] LEVEL MODULE trace=id: message`),
 * `json` one JSON object a line (`time, level, node, module, traceId, requestId, msg`).
 */
export function logFormatter(format: LogFormat) {
  return function format_(type: string, args: unknown[], bindings: Bindings, { printArgs }: PrintArgs): string[] {
    const request = currentRequest();
    const message = printArgs(args).map(String).join(" ");
    if (format === "json") {
      return [
        JSON.stringify({
          time: new Date().toISOString(),
          level: type,
          node: bindings.nodeID,
          module: bindings.mod,
          // One id, under both names: the trace id collectors show is the request id clients see.
          ...(request ? { traceId: request.requestId, requestId: request.requestId } : {}),
          msg: message,
        }),
      ];
    }
    const where = `${bindings.mod.toUpperCase()}${request ? ` trace=${request.requestId}` : ""}:`;
    return [`[${new Date().toISOString().substring(11)}]`, type.toUpperCase().padEnd(5), where, message];
  };
}
