/** What actions read from and write to the Moleculer context when they serve HTTP. */
import type { Context } from "moleculer";
import { unauthorized } from "../errors";
import type { Caller } from "../domain/types";
import { API_PREFIX } from "./routes";

export interface RequestMeta {
  /** Set by the gateway from a verified access token; null on public routes. */
  user?: Caller | null;
  /** The client's address (the socket's, or the proxy's X-Forwarded-For when trusted). */
  clientIp?: string;
  /** On streamed-body routes: whether the body is JSON by its content type (else it counts as no body). */
  jsonBody?: boolean;
  $statusCode?: number;
  $location?: string;
}

/** An action's context as the gateway hands it over: its params and the request's meta. */
export type Ctx<P = unknown> = Context<P, RequestMeta>;

/** The authenticated caller; 401 when an action that needs one is reached without. */
export function callerOf(ctx: Ctx): Caller {
  const user = ctx.meta.user;
  if (!user) throw unauthorized();
  return user;
}

export function created(ctx: Ctx, location: string): void {
  ctx.meta.$statusCode = 201;
  ctx.meta.$location = API_PREFIX + location;
}

export function noContent(ctx: Ctx): null {
  ctx.meta.$statusCode = 204;
  return null;
}
