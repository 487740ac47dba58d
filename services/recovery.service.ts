/**
 * k-of-n account recovery (the rules: lib/domain/accounts/recovery.ts; the formats:
 * protocol/formats/recovery.ts; the design: docs/design/account-recovery.md). The server keeps the
 * user's signed enrolment, passes a new device's request to the trustees, keeps their re-wrapped
 * shares, and lets the device in once k trustees approved and it proves it rebuilt the account's
 * keys. It can check signatures and counts; it can open nothing.
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
  MAX_PENDING_RECOVERIES,
  planRecoveryApproval,
  planRecoveryEnrolment,
  planRecoverySession,
  RECOVERY_REQUEST_TTL_MS,
  type EnrolmentForm,
} from "../lib/domain/accounts/recovery";
import { enrolmentView, requestSummary, sealedAccount, taskView } from "../lib/domain/accounts/recovery-views";
import { normalizeEmail } from "../lib/domain/email";
import { newId } from "../lib/domain/ids";
import { hashToken } from "../lib/domain/opaque-tokens";
import { DEFAULT_POLICIES } from "../lib/domain/orgs/policies";
import { endOpenedSessions, perAddress, requestOf, requestToken, usersById } from "../lib/auth/recovery-requests";
import { announceEnded } from "../lib/auth/session-check";
import { signIn } from "../lib/auth/sign-in";
import { callerOf, created, noContent, type Ctx } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import type { UserRecord } from "../lib/store/port";
import type { Runtime } from "../lib/runtime";
import { runnerService } from "../app/node-runtime";

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
      request: { params: paramsOf("recovery.request"), handler: (ctx: Ctx<{ email: string; publicKey: string }>) => request(rt, ctx) },
      state: { params: paramsOf("recovery.state"), handler: (ctx: Ctx<SecretParams>) => state(rt, ctx) },
      session: { params: paramsOf("recovery.session"), handler: (ctx: Ctx<SessionParams>) => session(rt, ctx) },
      tasks: { handler: (ctx: Ctx) => tasks(rt, ctx) },
      approve: { params: paramsOf("recovery.approve"), handler: (ctx: Ctx<ApproveParams>) => approve(rt, ctx) },
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

async function request(rt: Runtime, ctx: Ctx<{ email: string; publicKey: string }>) {
  const { store, clock, events } = rt;
  await perAddress(rt, ctx);
  const user = await store.accounts.findUserByEmail(normalizeEmail(ctx.params.email));
  const found = user && user.removedAt === undefined ? await store.security.getRecoveryEnrolment(user.userId) : null;
  const now = clock.nowMs();
  const requestId = newId();
  const decoy = !user || !found || found.enrolment.kdfSalt !== user.kdf.salt;
  const answer = {
    requestId,
    requestToken: requestToken(rt, requestId, decoy),
    expiresAt: new Date(now + RECOVERY_REQUEST_TTL_MS).toISOString(),
  };
  // An address with no account, or none enrolled: the same answer, and nothing stored (no trustee is ever asked).
  if (!decoy) {
    await store.security.createRecoveryRequest({
      request: {
        requestId,
        userId: user.userId,
        orgId: user.orgId,
        enrolmentId: found.enrolment.enrolmentId,
        publicKey: ctx.params.publicKey,
        tokenHash: hashToken(answer.requestToken),
        status: "pending",
        createdAt: new Date(now).toISOString(),
        expiresAt: answer.expiresAt,
      },
      maxPending: MAX_PENDING_RECOVERIES,
      events: [events.record("recovery.requested", own(user))],
    });
    events.kick();
  }
  created(ctx, `/recovery/requests/${requestId}`);
  return answer;
}

async function state(rt: Runtime, ctx: Ctx<SecretParams>) {
  const { store, clock } = rt;
  await perAddress(rt, ctx);
  const request = await requestOf(rt, ctx.params.requestId, ctx.params.requestToken);
  // A decoy: a pending request that nobody approves.
  if (!request) return { requestId: ctx.params.requestId, status: "pending" as const, threshold: 2, approvals: [] };
  const found = await store.security.getRecoveryEnrolment(request.userId);
  const approvals = (await store.security.listApprovals(request.requestId)).map(({ requestId: _r, ...a }) => a);
  const { status, threshold, disclose } = decideRecoveryState(request, found?.enrolment ?? null, approvals.length, clock.timestamp());
  const base = { requestId: request.requestId, status, threshold, approvals };
  const user = disclose ? await store.accounts.findUserById(request.userId) : null;
  return user && found ? { ...base, ...sealedAccount(user, found.enrolment) } : base;
}

async function session(rt: Runtime, ctx: Ctx<SessionParams>) {
  const { store, clock, events } = rt;
  await perAddress(rt, ctx);
  const p = ctx.params;
  const request = await requestOf(rt, p.requestId, p.requestToken);
  const enrolment = request && (await store.security.getRecoveryEnrolment(request.userId));
  const approvals = request ? await store.security.listApprovals(request.requestId) : [];
  const found = request && (await store.accounts.findUserById(request.userId));
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
