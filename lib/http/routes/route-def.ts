/** What a route declares, and the shapes of its success answers. */
import type { SchemaName } from "../api-schemas";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** fastest-validator rules by parameter name, with `$$strict` where unknown fields are dropped. */
export type ParamSchema = Readonly<Record<string, unknown>>;

export interface RouteDef {
  method: Method;
  path: string;
  action: string;
  /** One line for the OpenAPI document. */
  summary: string;
  public?: boolean;
  /** Reached by a login that may only enrol a second factor (its organization requires one and it has none). */
  enrolOnly?: boolean;
  /**
   * The JSON body is streamed to the action, which reads it (up to the rekey body limit) and checks
   * it against `params` itself: it can be far larger than the 1 MiB of other routes and than one
   * NATS message.
   */
  streamBody?: boolean;
  /**
   * The answer is a chunk of a file (about 1.4 MB): the gateway holds it in one of its fair slots
   * until it has gone out, and closes a connection that does not take it in time (lib/http/large-answers.ts).
   */
  largeAnswer?: boolean;
  params?: ParamSchema;
  /** The success answer: its status, and its body's schema (none for 204). */
  reply: { status: 200 | 201 | 204; body?: SchemaName };
}

export const API_PREFIX = "/api/v1";

export const ok = (body: SchemaName) => ({ status: 200, body }) as const;
export const created = (body: SchemaName) => ({ status: 201, body }) as const;
export const noContent = { status: 204 } as const;
