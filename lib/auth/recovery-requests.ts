/**
 * What account recovery's actions share (services/recovery.service.ts): the secret a device names
 * its request with, the trustees looked up, the sessions opened requests began, and the limit per
 * client address of the public routes. The rules are lib/domain/accounts/recovery.ts.
 */
import {
  decideRequestOfSecret,
  decideRequestSecret,
  RECOVERY_REQUEST_TTL_MS,
  type RecoveryRequest,
  type RequestSecret,
} from "../domain/accounts/recovery";
import { addressLimit } from "../domain/accounts/address-limits";
import type { UserId } from "../domain/ids";
import { hashToken, newOpaqueToken } from "../domain/opaque-tokens";
import type { Ctx } from "../http/context";
import { limitPerAddress } from "../limits/counters";
import type { UserRecord } from "../store/port";
import type { Runtime } from "../runtime";
import { announceEnded } from "./session-check";

/** What a request's secret is sealed for: decoys and real ones alike (docs/design/account-recovery.md, "Decoys"). */
const REQUEST_TOKEN = "recovery-request";

/** A new request's secret: sealed for the server, naming the request and whether it is a decoy. */
export const requestToken = (rt: Runtime, requestId: string, decoy: boolean): string =>
  rt.sealer.seal(REQUEST_TOKEN, { r: requestId, d: decoy ? 1 : 0, n: newOpaqueToken() }, RECOVERY_REQUEST_TTL_MS);

/** The request a device names with its secret (null: a decoy); 404 for any other secret. */
export async function requestOf(rt: Runtime, requestId: string, token: string): Promise<RecoveryRequest | null> {
  if (decideRequestSecret(rt.sealer.open<RequestSecret>(REQUEST_TOKEN, token), requestId)) return null;
  return decideRequestOfSecret(await rt.store.security.findRecoveryRequest(requestId), hashToken(token));
}

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
