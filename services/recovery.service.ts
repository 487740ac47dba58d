/**
 * k-of-n account recovery (the rules: lib/domain/accounts/recovery.ts; the formats:
 * protocol/formats/recovery.ts; the design: docs/design/account-recovery.md). The server keeps the
 * user's signed enrolment, passes a new device's request to the trustees, keeps their re-wrapped
 * shares, and lets the device in once k trustees approved and it proves it rebuilt the account's
 * keys. It can check signatures and counts; it can open nothing. It serves emergency access too
 * (emergency-access.ts): a grantee let in after a wait the account's owner can stop.
 */
import type { ServiceSchema } from "moleculer";
import { requireUser } from "../lib/domain/accounts/users";
import {
  decideEnrolmentCurrent,
  decideRecoveryCancel,
  decideRecoveryCancelled,
  decideRecoveryOpened,
  decideRecoveryState,
  decideUnenrolment,
  planRecoveryApproval,
  planRecoveryEnrolment,
  planRecoverySession,
  RECOVERY_REQUEST_TTL_MS,
  type EnrolmentForm,
} from "../lib/domain/accounts/recovery";
import { decideRequesterView, decideSessionAsk, planRecoveryRequest, undisclosedState } from "../lib/domain/accounts/recovery-requests";
import { enrolmentView, requestSummary, sealedAccount, taskView } from "../lib/domain/accounts/recovery-views";
import { normalizeEmail } from "../lib/domain/email";
import { newId } from "../lib/domain/ids";
import { hashToken } from "../lib/domain/opaque-tokens";
import { DEFAULT_POLICIES } from "../lib/domain/orgs/policies";
import { addressKeyOf, askOf, clientKeyOf, endOpenedSessions, perAddress, requestToken, usersById } from "../lib/auth/recovery-requests";
import { announceEnded } from "../lib/auth/session-check";
import * as grants from "./emergency-access";
import { signIn } from "../lib/auth/sign-in";
import { callerOf, created, noContent, type Ctx } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { UserRecord } from "../lib/store/port";
import type { Runtime } from "../lib/runtime";
import { runnerService } from "../app/node-runtime";

type RequestParams = { email: string; publicKey: string; binding?: string };
type SecretParams = { requestId: string; requestToken: string };
type SessionParams = SecretParams & { signature: string; deviceName?: string };
type ApproveParams = { requestId: string; encryptedShare: string; signature: string };

export function recoveryService(rt: Runtime): ServiceSchema {
  return {
    name: "recovery",
    actions: {
      enrol: { params: paramsOf("recovery.enrol"), handler: (ctx: Ctx<EnrolmentForm>) => enrol(rt, ctx) },
      get: { handler: (ctx: Ctx) => getEnrolment(rt, ctx) },
      unenrol: { handler: (ctx: Ctx) => unenrol(rt, ctx) },
      myRequests: { handler: (ctx: Ctx) => myRequests(rt, ctx) },
      cancel: { params: paramsOf("recovery.cancel"), handler: (ctx: Ctx<{ requestId: string }>) => cancel(rt, ctx) },
      request: { params: paramsOf("recovery.request"), handler: (ctx: Ctx<RequestParams>) => request(rt, ctx) },
      state: { params: paramsOf("recovery.state"), handler: (ctx: Ctx<SecretParams>) => state(rt, ctx) },
      session: { params: paramsOf("recovery.session"), handler: (ctx: Ctx<SessionParams>) => session(rt, ctx) },
      tasks: { handler: (ctx: Ctx) => tasks(rt, ctx) },
      approve: { params: paramsOf("recovery.approve"), handler: (ctx: Ctx<ApproveParams>) => approve(rt, ctx) },
      // Emergency access (emergency-access.ts): into an account without its password too, after a wait its owner can stop.
      emergencyGrants: { handler: (ctx: Ctx) => grants.list(rt, ctx) },
      emergencyGrant: { params: paramsOf("recovery.emergencyGrant"), handler: (ctx: Ctx<grants.WriteParams>) => grants.write(rt, ctx) },
      emergencyRemove: { params: paramsOf("recovery.emergencyRemove"), handler: (ctx: Ctx<grants.GrantParams>) => grants.remove(rt, ctx) },
      emergencyRequest: {
        params: paramsOf("recovery.emergencyRequest"),
        handler: (ctx: Ctx<grants.GrantParams>) => grants.request(rt, ctx),
      },
      emergencyRefuse: { params: paramsOf("recovery.emergencyRefuse"), handler: (ctx: Ctx<grants.GrantParams>) => grants.refuse(rt, ctx) },
      emergencySession: {
        params: paramsOf("recovery.emergencySession"),
        handler: (ctx: Ctx<grants.SessionParams>) => grants.session(rt, ctx),
      },
    },
  };
}

