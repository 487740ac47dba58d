/**
 * Emergency access: grants, requests, refusals and the released session (lib/domain/emergency/decisions.ts).
 * Its actions are the recovery service's (recovery.service.ts): both let someone into an account
 * without its password, and they share a node.
 */
import type { UserId } from "../lib/domain/ids";
import { requireUser } from "../lib/domain/accounts/users";
import { kdfVersionOf } from "../lib/domain/accounts/statements";
import { signatureVerifies } from "../lib/domain/accounts/keys";
import { keyFingerprint } from "../lib/domain/vaults/roster";
import {
  availableAtMs,
  grantStatus,
  planGrantRelease,
  planGrantRefuse,
  planGrantRequest,
  planGrantRevoke,
  planGrantWrite,
  type GrantForm,
  type GrantParties,
  type GrantRecord,
} from "../lib/domain/emergency/decisions";
import { alreadyRequested, grantNotFound, notRequested } from "../lib/domain/emergency/refusals";
import { announceEnded } from "../lib/auth/session-check";
import { signIn } from "../lib/auth/sign-in";
import { callerOf, noContent, type Ctx } from "../lib/http/context";
import type { Runtime } from "../lib/runtime";
import type { UserRecord } from "../lib/store/port";
import { grantBytes, grantStatementOf } from "../protocol/formats/emergency";

export type GrantParams = { grantId: string };
export type WriteParams = GrantParams & Omit<GrantForm, "grantId"> & { wrappedKey: string; signature: string };
export type SessionParams = GrantParams & { deviceName?: string };

/** Accounts read once per request: a listing names the caller in every grant. */
type Accounts = (userId: UserId) => Promise<UserRecord | null>;
function accountsOf({ store }: Runtime): Accounts {
  const read = new Map<UserId, Promise<UserRecord | null>>();
  return (userId) => {
    if (!read.has(userId)) read.set(userId, store.accounts.findUserById(userId));
    return read.get(userId)!;
  };
}

/** Both parties' account state now; a party gone from the organization leaves the grant stale. */
async function partiesOf(accounts: Accounts, g: GrantRecord): Promise<GrantParties> {
  const [grantor, grantee] = await Promise.all([accounts(g.grantorId), accounts(g.granteeId)]);
  return {
    grantorKeys: grantor && !grantor.removedAt ? keyFingerprint(grantor) : "",
    grantorKdfVersion: grantor ? kdfVersionOf(grantor) : 0,
    granteeKeys: grantee && !grantee.removedAt ? keyFingerprint(grantee) : "",
  };
}

/** A grant as either party sees it: what was signed, its status now and its request; never the wrapped key. */
async function viewOf(rt: Runtime, g: GrantRecord, accounts: Accounts = accountsOf(rt)) {
  const status = grantStatus(g, await partiesOf(accounts, g), rt.clock.nowMs());
  const at = availableAtMs(g);
  const statement = await grantStatementOf(g);
  return {
    ...statement,
    signature: g.signature,
    createdAt: g.createdAt,
    updatedAt: g.updatedAt,
    status,
    ...(g.requestedAt !== undefined && { requestedAt: g.requestedAt, availableAt: new Date(at!).toISOString() }),
    ...(g.refusedAt !== undefined && { refusedAt: g.refusedAt }),
    ...(g.openedAt !== undefined && { openedAt: g.openedAt }),
  };
}

export async function list(rt: Runtime, ctx: Ctx) {
  const { granted, received } = await rt.store.emergency.listGrants({ userId: callerOf(ctx).userId });
  const accounts = accountsOf(rt);
  return {
    granted: await Promise.all(granted.map((g) => viewOf(rt, g, accounts))),
    received: await Promise.all(received.map((g) => viewOf(rt, g, accounts))),
  };
}

export async function write(rt: Runtime, ctx: Ctx<WriteParams>) {
  const { store, clock, events } = rt;
  const { wrappedKey, signature, ...form } = ctx.params;
  const grantor = requireUser(await store.accounts.findUserById(callerOf(ctx).userId));
  const found = await store.accounts.findUserById(form.granteeId as UserId);
  const grantee = found && {
    userId: found.userId,
    orgId: found.orgId,
    keys: keyFingerprint(found),
    removed: found.removedAt !== undefined,
  };
  const statement = await grantStatementOf({ ...form, grantorId: grantor.userId, wrappedKey });
  const signatureOk = signatureVerifies(Buffer.from(grantBytes(statement)), Buffer.from(signature, "base64"), grantor.signingPublicKey);
  const existing = await store.emergency.grantBetween({ grantorId: grantor.userId, granteeId: form.granteeId as UserId });
  const plan = planGrantWrite(
    { userId: grantor.userId, orgId: grantor.orgId, keys: keyFingerprint(grantor), kdfVersion: kdfVersionOf(grantor) },
    grantee,
    { ...form, granteeId: form.granteeId as UserId },
    signatureOk,
    existing,
  );
  await store.emergency.writeGrant({
    grant: { ...form, granteeId: form.granteeId as UserId, orgId: grantor.orgId, grantorId: grantor.userId, wrappedKey, signature },
    expect: plan.kind === "create" ? null : existing!.grantId,
    now: clock.timestamp(),
    events: [events.record("emergency.granted", { actorId: grantor.userId, orgId: grantor.orgId, targetUserId: form.granteeId as UserId })],
  });
  events.kick();
  // Revoked or declined since: gone.
  const now = await store.emergency.getGrant({ grantId: form.grantId });
  if (!now) throw grantNotFound();
  return viewOf(rt, now);
}

