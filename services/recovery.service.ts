/**
 * k-of-n account recovery (the rules: lib/domain/account-recovery.ts; the formats:
 * protocol/formats/recovery.ts). The server keeps the user's signed enrolment (shares wrapped to
 * trustees, the sealed copy), passes a new device's request to the trustees, keeps their
 * re-wrapped shares, and lets the device in once k trustees approved and it proves it rebuilt the
 * account's keys. It can check signatures and counts; it can open nothing.
 */
import { createHash } from "node:crypto";
import type { Context, ServiceSchema } from "moleculer";
import { newId, type UserId } from "../lib/domain/ids";
import {
  decideRecoveryApproval,
  decideRecoveryCompletion,
  decideRecoveryEnrolment,
  isOpenable,
  MAX_PENDING_RECOVERIES,
  RECOVERY_REQUEST_TTL_MS,
  type RecoveryRequest,
  type TrusteeState,
} from "../lib/domain/account-recovery";
import { DEFAULT_POLICIES } from "../lib/domain/org-policies";
import { signatureVerifies } from "../lib/domain/keys";
import { keyFingerprint } from "../lib/domain/roster";
import { normalizeEmail } from "../lib/domain/email";
import { hashToken, newOpaqueToken } from "../lib/domain/opaque-tokens";
import { addressLimit } from "../lib/domain/address-limits";
import { decideDeviceName } from "../lib/domain/sessions";
import {
  approvalNotSigned,
  enrolmentNotSigned,
  noRecoveryEnrolment,
  recoveryNotPending,
  tooFewApprovals,
  recoveryRequestNotFound,
  recoveryTokenWrong,
  removedFromOrg,
  tokenUserGone,
} from "../lib/domain/refusals";
import { approvalBytes, enrolmentBytes, sessionProofBytes } from "../protocol/formats/recovery";
import { callerOf, created, noContent, type RequestMeta } from "../lib/http/context";
import { paramsOf } from "../lib/http/routes";
import { limitPerAddress } from "../lib/limits/counters";
import { signIn } from "../lib/auth/sign-in";
import { announceEnded } from "../lib/auth/session-check";
import type { UserRecord } from "../lib/store/port";
import type { Runtime } from "../lib/runtime";
import { runnerService } from "../app/node-runtime";

type Ctx<P = unknown> = Context<P, RequestMeta>;

const sha256Hex = (b64: string) => createHash("sha256").update(Buffer.from(b64, "base64")).digest("hex");
const verifies = (bytes: Uint8Array, signature: string, key: string) =>
  signatureVerifies(Buffer.from(bytes), Buffer.from(signature, "base64"), key);

interface EnrolParams {
  enrolmentId: string;
  threshold: number;
  copy: string;
  signature: string;
  shares: Array<{ trusteeId: UserId; encryptedShare: string; trusteeKeys: string }>;
}