const caller = async ({ store }: Runtime, ctx: Ctx) => requireUser(await store.accounts.findUserById(callerOf(ctx).userId));
/** An event the account's owner made about their own account. */
const own = (u: UserRecord) => ({ actorId: u.userId, orgId: u.orgId, targetUserId: u.userId });

async function enrol(rt: Runtime, ctx: Ctx<EnrolmentForm>) {
  const { store, clock, events } = rt;
  const user = await caller(rt, ctx);
  const policies = (await store.security.getPolicies(user.orgId)) ?? DEFAULT_POLICIES;
  const trusteeIds = ctx.params.shares.map((s) => s.trusteeId);
  const trustees = await usersById(rt, trusteeIds);
  const previous = (await store.security.getRecoveryEnrolment(user.userId))?.enrolment ?? null;
  const found = { user, trustees, policyMinThreshold: policies.recoveryMinThreshold, previous, now: clock.timestamp() };
  const plan = planRecoveryEnrolment(found, ctx.params);
  await store.security.putRecoveryEnrolment({ ...plan, events: [events.record("recovery.enrolled", own(user))] });
  events.kick();
  return { ...enrolmentView(plan.enrolment, ctx.params.shares), current: true };
}

async function getEnrolment(rt: Runtime, ctx: Ctx) {
  const user = await caller(rt, ctx);
  const found = await rt.store.security.getRecoveryEnrolment(user.userId);
  const trustees = await usersById(rt, found?.shares.map((s) => s.trusteeId) ?? []);
  const { enrolment, shares, current } = decideEnrolmentCurrent(found, user, trustees);
  return { ...enrolmentView(enrolment, shares), current };
}

async function unenrol(rt: Runtime, ctx: Ctx) {
  const { store, clock, events } = rt;
  const user = await caller(rt, ctx);
  const open = await store.security.listRecoveryRequests({ userId: user.userId, now: clock.timestamp(), pendingOnly: false });
  const gone = await store.security.deleteRecoveryEnrolment({
    userId: user.userId,
    events: [events.record("recovery.unenrolled", own(user))],
  });
  decideUnenrolment(gone);
  events.kick();
  await endOpenedSessions(rt, ctx, open);
  return noContent(ctx);
}

async function myRequests(rt: Runtime, ctx: Ctx) {
  const { store, clock } = rt;
  const user = await caller(rt, ctx);
  const requests = await store.security.listRecoveryRequests({ userId: user.userId, now: clock.timestamp(), pendingOnly: false });
  const out = [];
  for (const r of requests) {
    const approvedBy = (await store.security.listApprovals(r.requestId)).map((a) => a.trusteeId);
    out.push(requestSummary(r, clock.timestamp(), approvedBy));
  }
  return { requests: out };
}

async function cancel(rt: Runtime, ctx: Ctx<{ requestId: string }>) {
  const { store, clock, events } = rt;
  const user = await caller(rt, ctx);
  const request = decideRecoveryCancel(await store.security.findRecoveryRequest(ctx.params.requestId), user.userId);
  const ended = await store.security.endRecoveryRequest({
    requestId: request.requestId,
    status: "cancelled",
    at: clock.timestamp(),
    events: [events.record("recovery.cancelled", own(user))],
  });
  decideRecoveryCancelled(ended);
  events.kick();
  // Opened already (a device signed in with it): that session ends too.
  await endOpenedSessions(rt, ctx, [request]);
  return noContent(ctx);
}

/**
 * A request to recover an address, from a device that holds no account yet. The same reads, the
 * same writes (the request stored, its audit event recorded) and the same answer for any address:
 * an enrolled account's request goes on to its trustees, any other is a decoy no one is asked
 * about (docs/design/account-recovery.md, "What a stranger learns").
 */
async function request(rt: Runtime, ctx: Ctx<RequestParams>) {
  const { store, clock, events } = rt;
  await perAddress(rt, ctx);
  const email = normalizeEmail(ctx.params.email);
  const target = await store.security.findRecoveryTarget(email);
  const now = clock.nowMs();
  const requestId = newId();
  const secret = requestToken(rt, requestId);
  const { request, subjects } = planRecoveryRequest(target, {
    requestId,
    addressKey: addressKeyOf(rt, email),
    clientKey: clientKeyOf(rt, ctx),
    bindingHash: ctx.params.binding === undefined ? null : hashToken(ctx.params.binding),
    publicKey: ctx.params.publicKey,
    tokenHash: hashToken(secret),
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + RECOVERY_REQUEST_TTL_MS).toISOString(),
  });
  await store.security.startRecoveryRequest({ request, events: [events.record("recovery.requested", subjects)] });
  events.kick();
  created(ctx, `/recovery/requests/${requestId}`);
  return { requestId, requestToken: secret, expiresAt: request.expiresAt };
}