export async function remove(rt: Runtime, ctx: Ctx<GrantParams>) {
  const { store, clock, events } = rt;
  const me = callerOf(ctx);
  const g = await store.emergency.getGrant({ grantId: ctx.params.grantId });
  const plan = planGrantRevoke(g, me.userId);
  const other = plan.by === "grantor" ? g!.granteeId : g!.grantorId;
  const { deleted, endedSessions } = await store.emergency.deleteGrant({
    grantId: g!.grantId,
    actorId: me.userId,
    now: clock.timestamp(),
    events: [
      events.record(plan.by === "grantor" ? "emergency.revoked" : "emergency.declined", {
        actorId: me.userId,
        orgId: me.orgId,
        targetUserId: other,
      }),
    ],
  });
  if (!deleted) throw grantNotFound();
  events.kick();
  await announceEnded(ctx, rt.sessions, endedSessions);
  return noContent(ctx);
}

export async function request(rt: Runtime, ctx: Ctx<GrantParams>) {
  const { store, clock, events } = rt;
  const me = callerOf(ctx);
  const g = await store.emergency.getGrant({ grantId: ctx.params.grantId });
  const status = g ? grantStatus(g, await partiesOf(accountsOf(rt), g), clock.nowMs()) : "idle";
  planGrantRequest(g, me.userId, status);
  const asked = await store.emergency.requestGrant({
    grantId: g!.grantId,
    granteeId: me.userId,
    now: clock.timestamp(),
    events: [events.record("emergency.requested", { actorId: me.userId, orgId: me.orgId, targetUserId: g!.grantorId })],
  });
  if (!asked) throw alreadyRequested();
  events.kick();
  return viewOf(rt, (await store.emergency.getGrant({ grantId: g!.grantId })) ?? g!);
}

export async function refuse(rt: Runtime, ctx: Ctx<GrantParams>) {
  const { store, clock, events } = rt;
  const me = callerOf(ctx);
  const g = await store.emergency.getGrant({ grantId: ctx.params.grantId });
  planGrantRefuse(g, me.userId);
  const { refused, endedSessions } = await store.emergency.refuseGrant({
    grantId: g!.grantId,
    grantorId: me.userId,
    now: clock.timestamp(),
    events: [events.record("emergency.refused", { actorId: me.userId, orgId: me.orgId, targetUserId: g!.granteeId })],
  });
  if (!refused) throw notRequested();
  events.kick();
  await announceEnded(ctx, rt.sessions, endedSessions);
  return viewOf(rt, (await store.emergency.getGrant({ grantId: g!.grantId })) ?? { ...g!, requestedAt: undefined });
}

/** Once the wait is over, to the grantee: the wrapped key and a session as the grantor (read-only for a read grant). */
export async function session(rt: Runtime, ctx: Ctx<SessionParams>) {
  const { store, clock, events } = rt;
  const me = callerOf(ctx);
  const g = await store.emergency.getGrant({ grantId: ctx.params.grantId });
  const status = g ? grantStatus(g, await partiesOf(accountsOf(rt), g), clock.nowMs()) : "idle";
  const plan = planGrantRelease(g, me.userId, status);
  const grantor = requireUser(await store.accounts.findUserById(g!.grantorId));
  const deviceName = ctx.params.deviceName?.trim() || "Emergency access";
  const login = await signIn(rt, ctx, grantor, {
    deviceName,
    address: ctx.meta.clientIp ?? "unknown",
    fullAccess: true,
    ...(plan.readOnly && { readOnly: true }),
  });
  const { recorded, endedSessions } = await store.emergency.openedGrantSession({
    grantId: g!.grantId,
    requestedAt: g!.requestedAt!,
    sessionId: login.sessionId,
    now: clock.timestamp(),
    events: [events.record("emergency.opened", { actorId: me.userId, orgId: me.orgId, targetUserId: g!.grantorId })],
  });
  await announceEnded(ctx, rt.sessions, endedSessions);
  if (!recorded) {
    // Refused or revoked between the check and the session: the session just begun ends.
    const ended = await store.sessions.endSessions({ userId: grantor.userId, now: clock.timestamp(), only: login.sessionId });
    await announceEnded(ctx, rt.sessions, ended);
    throw notRequested();
  }
  events.kick();
  const { refreshToken, ...rest } = login;
  return {
    ...rest,
    ...(!plan.readOnly && { refreshToken }),
    grant: await viewOf(rt, g!),
    wrappedKey: g!.wrappedKey,
    email: grantor.email,
    readOnly: plan.readOnly,
  };
}
