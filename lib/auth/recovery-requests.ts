/**
 * What account recovery's actions share (services/recovery.service.ts): the secret a device names
 * its request with, the trustees looked up, the sessions opened requests began, and the limit per
 * client address of the public routes. The rules are lib/domain/accounts/recovery.ts.
 */
import { RECOVERY_REQUEST_TTL_MS, type RecoveryRequest } from "../domain/accounts/recovery";
import {
  decideAskOfSecret,
  decideRequestPolls,
  decideRequestSecret,
  RECOVERY_POLL_WINDOW_MS,
  type RecoveryAsk,
  type RequestSecret,
} from "../domain/accounts/recovery-requests";
import { addressLimit } from "../domain/accounts/address-limits";
import type { UserId } from "../domain/ids";
import { hashToken, newOpaqueToken } from "../domain/opaque-tokens";
import type { Ctx } from "../http/context";
import { limitPerAddress, netKey } from "../limits/counters";
import type { UserRecord } from "../store/port";
import type { Runtime } from "../runtime";
import { announceEnded } from "./session-check";

/** What a request's secret is sealed for: decoys and real ones alike (docs/design/account-recovery.md, "What a stranger learns"). */
const REQUEST_TOKEN = "recovery-request";

/** A new request's secret: sealed for the server, naming the request (the same form for any address). */
export const requestToken = (rt: Runtime, requestId: string): string =>
  rt.sealer.seal(REQUEST_TOKEN, { r: requestId, n: newOpaqueToken() }, RECOVERY_REQUEST_TTL_MS);

/**
 * The stored request a device names with its secret, a decoy's as a real one's; 404 for any other
 * secret. A secret this server did not seal counts against its client address (as the start
 * does); a sealed one against its own request's budget, which no one else's traffic uses up.
 */
export async function askOf(rt: Runtime, ctx: Ctx, requestId: string, token: string): Promise<RecoveryAsk> {
  const opened = rt.sealer.open<RequestSecret>(REQUEST_TOKEN, token);
  if (!opened) await perAddress(rt, ctx);
  decideRequestSecret(opened, requestId);
  const used = await rt.counters.add(`recovery-polls:${requestId}`, 1, RECOVERY_POLL_WINDOW_MS);
  decideRequestPolls(used.count, used.resetInMs);
  return decideAskOfSecret(await rt.store.security.findRecoveryAsk(requestId), hashToken(token));
}

/** The keys a request is counted by: the address asked for, and the client address it came from, each a keyed hash. */
export const addressKeyOf = (rt: Runtime, email: string): string => rt.serverHmac("recovery-address", email).toString("base64url");
export const clientKeyOf = (rt: Runtime, ctx: Ctx): string =>
  rt.serverHmac("recovery-client", netKey(ctx.meta.clientIp ?? "unknown")).toString("base64url");

/** The users of these ids that exist, by id. */
export async function usersById({ store }: Runtime, ids: readonly UserId[]): Promise<Map<UserId, UserRecord>> {
  const users = new Map<UserId, UserRecord>();
  for (const id of ids) {
    const u = await store.accounts.findUserById(id);
    if (u) users.set(u.userId, u);
  }
  return users;
}

/** Ends the sessions opened requests began (their owner stopped them, or left recovery). */
export async function endOpenedSessions({ store, clock, sessions }: Runtime, ctx: Ctx, requests: RecoveryRequest[]): Promise<void> {
  const ended: string[] = [];
  for (const r of requests) {
    if (r.status !== "opened" || r.sessionId === undefined) continue;
    ended.push(...(await store.sessions.endSessions({ userId: r.userId, now: clock.timestamp(), only: r.sessionId })));
  }
  await announceEnded(ctx, sessions, ended);
}

/** Recovery's public routes, per client address (as registration's). */
export const perAddress = ({ counters, config, metrics }: Runtime, ctx: Ctx): Promise<void> =>
  limitPerAddress(counters, ctx.meta.clientIp, addressLimit("register", config.registerRateLimit), () => metrics.rateLimited("register"));