/** A request's state, with its secret: until a trustee approved it, the same open request for any (`decideRequesterView`). */
async function state(rt: Runtime, ctx: Ctx<SecretParams>) {
  const { store, clock } = rt;
  const ask = await askOf(rt, ctx, ctx.params.requestId, ctx.params.requestToken);
  const stored = (await store.security.listApprovals(ask.requestId)).map(({ requestId: _r, ...a }) => a);
  const request = decideRequesterView(ask, stored.length);
  if (!request) return undisclosedState(ask.requestId);
  const found = await store.security.getRecoveryEnrolment(request.userId);
  const { status, threshold, disclose } = decideRecoveryState(request, found?.enrolment ?? null, stored.length, clock.timestamp());
  const base = { requestId: request.requestId, status, threshold, approvals: stored };
  const user = disclose ? await store.accounts.findUserById(request.userId) : null;
  return user && found ? { ...base, ...sealedAccount(user, found.enrolment) } : base;
}

async function session(rt: Runtime, ctx: Ctx<SessionParams>) {
  const { store, clock, events } = rt;
  const p = ctx.params;
  const ask = await askOf(rt, ctx, p.requestId, p.requestToken);
  const approvals = await store.security.listApprovals(ask.requestId);
  // Nothing of the account is read for a request no trustee approved (`decideSessionAsk`).
  const request = decideSessionAsk(ask, approvals.length);
  const enrolment = await store.security.getRecoveryEnrolment(request.userId);
  const found = await store.accounts.findUserById(request.userId);
  const now = clock.timestamp();
  const plan = planRecoverySession({ request, tokenHash: hashToken(p.requestToken), enrolment, approvals, user: found, now }, p);
  const { user, deviceName } = plan;
  // A session that may set the new password without the old one (docs/design/account-recovery.md, "The recovered session").
  const login = await signIn(rt, ctx, user, { deviceName, address: ctx.meta.clientIp ?? "unknown", fullAccess: true });
  const opened = await store.security.openRecoveryRequest({
    requestId: plan.request.requestId,
    sessionId: login.sessionId,
    at: clock.timestamp(),
    events: [events.record("recovery.opened", own(user))],
  });
  if (!opened) await store.sessions.endSessions({ userId: user.userId, now: clock.timestamp(), only: login.sessionId });
  decideRecoveryOpened(opened);
  events.kick();
  const others = await store.sessions.endSessions({ userId: user.userId, now: clock.timestamp(), except: login.sessionId });
  await announceEnded(ctx, rt.sessions, others);
  return login;
}

async function tasks(rt: Runtime, ctx: Ctx) {
  const { store, clock } = rt;
  const me = callerOf(ctx).userId;
  const requests = await store.security.listRequestsForTrustee({ trusteeId: me, now: clock.timestamp() });
  const out = [];
  for (const r of requests) {
    const found = await store.security.getRecoveryEnrolment(r.userId);
    if (!found || found.enrolment.enrolmentId !== r.enrolmentId) continue;
    const approvedBy = (await store.security.listApprovals(r.requestId)).map((a) => a.trusteeId);
    out.push({ request: requestSummary(r, clock.timestamp(), approvedBy), ...taskView(found), approved: approvedBy.includes(me) });
  }
  return { tasks: out };
}

async function approve(rt: Runtime, ctx: Ctx<ApproveParams>) {
  const { store, clock, events } = rt;
  const trustee = await caller(rt, ctx);
  const request = await store.security.findRecoveryRequest(ctx.params.requestId);
  const enrolment = request && (await store.security.getRecoveryEnrolment(request.userId));
  const now = clock.timestamp();
  const plan = planRecoveryApproval({ request, trustee, enrolment, now }, ctx.params);
  await store.security.addRecoveryApproval({
    approval: plan.approval,
    now,
    events: [events.record("recovery.approved", { actorId: trustee.userId, orgId: trustee.orgId, targetUserId: plan.request.userId })],
  });
  events.kick();
  return noContent(ctx);
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(recoveryService);
