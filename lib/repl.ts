/**
 * The developers' REPL (`npm run dev`: moleculer-repl on the running node) and the one command it
 * adds: `as <email> <action>`, which calls an action as a registered user, with the caller the
 * gateway would set from their access token (`meta.user`: userId, orgId, organization role).
 * Whatever the action answers is printed; a refusal prints as one line (`404 NOT_FOUND: ...`).
 */
import type { ServiceBroker } from "moleculer";
import { inspect } from "node:util";
import { toHttpError } from "./errors";
import { normalizeEmail } from "./domain/email";
import type { Caller } from "./domain/types";
import type { Store } from "./store";

/** The caller an action sees for a user, as the gateway builds it from a verified token. */
export async function callerByEmail(store: Store, email: string): Promise<Caller> {
  const user = await store.accounts.findUserByEmail(normalizeEmail(email));
  if (!user) throw new Error(`no user with the email ${email}`);
  return { userId: user.userId, orgId: user.orgId, role: user.role };
}

/** Calls `action` as the user with `email`. */
export async function callAs(
  broker: ServiceBroker,
  store: Store,
  email: string,
  action: string,
  params: Record<string, unknown>,
): Promise<unknown> {
  return broker.call(action, params, { meta: { user: await callerByEmail(store, email) } });
}

/** A failed call in one line: the status and code the HTTP client would get, the message, the field. */
export function errorLine(err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  if (/^no user with the email/.test(message)) return message;
  const { status, body } = toHttpError(err);
  const detail = status >= 500 ? ` (${(err as Error)?.name ?? "Error"}: ${message})` : "";
  return `${status} ${body.error.code}: ${body.error.message}${body.error.field ? ` (field ${body.error.field})` : ""}${detail}`;
}

/** moleculer-repl's custom command definition (its `CustomCommand`). */
export interface ReplCommand {
  command: string;
  description: string;
  allowUnknownOptions: boolean;
  action(
    broker: ServiceBroker,
    args: { email: string; action: string; jsonParams?: string; options?: Record<string, unknown> },
  ): Promise<void>;
}

export function replCommands(store: Store, print: (line: string) => void = console.log): ReplCommand[] {
  return [
    {
      command: "as <email> <action> [jsonParams]",
      description:
        "Call an action as a registered user, e.g. `as ada@example.com vaults.list` or `as ada@example.com vaults.get --vaultId <id>`",
      allowUnknownOptions: true,
      async action(broker, args) {
        try {
          let params: Record<string, unknown>;
          if (args.jsonParams !== undefined) params = JSON.parse(args.jsonParams) as Record<string, unknown>;
          else params = Object.fromEntries(Object.entries(args.options ?? {}).map(([k, v]) => [k, typeof v === "number" ? String(v) : v]));
          print(inspect(await callAs(broker, store, args.email, args.action, params), { depth: 6, colors: process.stdout.isTTY === true }));
        } catch (err) {
          print(errorLine(err));
        }
      },
    },
  ];
}
