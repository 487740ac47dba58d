/**
 * The gateway's behaviour, shared by the product's `api` service and the benchmark's baseline:
 * explicit aliases only, access-token authentication, parameters assembled in one place, and every
 * error turned into the contract's body. Nothing else is exposed: no `~node`, no alias listing.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Context, ServiceSchema } from "moleculer";
import type { Config } from "../lib/config";
import type { AccessTokens } from "../lib/auth/access-tokens";
import type { SessionCheck } from "../lib/auth/session-check";
import { bodyError, toHttpError, tooLarge, unauthorized } from "../lib/errors";
import { bodyFields, checkPathIds, isJsonContentType } from "../lib/http/request-body";
import type { RequestMeta } from "../lib/http/context";
import { API_PREFIX, methodsForPath, type RouteDef } from "../lib/http/routes";
import { enrolmentRequired } from "../lib/domain/accounts/refusals";
import { readOnlySession } from "../lib/domain/emergency/refusals";
import { vendored } from "../lib/vendor";
import { WebAssets } from "../lib/http/web-assets";
import { closeAfterAnswers } from "../lib/http/closing-server";
import { LargeAnswers } from "../lib/http/large-answers";
import { AnswerBudget, chargingAnswers } from "../lib/http/answer-budget";
import { lingerAfterAnswer } from "../lib/http/lingering-close";
import { oneAtATime } from "../lib/http/one-at-a-time";
import { clientAddress } from "../lib/http/client-address";
import { inRequest, newRequestId } from "../lib/ops/request-scope";
import type { ServiceMetrics } from "../lib/ops/metrics";

/** What the gateway needs of a route (the benchmark's baseline declares its own). */
export type GatewayRoute = Pick<RouteDef, "method" | "path" | "action" | "public" | "streamBody" | "enrolOnly" | "largeAnswer">;

type Req = IncomingMessage & {
  $params: { body?: unknown; query?: Record<string, unknown>; params?: Record<string, string> } & Record<string, unknown>;
  $alias?: { action?: string; type?: string; fullPath?: string };
  $bodyError?: unknown;
  body?: unknown;
};
type Res = ServerResponse;
type Next = (err?: unknown) => void;

/** moleculer-web, from the build's one-file bundle when built (lib/vendor.ts). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ApiGateway: unknown = vendored("moleculer-web", () => require("moleculer-web"));

const gatewayMethods = (
  ApiGateway as unknown as { methods: { httpHandler(this: unknown, req: Req, res: Res, next?: Next): Promise<void> } }
).methods;

/** A client's request id is echoed back (moleculer-web) and logged: only a short, plain one is kept; otherwise a new one is made. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

const bodyParser = (ApiGateway as unknown as { bodyParser: { json(opts: object): (req: Req, res: Res, next: Next) => void } }).bodyParser;

/**
 * Parses JSON bodies but keeps a parse or size error until the token has been checked (401 first),
 * as a sanitized error: body-parser's own carries the raw body.
 */
function deferredJsonBody(limit: number) {
  const parse = bodyParser.json({ limit, strict: true, type: ["application/json", "application/*+json"] });
  return (req: Req, res: Res, next: Next) => {
    // Announced past the limit: refused now (401 first), not once body-parser has read it all to drop it.
    if (isJsonContentType(req.headers["content-type"]) && Number(req.headers["content-length"]) > limit) {
      req.$bodyError = tooLarge();
      return next();
    }
    parse(req, res, (err) => {
      if (err) req.$bodyError = bodyError(err);
      next();
    });
  };
}

/**
 * The request's path, percent-decoded, or undefined when an escape is malformed (moleculer-web
 * decodes it, and would throw). The decoded value is returned and compared by the caller: a call
 * whose result were unused could be dropped by the build's minifier, which takes
 * decodeURIComponent for free of effects (build/kept-calls.mjs checks the pack for such drops).
 */
