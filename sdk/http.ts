/**
 * The wire: JSON over fetch, the server's error body turned into `ApiError`, and the access token
 * refreshed before it expires (or once after a 401), with one refresh in flight at a time:
 * refresh tokens rotate on use, and presenting a used one ends the whole login.
 */
import { fromBase64Url, fromUtf8 } from "../protocol/encoding";
import { ApiError } from "./errors";

export interface Tokens {
  accessToken: string;
  refreshToken: string;
}

export interface TransportOptions {
  /** e.g. `http://127.0.0.1:3000/api/v1`. */
  baseUrl: string;
  tokens?: Tokens;
  /** Called with every new token pair (after login and each refresh), and `undefined` when the login ended. */
  onTokens?: (tokens: Tokens | undefined) => void | Promise<void>;
  fetch?: typeof fetch;
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  /** Public routes send no token. */
  auth?: boolean;
  /** With `auth: false`: this access token instead (a sign-in not taken up, ended). */
  bearer?: string;
}

/**
 * Refresh this long before the access token expires, so a request never races its expiry:
 * 30 s, or a quarter of the token's lifetime when that is shorter.
 */
const REFRESH_MARGIN_MS = 30_000;

export class Transport {
  readonly baseUrl: string;
  private tokens?: Tokens;
  private refreshing?: Promise<void>;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly opts: TransportOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.tokens = opts.tokens;
    this.fetchImpl = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** The current pair, to save a login and resume it later. */
  get currentTokens(): Tokens | undefined {
    return this.tokens;
  }

  async setTokens(tokens: Tokens | undefined): Promise<void> {
    this.tokens = tokens;
    await this.opts.onTokens?.(tokens);
  }

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const auth = opts.auth ?? true;
    if (auth) {
      if (!this.tokens) throw new ApiError(401, "UNAUTHORIZED", "not logged in");
      if (nearExpiry(this.tokens.accessToken)) await this.refresh();
    }
    const sentWith = this.tokens?.accessToken;
    const res = await this.send(method, path, opts, auth);
    if (res.status === 401 && auth && this.tokens) {
      // Another request may have refreshed meanwhile; otherwise this token was refused early.
      if (this.tokens.accessToken === sentWith) await this.refresh();
      return this.parse<T>(await this.send(method, path, opts, auth));
    }
    return this.parse<T>(res);
  }

  /** Rotates the token pair; concurrent callers share one refresh. */
  refresh(): Promise<void> {
    this.refreshing ??= this.doRefresh().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async doRefresh(): Promise<void> {
    const refreshToken = this.tokens?.refreshToken;
    if (!refreshToken) throw new ApiError(401, "UNAUTHORIZED", "not logged in");
    const res = await this.send("POST", "/auth/refresh", { body: { refreshToken } }, false);
    if (res.status === 401) {
      await this.setTokens(undefined);
      throw new ApiError(401, "UNAUTHORIZED", "the login has ended: log in again");
    }
    const pair = await this.parse<Tokens>(res);
    await this.setTokens({ accessToken: pair.accessToken, refreshToken: pair.refreshToken });
  }

  private async send(method: string, path: string, opts: RequestOptions, auth: boolean): Promise<Response> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (auth && this.tokens) headers.authorization = `Bearer ${this.tokens.accessToken}`;
    else if (opts.bearer !== undefined) headers.authorization = `Bearer ${opts.bearer}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(opts.body);
    }
    let url = this.baseUrl + path;
    const query = Object.entries(opts.query ?? {}).filter((e): e is [string, string | number] => e[1] !== undefined);
    if (query.length > 0) url += "?" + new URLSearchParams(query.map(([k, v]): [string, string] => [k, String(v)])).toString();
    try {
      return await this.fetchImpl(url, { method, headers, body });
    } catch (err) {
      throw new ApiError(0, "UNREACHABLE", `cannot reach ${this.baseUrl}: ${fetchFailure(err)}`);
    }
  }

  private async parse<T>(res: Response): Promise<T> {
    const text = await res.text();
    let json: unknown;
    try {
      json = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (res.ok) return json as T;
    const err = (json as { error?: { code?: unknown; message?: unknown; field?: unknown } } | undefined)?.error;
    const retryAfter = res.headers.get("retry-after");
    throw new ApiError(
      res.status,
      typeof err?.code === "string" ? err.code : `HTTP_${res.status}`,
      typeof err?.message === "string" ? err.message : res.statusText || `HTTP ${res.status}`,
      typeof err?.field === "string" ? err.field : undefined,
      retryAfter ? Number(retryAfter) : undefined,
    );
  }
}

/** Why a request never got an answer, from the cause Node's fetch attaches (a browser gives none). */
const CAUSES: Record<string, string> = {
  ECONNREFUSED: "connection refused (nothing listens there: is the service running, on that port?)",
  ENOTFOUND: "host not found (DNS has no such name)",
  EAI_AGAIN: "the DNS lookup failed (try again, or check the name)",
  ECONNRESET: "the connection was reset",
  ETIMEDOUT: "the connection timed out",
  UND_ERR_CONNECT_TIMEOUT: "the connection timed out",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  CERT_HAS_EXPIRED: "TLS: the server's certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "TLS: the server's certificate is self-signed",
  SELF_SIGNED_CERT_IN_CHAIN: "TLS: the server's certificate chain is self-signed",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "TLS: the server's certificate cannot be verified",
  ERR_TLS_CERT_ALTNAME_INVALID: "TLS: the server's certificate is for another name",
};

function fetchFailure(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown; errors?: Array<{ code?: unknown }> } })?.cause;
  const code = cause?.code ?? cause?.errors?.[0]?.code;
  const message = typeof cause?.message === "string" && cause.message ? cause.message : undefined;
  if (typeof code === "string") return CAUSES[code] ?? `${message ?? "failed"} (${code})`;
  return message ?? (err as Error)?.message ?? String(err);
}

/** True when the JWT's `exp` is near (an unreadable token is left to the server to judge). */
function nearExpiry(jwt: string): boolean {
  try {
    const { exp, iat } = JSON.parse(fromUtf8(fromBase64Url(jwt.split(".")[1] ?? "")));
    if (typeof exp !== "number") return false;
    const margin = typeof iat === "number" ? Math.min(REFRESH_MARGIN_MS, ((exp - iat) * 1000) / 4) : REFRESH_MARGIN_MS;
    return exp * 1000 - Date.now() < margin;
  } catch {
    return false;
  }
}