export function recoveryService(rt: Runtime): ServiceSchema {
  const { store, clock, events, counters, config, metrics } = rt;

  async function caller(ctx: Ctx): Promise<UserRecord> {
    const user = await store.accounts.findUserById(callerOf(ctx).userId);
    if (!user) throw tokenUserGone();
    return user;
  }

  const summary = (r: RecoveryRequest, approvedBy?: string[]) => ({
    requestId: r.requestId,
    userId: r.userId,
    publicKey: r.publicKey,
    // An expired request reads as cancelled: nothing more can happen to it.
    status: isOpenable(r, clock.timestamp()) || (r.status !== "pending" && r.status !== "opened") ? r.status : ("cancelled" as const),
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    ...(r.endedAt && { endedAt: r.endedAt }),
    ...(approvedBy && { approvedBy }),
  });

  /**
   * A request's secret: sealed for the server, naming the request and whether it is a decoy (an
   * address with no account, or none enrolled: nothing stored). Decoys and real ones are alike in
   * form and length, and a decoy answers as a pending request that no trustee approves, so neither
   * the request nor its polling tells a stranger whether the address is enrolled.
   */
  const REQUEST_TOKEN = "recovery-request";
  const requestToken = (requestId: string, decoy: boolean) =>
    rt.sealer.seal(REQUEST_TOKEN, { r: requestId, d: decoy ? 1 : 0, n: newOpaqueToken() }, RECOVERY_REQUEST_TTL_MS);

  /** The request a device names with its secret (null: a decoy); 404 for any other secret. */
  async function requestOf(requestId: string, token: string): Promise<RecoveryRequest | null> {
    const opened = rt.sealer.open<{ r: string; d: 0 | 1 }>(REQUEST_TOKEN, token);
    if (!opened || opened.r !== requestId) throw recoveryTokenWrong();
    if (opened.d === 1) return null;
    const request = await store.security.findRecoveryRequest(requestId);
    if (!request || request.tokenHash !== hashToken(token)) throw recoveryTokenWrong();
    return request;
  }

  /** Ends the sessions opened requests began (their owner stopped them, or left recovery). */
  async function endOpenedSessions(ctx: Ctx, requests: RecoveryRequest[]): Promise<void> {
    const ended: string[] = [];
    for (const r of requests) {
      if (r.status !== "opened" || r.sessionId === undefined) continue;
      ended.push(...(await store.accounts.endSessions({ userId: r.userId, now: clock.timestamp(), only: r.sessionId })));
    }
    await announceEnded(ctx, rt.sessions, ended);
  }

  /** Recovery's public routes, per client address (as registration's). */
  const perAddress = (ctx: Ctx) =>
    limitPerAddress(counters, ctx.meta.clientIp, addressLimit("register", config.registerRateLimit), () => metrics.rateLimited("register"));

  return {
    name: "recovery",
    actions: {
      enrol: {
        params: paramsOf("recovery.enrol"),
        async handler(ctx: Ctx<EnrolParams>) {
          const p = ctx.params;
          const user = await caller(ctx);
          const policies = (await store.security.getPolicies(user.orgId)) ?? DEFAULT_POLICIES;
          const trustees = new Map<UserId, TrusteeState & UserRecord>();
          for (const s of p.shares) {
            const t = await store.accounts.findUserById(s.trusteeId);
            if (t) trustees.set(t.userId, t);
          }
          decideRecoveryEnrolment({
            userId: user.userId,
            orgId: user.orgId,
            threshold: p.threshold,
            trusteeIds: p.shares.map((s) => s.trusteeId),
            trustees,
            policyMinThreshold: policies.recoveryMinThreshold,
          });
          // The user's signature over what is stored, as the user's client made it: the server checks its form, the clients what it means.
          const bytes = enrolmentBytes({
            enrolmentId: p.enrolmentId,
            userId: user.userId,
            threshold: p.threshold,
            copy: sha256Hex(p.copy),
            trustees: p.shares.map((s) => ({ trusteeId: s.trusteeId, keys: s.trusteeKeys, share: sha256Hex(s.encryptedShare) })),
          });
          if (!verifies(bytes, p.signature, user.signingPublicKey)) throw enrolmentNotSigned();
          const enrolment = {
            enrolmentId: p.enrolmentId,
            userId: user.userId,
            orgId: user.orgId,
            threshold: p.threshold,
            copy: p.copy,
            signature: p.signature,
            kdfSalt: user.kdf.salt,
            createdAt: clock.timestamp(),
          };
          await store.security.putRecoveryEnrolment({
            enrolment,
            shares: p.shares.map((s) => ({ enrolmentId: p.enrolmentId, ...s })),
            events: [events.record("recovery.enrolled", { actorId: user.userId, orgId: user.orgId, targetUserId: user.userId })],
          });
          events.kick();
          return { ...enrolmentView(enrolment, p.shares), current: true };
        },
      },

      get: {
        async handler(ctx: Ctx) {
          const user = await caller(ctx);
          const found = await store.security.getRecoveryEnrolment(user.userId);
          if (!found) throw noRecoveryEnrolment();
          // Made under another password (the copy holds a key that no longer opens the account), or fewer than k trustees
          // still hold the keys their shares were wrapped to (one who rotated or left cannot open theirs): stale.
          let holding = 0;
          for (const s of found.shares) {
            const t = await store.accounts.findUserById(s.trusteeId);
            if (t && t.removedAt === undefined && keyFingerprint(t) === s.trusteeKeys) holding++;
          }
          const current = found.enrolment.kdfSalt === user.kdf.salt && holding >= found.enrolment.threshold;
          return { ...enrolmentView(found.enrolment, found.shares), current };
        },
      },

      unenrol: {
        async handler(ctx: Ctx) {
          const user = await caller(ctx);
          const open = await store.security.listRecoveryRequests({ userId: user.userId, now: clock.timestamp(), pendingOnly: false });
          const gone = await store.security.deleteRecoveryEnrolment({
            userId: user.userId,
            events: [events.record("recovery.unenrolled", { actorId: user.userId, orgId: user.orgId, targetUserId: user.userId })],
          });
          if (!gone) throw noRecoveryEnrolment();
          events.kick();
          await endOpenedSessions(ctx, open);
          return noContent(ctx);
        },
      },

      myRequests: {
        async handler(ctx: Ctx) {
          const user = await caller(ctx);
          const requests = await store.security.listRecoveryRequests({ userId: user.userId, now: clock.timestamp(), pendingOnly: false });
          const out = [];
          for (const r of requests)
            out.push(
              summary(
                r,
                (await store.security.listApprovals(r.requestId)).map((a) => a.trusteeId),
              ),
            );
          return { requests: out };
        },
      },

      cancel: {
        params: paramsOf("recovery.cancel"),
        async handler(ctx: Ctx<{ requestId: string }>) {
          const user = await caller(ctx);
          const request = await store.security.findRecoveryRequest(ctx.params.requestId);
          if (!request || request.userId !== user.userId) throw recoveryRequestNotFound();
          const ended = await store.security.endRecoveryRequest({
            requestId: request.requestId,
            status: "cancelled",
            at: clock.timestamp(),
            events: [events.record("recovery.cancelled", { actorId: user.userId, orgId: user.orgId, targetUserId: user.userId })],
          });
          if (!ended) throw recoveryRequestNotFound();
          events.kick();
          // Opened already (a device signed in with it): that session ends too.
          await endOpenedSessions(ctx, [request]);
          return noContent(ctx);
        },
      },

      request: {
        params: paramsOf("recovery.request"),
        async handler(ctx: Ctx<{ email: string; publicKey: string }>) {
          await perAddress(ctx);
          const email = normalizeEmail(ctx.params.email);
          const user = await store.accounts.findUserByEmail(email);
          const found = user && user.removedAt === undefined ? await store.security.getRecoveryEnrolment(user.userId) : null;
          const now = clock.nowMs();
          const requestId = newId();
          const decoy = !user || !found || found.enrolment.kdfSalt !== user.kdf.salt;
          const answer = {
            requestId,
            requestToken: requestToken(requestId, decoy),
            expiresAt: new Date(now + RECOVERY_REQUEST_TTL_MS).toISOString(),
          };
          // An address with no account, or none enrolled: the same answer, and nothing stored (no trustee is ever asked).
          if (decoy) {
            created(ctx, `/recovery/requests/${answer.requestId}`);
            return answer;
          }
          await store.security.createRecoveryRequest({
            request: {
              requestId: answer.requestId,
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
            events: [events.record("recovery.requested", { actorId: user.userId, orgId: user.orgId, targetUserId: user.userId })],
          });
          events.kick();
          created(ctx, `/recovery/requests/${answer.requestId}`);
          return answer;
        },
      },

      state: {
        params: paramsOf("recovery.state"),
        async handler(ctx: Ctx<{ requestId: string; requestToken: string }>) {
          await perAddress(ctx);
          const request = await requestOf(ctx.params.requestId, ctx.params.requestToken);
          // A decoy: a pending request that nobody approves.
          if (!request) return { requestId: ctx.params.requestId, status: "pending" as const, threshold: 2, approvals: [] };
          const found = await store.security.getRecoveryEnrolment(request.userId);
          const approvals = (await store.security.listApprovals(request.requestId)).map(({ requestId: _r, ...a }) => a);
          const threshold = found?.enrolment.enrolmentId === request.enrolmentId ? found.enrolment.threshold : 2;
          const base = { requestId: request.requestId, status: summary(request).status, threshold, approvals };
          // The account's sealed keys only for a request still open, with k approvals (before, they would let whoever asked guess
          // the password offline; after a cancel or expiry, its owner stopped it).
          const open = isOpenable(request, clock.timestamp()) && found?.enrolment.enrolmentId === request.enrolmentId;
          if (!open || !found || approvals.length < threshold) return base;
          const user = await store.accounts.findUserById(request.userId);
          if (!user) return base;
          return {
            ...base,
            userId: user.userId,
            enrolmentId: found.enrolment.enrolmentId,
            copy: found.enrolment.copy,
            email: user.email,
            accountVersion: user.accountVersion,
            kdf: user.kdf,
            ...(user.kdfStatement && { kdfStatement: user.kdfStatement }),
            publicKey: user.publicKey,
            signingPublicKey: user.signingPublicKey,
            publicKeySignature: user.publicKeySignature,
            encryptedPrivateKey: user.encryptedPrivateKey,
            encryptedSigningPrivateKey: user.encryptedSigningPrivateKey,
          };
        },
      },

      session: {
        params: paramsOf("recovery.session"),
        async handler(ctx: Ctx<{ requestId: string; requestToken: string; signature: string; deviceName?: string }>) {
          await perAddress(ctx);
          const p = ctx.params;
          const request = await requestOf(p.requestId, p.requestToken);
          // A decoy has no approvals: refused as a real request with too few.
          if (!request) throw tooFewApprovals(0, 2);
          const found = await store.security.getRecoveryEnrolment(request.userId);
          const approvals = await store.security.listApprovals(request.requestId);
          decideRecoveryCompletion({
            request,
            tokenHash: hashToken(p.requestToken),
            enrolment: found?.enrolment ?? null,
            approvals: approvals.filter((a) => found?.shares.some((s) => s.trusteeId === a.trusteeId)).length,
            now: clock.timestamp(),
          });
          const user = await store.accounts.findUserById(request.userId);
          if (!user) throw recoveryTokenWrong();
          if (user.removedAt !== undefined) throw removedFromOrg();
          // Made under another password: its copy no longer opens the account.
          if (found!.enrolment.kdfSalt !== user.kdf.salt) throw recoveryNotPending();
          // The device rebuilt the account's keys: it signs with the signing key the copy opened.
          if (!verifies(sessionProofBytes({ requestId: request.requestId, userId: user.userId }), p.signature, user.signingPublicKey)) {
            throw approvalNotSigned();
          }
          const deviceName = decideDeviceName(p.deviceName ?? "recovered device");
          // This session may set the new password without the old one (users.changePassword, within
          // RECOVERY_PASSWORD_WINDOW_MS), and is never enrol-only: it must be able to. The request opens first; only then
          // does every other session of the account end (whoever held one does not keep it). The enrolment stays until
          // the new password is set, so a device that fails in between asks again.
          const login = await signIn(rt, ctx, user, { deviceName, address: ctx.meta.clientIp ?? "unknown", fullAccess: true });
          const opened = await store.security.openRecoveryRequest({
            requestId: request.requestId,
            sessionId: login.sessionId,
            at: clock.timestamp(),
            events: [events.record("recovery.opened", { actorId: user.userId, orgId: user.orgId, targetUserId: user.userId })],
          });
          if (!opened) {
            await store.accounts.endSessions({ userId: user.userId, now: clock.timestamp(), only: login.sessionId });
            throw recoveryNotPending();
          }
          events.kick();
          const others = await store.accounts.endSessions({ userId: user.userId, now: clock.timestamp(), except: login.sessionId });
          await announceEnded(ctx, rt.sessions, others);
          return login;
        },
      },

      tasks: {
        async handler(ctx: Ctx) {
          const me = callerOf(ctx).userId;
          const requests = await store.security.listRequestsForTrustee({ trusteeId: me, now: clock.timestamp() });
          const tasks = [];
          for (const r of requests) {
            const found = await store.security.getRecoveryEnrolment(r.userId);
            if (!found || found.enrolment.enrolmentId !== r.enrolmentId) continue;
            const approvals = await store.security.listApprovals(r.requestId);
            tasks.push({
              request: summary(
                r,
                approvals.map((a) => a.trusteeId),
              ),
              enrolment: {
                enrolmentId: found.enrolment.enrolmentId,
                threshold: found.enrolment.threshold,
                copy: found.enrolment.copy,
                signature: found.enrolment.signature,
                createdAt: found.enrolment.createdAt,
              },
              trustees: found.shares.map((s) => ({ trusteeId: s.trusteeId, trusteeKeys: s.trusteeKeys, encryptedShare: s.encryptedShare })),
              approved: approvals.some((a) => a.trusteeId === me),
            });
          }
          return { tasks };
        },
      },

      approve: {
        params: paramsOf("recovery.approve"),
        async handler(ctx: Ctx<{ requestId: string; encryptedShare: string; signature: string }>) {
          const trustee = await caller(ctx);
          const request = await store.security.findRecoveryRequest(ctx.params.requestId);
          if (!request || request.orgId !== trustee.orgId) throw recoveryRequestNotFound();
          const found = await store.security.getRecoveryEnrolment(request.userId);
          const now = clock.timestamp();
          decideRecoveryApproval({
            request,
            enrolmentId: found?.enrolment.enrolmentId,
            trusteeIds: found?.shares.map((s) => s.trusteeId) ?? [],
            trusteeId: trustee.userId,
            now,
          });
          const bytes = approvalBytes({
            requestId: request.requestId,
            userId: request.userId,
            enrolmentId: request.enrolmentId,
            trusteeId: trustee.userId,
            requestKey: sha256Hex(request.publicKey),
            share: sha256Hex(ctx.params.encryptedShare),
          });
          if (!verifies(bytes, ctx.params.signature, trustee.signingPublicKey)) throw approvalNotSigned();
          await store.security.addRecoveryApproval({
            approval: {
              requestId: request.requestId,
              trusteeId: trustee.userId,
              encryptedShare: ctx.params.encryptedShare,
              signature: ctx.params.signature,
              approvedAt: now,
            },
            now,
            events: [events.record("recovery.approved", { actorId: trustee.userId, orgId: trustee.orgId, targetUserId: request.userId })],
          });
          events.kick();
          return noContent(ctx);
        },
      },
    },
  };
}

function enrolmentView(
  e: { enrolmentId: string; userId: string; threshold: number; copy: string; signature: string; createdAt: string },
  shares: ReadonlyArray<{ trusteeId: string; encryptedShare: string; trusteeKeys: string }>,
) {
  return {
    enrolmentId: e.enrolmentId,
    userId: e.userId,
    threshold: e.threshold,
    copy: e.copy,
    signature: e.signature,
    createdAt: e.createdAt,
    shares: shares.map((s) => ({ trusteeId: s.trusteeId, encryptedShare: s.encryptedShare, trusteeKeys: s.trusteeKeys })),
  };
}

/** The service as moleculer-runner loads this file (moleculer.config.ts). */
export default runnerService(recoveryService);