function decodedPath(url: string): string | undefined {
  const pathname = url.split("?")[0]!;
  if (!pathname.includes("%")) return pathname;
  try {
    return decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
}

/**
 * moleculer-web's order of aliases (its `optimizeAliasesOrder`, which the first match wins by):
 * more path segments first, then fewer parameters, then by path. It compares paths with
 * `localeCompare`, whose first call loads ICU's collator, 6-13 ms of every start; by code unit
 * these paths (ASCII) fall in the same order (test/unit/mixins/gateway-order.test.ts).
 */
export function aliasOrder(a: { path: string }, b: { path: string }): number {
  const segments = (p: string) => `${p.startsWith("/") ? "" : "/"}${p}${p.endsWith("/") ? "" : "/"}`.split("/").length;
  return (
    segments(b.path) - segments(a.path) ||
    a.path.split(":").length - b.path.split(":").length ||
    (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  );
}

function aliasesOf(routes: readonly GatewayRoute[]): Record<string, string> {
  return Object.fromEntries(routes.map((r) => [`${r.method} ${r.path}`, r.streamBody ? `stream:${r.action}` : r.action]));
}

type Web = WebAssets | null;
type Logger = { error(...a: unknown[]): void; warn(...a: unknown[]): void };

function jsonNotFound(res: Res): void {
  res.writeHead(404, { "Content-Type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(toHttpError({ name: "NotFoundError" }).body));
}

/** One route of the gateway: the API's aliases, with the JSON body parsed here or left to a streamed action. */
function gatewayRoute(config: Config, name: string, defs: readonly GatewayRoute[], parseJson: boolean, onAfterCall: unknown) {
  return {
    name,
    path: API_PREFIX,
    mappingPolicy: "restrict",
    autoAliases: false,
    aliases: aliasesOf(defs),
    bodyParsers: false,
    // Streamed routes leave the body to their action; the others parse JSON here.
    use: parseJson ? [deferredJsonBody(config.bodyLimitBytes)] : [],
    mergeParams: false,
    authentication: true,
    authorization: true,
    logging: false,
    callOptions: { timeout: config.requestTimeoutMs, retries: 0 },
    // Each answer charged to its caller until it has gone out (lib/http/answer-budget.ts).
    onAfterCall,
  };
}

/** Every error, as the contract's body; 5xx logged by name and message only. */
function onGatewayError(this: { logger: Logger }, req: Req, res: Res, err: unknown) {
  const { status, body, retryAfterSec } = toHttpError(err);
  if (status >= 500) {
    // Name and message only: no request body, token or driver data reaches the log. A 503
    // (a node, NATS or the database away for a while) is expected to pass: a warning.
    const e = err as { name?: string; message?: string };
    const line = `${req.method} ${(req.url ?? "").split("?")[0]} failed: ${e?.name ?? "Error"}: ${e?.message ?? ""}`;
    if (status === 503) this.logger.warn(line);
    else this.logger.error(line);
  }
  if (res.headersSent) return void res.end();
  if (!req.complete) {
    // Refused before its body was read (413 on the announced size, 401 first): the rest is
    // discarded and the connection closed after a linger, so that the client reads this answer.
    lingerAfterAnswer(req, res);
  }
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  if (retryAfterSec !== undefined) res.setHeader("Retry-After", String(retryAfterSec));
  res.writeHead(status);
  res.end(JSON.stringify(body));
}

function gatewaySettings(config: Config, routes: readonly GatewayRoute[], answers: ReturnType<typeof chargingAnswers>) {
  const chargeAnswer = answers.after;
  return {
    port: config.port,
    ip: config.host,
    path: "/",
    // The aliases are ordered once every route's exist (`created` in gatewayMixin), without localeCompare.
    // (The two routes share their path: their own order, which this also sorted, stays as listed.)
    optimizeOrder: false,
    routes: [
      gatewayRoute(
        config,
        "api",
        routes.filter((r) => !r.streamBody),
        true,
        chargeAnswer,
      ),
      gatewayRoute(
        config,
        "api-stream",
        routes.filter((r) => r.streamBody),
        false,
        chargeAnswer,
      ),
    ],
    log4XXResponses: false,
    logRequest: null,
    logRequestParams: null,
    logResponse: null,
    logResponseData: null,
    logRouteRegistration: "debug",
    onError: onGatewayError,
  };
}

/** The answer's fixed headers, and a client's request id kept only if it is safe to echo: the request's id. */
function stampRequest(req: Req, res: Res): string {
  res.setHeader("Cache-Control", "no-store");
  res.setHeader("X-Content-Type-Options", "nosniff");
  for (const name of ["x-request-id", "x-correlation-id"]) {
    const value = req.headers[name];
    if (value !== undefined && (typeof value !== "string" || !SAFE_REQUEST_ID.test(value))) delete req.headers[name];
  }
  // Every request has an id (moleculer-web makes it the request's, and tracing's trace id),
  // and everything logged while serving it carries it.
  const requestId = ((req.headers["x-correlation-id"] ?? req.headers["x-request-id"]) as string | undefined) ?? newRequestId();
  if (!req.headers["x-correlation-id"]) req.headers["x-request-id"] = requestId;
  return requestId;
}

function measureRequest(metrics: ServiceMetrics, req: Req, res: Res): void {
  const started = performance.now();
  // The route's template (bounded), not the URL: "web" for the web vault's files, "unrouted" for the rest.
  const route = () => req.$alias?.fullPath ?? ((req.url ?? "").startsWith(API_PREFIX) ? "unrouted" : "web");
  res.once("finish", () => metrics.httpRequest(route(), req.method ?? "", res.statusCode, performance.now() - started));
}

/** No action runs on OPTIONS: the methods the path declares (204 with Allow), or 404. */
function answerOptions(req: Req, res: Res): void {
  req.resume();
  const methods = methodsForPath((req.url ?? "").split("?")[0]!);
  if (methods.length === 0) return jsonNotFound(res);
  res.writeHead(204, { Allow: [...methods, "OPTIONS"].join(", ") });
  res.end();
}

/** The methods every request goes through before moleculer-web routes it. */
function requestMethods(web: Web, metrics?: ServiceMetrics) {
  return {
    /**
     * Every request, before moleculer-web routes it: the headers every answer carries (none of
     * them may be cached or sniffed: they hold tokens, keys and ciphertext), a request id only
     * if it is safe to echo, and OPTIONS answered here. moleculer-web would resolve an OPTIONS
     * request to the route of its Access-Control-Request-Method and run that action: no action
     * runs on OPTIONS; it gets the methods the path declares (204 with Allow), or 404.
     */
    httpHandler(this: { serveRequest(req: Req, res: Res, next?: Next): unknown }, req: Req, res: Res, next?: Next) {
      const requestId = stampRequest(req, res);
      if (metrics?.enabled) measureRequest(metrics, req, res);
      return inRequest(requestId, () => this.serveRequest(req, res, next));
    },

    /** One request, routed: the web vault, OPTIONS, or moleculer-web's routes. */
    serveRequest(this: unknown, req: Req, res: Res, next?: Next) {
      if (decodedPath(req.url ?? "") === undefined) {
        // `/vaults/%` names no resource: 404, as any path that matches nothing (never a 500).
        lingerAfterAnswer(req, res);
        return jsonNotFound(res);
      }
      if (web?.serve(req, res)) return;
      if (req.method === "OPTIONS") return answerOptions(req, res);
      return gatewayMethods.httpHandler.call(this, req, res, next);
    },
  };
}

/**
 * How long the gateway keeps an idle keep-alive connection open, announced in every answer as
 * `Keep-Alive: timeout=65` (Node 24 closes it a second later still). Node's default, 5 s, lost requests:
 * a request that reached a gateway stalled for a few seconds (a loaded machine) was dropped with
 * its connection when the gateway's timer fired first, and a client or proxy that kept a connection
 * idle for about that long sent its next request as the gateway closed it ("other side closed").
 * 65 s is longer than the idle timeout of the usual proxies in front (60 s), which must close
 * first: docs/operator/split-deployment.md.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** How long past REQUEST_TIMEOUT a connection with a request in progress may see nothing move before it is closed. */
export const ANSWER_GRACE_MS = 2_000;

/** The HTTP server and its error handler. */
function serverMethods(config: Config) {
  return {
    /**
     * The HTTP server, made here rather than by moleculer-web so that its deadlines hold: a
     * request (headers and body, on every route) not received within REQUEST_TIMEOUT is answered
     * 408 and its connection closed, checked every second (Node checks every 30 s by default).
     * Its close (the service's stop) ends once the requests in progress are answered, within
     * REQUEST_TIMEOUT, however busy clients keep their keep-alive connections (lib/http/closing-server.ts).
     * A connection's requests are handled one at a time (lib/http/one-at-a-time.ts), and one whose
     * answer stops going out (its client reads nothing) is closed (Node looks twice, a timeout
     * apart, before it says so: within twice REQUEST_TIMEOUT and ANSWER_GRACE_MS).
     */
    createServer(this: { server?: http.Server; isHTTPS: boolean; httpHandler: http.RequestListener }) {
      if (this.server) return;
      this.server = http.createServer(
        {
          requestTimeout: config.requestTimeoutMs,
          headersTimeout: Math.min(config.requestTimeoutMs, 20_000),
          connectionsCheckingInterval: 1000,
          keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
        },
        oneAtATime(this.httpHandler),
      );
      // A connection with a request in progress that nothing moves on (no byte read or sent) is
      // closed: past the request's own deadline, so that a late answer (504) still goes out first.
      this.server.timeout = config.requestTimeoutMs + ANSWER_GRACE_MS;
      this.server.on("timeout", (socket: Socket) => socket.destroy());
      closeAfterAnswers(this.server, config.requestTimeoutMs);
      this.isHTTPS = false;
    },

    // moleculer-web's default logs stacks and error data; our onError logs 5xx without either.
    errorHandler(this: { sendError(req: Req, res: Res, err: unknown): void }, req: Req, res: Res, err: unknown) {
      this.sendError(req, res, err);
    },
  };
}

/** Who calls (the access token) and with what (the body, path ids and query, checked). */
function accessMethods(
  config: Config,
  accessTokens: AccessTokens,
  routes: readonly GatewayRoute[],
  answers: ReturnType<typeof chargingAnswers>,
  sessions?: SessionCheck,
) {
  const publicActions = new Set(routes.filter((r) => r.public).map((r) => r.action));
  // What a login that may only enrol a second factor reaches (lib/domain/accounts/second-factors.ts `decideEnrolOnly`).
  const enrolActions = new Set(routes.filter((r) => r.enrolOnly).map((r) => r.action));
  const largeAnswerActions = new Set(routes.filter((r) => r.largeAnswer).map((r) => r.action));
  const largeAnswers = new LargeAnswers(config);
  /** A large answer's slot, before its action is called: the caller's, or its address's on a public route. */
  const holdLargeAnswer = (ctx: Context<unknown, RequestMeta>, req: Req, res: Res) => {
    const action = req.$alias?.action ?? "";
    if (!largeAnswerActions.has(action)) return;
    return largeAnswers.hold(ctx, res, publicActions.has(action) ? (ctx.meta.clientIp ?? "") : undefined);
  };
  return {
    async authenticate(ctx: Context<unknown, RequestMeta>, _route: unknown, req: Req) {
      ctx.meta.clientIp = clientAddress(req.socket.remoteAddress ?? "", req.headers["x-forwarded-for"], config.trustedProxies);
      if (publicActions.has(req.$alias?.action ?? "")) return null;
      const header = req.headers.authorization;
      const match = typeof header === "string" ? /^Bearer ([A-Za-z0-9_\-.]+)$/.exec(header.trim()) : null;
      if (!match) throw unauthorized();
      const token = await accessTokens.verify(match[1]!);
      // A session narrowed since the token was issued (its organization came to require a factor) narrows the token.
      const scope = await sessions?.check(token, ctx.meta.clientIp);
      const caller = scope?.enrolOnly && !token.enrolOnly ? { ...token, enrolOnly: true as const } : token;
      if (caller.enrolOnly && !enrolActions.has(req.$alias?.action ?? "")) throw enrolmentRequired();
      // A session emergency access opened to read (lib/domain/emergency/decisions.ts): reads only.
      if (caller.readOnly && req.method !== "GET") throw readOnlySession();
      return caller;
    },

    /**
     * After the token: body errors (400/413), malformed path ids (404), then the flat params the
     * actions validate. A streamed body is the action's to read and check, in the same order. A
     * large answer's slot last, for a request that got this far.
     */
    async authorize(ctx: Context<unknown, RequestMeta>, _route: unknown, req: Req, res: Res) {
      const { body, query, params } = req.$params;
      if (req.$alias?.type === "stream") {
        if (Number(req.headers["content-length"] ?? 0) > config.rekeyBodyLimitBytes) throw tooLarge();
        ctx.meta.jsonBody = isJsonContentType(req.headers["content-type"]);
        // Text chunks: Moleculer's JSON serializer sends a Buffer chunk as an array of numbers
        // (about 3.5 bytes a byte, close to NATS's 1 MB cap for a 256 KiB chunk), a string as itself.
        req.setEncoding("utf8");
        req.$params = { ...(params ?? {}) };
        return;
      }
      if (req.$bodyError) throw req.$bodyError;
      const ids = checkPathIds(params);
      const fields = bodyFields(body);
      // Body fields win over query fields; path parameters win over both.
      req.$params = { ...(query ?? {}), ...fields, ...ids };
      answers.before(ctx, req);
      await holdLargeAnswer(ctx, req, res);
    },
  };
}

export function gatewayMixin(
  config: Config,
  accessTokens: AccessTokens,
  routes: readonly GatewayRoute[],
  metrics?: ServiceMetrics,
  /** The product's check that a token's session is live (the benchmark's baseline has none). */
  sessions?: SessionCheck,
): ServiceSchema {
  // The web vault, when it was built (npm run build): its files under `/`, the API under /api/v1.
  const web = WebAssets.load(config.webDir);
  // Every answer charged to its caller until it has gone out (lib/http/answer-budget.ts).
  const answers = chargingAnswers(new AnswerBudget(config.answerMemoryLimitBytes, config.requestTimeoutMs), routes);
  return {
    mixins: [ApiGateway as unknown as ServiceSchema],
    // moleculer-web's actions that list, add or remove routes at run time, callable from any node:
    // the gateway's routes are the route table's, fixed at its start (and ordered then, below).
    actions: { listAliases: false, addRoute: false, removeRoute: false },
    // After moleculer-web's own `created` (a mixin's runs first): every route's aliases, in its order.
    created(this: { aliases: Array<{ path: string }> }) {
      this.aliases.sort(aliasOrder);
    },
    settings: gatewaySettings(config, routes, answers),
    methods: {
      ...requestMethods(web, metrics),
      ...serverMethods(config),
      ...accessMethods(config, accessTokens, routes, answers, sessions),
    },
  } as unknown as ServiceSchema;
}
