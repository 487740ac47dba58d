/**
 * An account's security on MongoDB (the port: ../port/security.ts; SQL: ../sql/security.ts).
 *
 * What the SQL adapter serializes with the account's row lock, this one serializes with the
 * account's document (`lockAccount`); what it does with a conditional UPDATE, this one does with
 * a conditional `updateOne` (atomic on its document, and in a transaction a write that conflicts
 * with any other on that document). An approval writes its request's document first, as the SQL
 * adapter writes its row, so an approval and the request's end come one after the other.
 */
import type { OrgId, UserId } from "../../domain/ids";
import { decideFactorEnrolment, decideFactorRemoval, type SecondFactor } from "../../domain/accounts/second-factors";
import type { OrgPolicies } from "../../domain/orgs/policies";
import type { RecoveryApproval, RecoveryEnrolment, RecoveryRequest, RecoveryShare } from "../../domain/accounts/recovery";
import type { RecoveryAsk, RecoveryTarget } from "../../domain/accounts/recovery-requests";
import { factorNotFound, recoveryNotPending } from "../../domain/accounts/refusals";
import { decideNewApproval } from "../../domain/store-checks";
import type { ArgsOf, FactorChangeOutcome, SecurityStore } from "../port";
import type { ClientSession } from "mongodb";
import type { MongoContext } from "./context";
import {
  recoveryApprovalDoc,
  recoveryApprovalKey,
  recoveryCodeKey,
  recoveryEnrolmentDoc,
  recoveryShareDoc,
  secondFactorDoc,
  storedPolicies,
  toRecoveryApproval,
  toRecoveryEnrolment,
  toRecoveryRequest,
  toRecoveryShare,
  toSecondFactor,
} from "./documents";
import { writeOutbox } from "./outbox";
import { findRecoveryAskIn, findRecoveryTargetIn, startRecoveryRequestIn } from "./recovery-requests";
import { narrowSessionsIn, orgOfIn, policyRequiresIn } from "./session-scope";
import { applyFactorChangeIn } from "./sessions";
import { forgetDevicesIn } from "./remembered-devices";
import { lockAccount } from "./writes";
import { MongoPasskeyLogins } from "./passkey-logins";

export class MongoSecurity extends MongoPasskeyLogins implements SecurityStore {
  // ---------------------------------------------------------------- second factors

  async listFactors(userId: UserId): Promise<SecondFactor[]> {
    const docs = await this.c.secondFactors.find({ userId }).sort({ createdAt: 1, _id: 1 }).toArray();
    return docs.map(toSecondFactor);
  }

  async addFactor({ factor, sessions, events }: ArgsOf<SecurityStore["addFactor"]>): Promise<FactorChangeOutcome> {
    return this.c.tx(async (session) => {
      await lockAccount(this.c, session, factor.userId);
      const existing = await this.c.secondFactors
        .find({ userId: factor.userId }, { session, projection: { kind: 1, credentialId: 1 } })
        .toArray();
      decideFactorEnrolment(
        existing.map((d) => ({ kind: d.kind, ...(d.credentialId != null && { credentialId: d.credentialId }) })),
        factor.kind,
        factor.credentialId,
      );
      await writeOutbox(this.c, session, events);
      // Unique on (userId, slot): a second authenticator app that got past the check is a duplicate key (409).
      await this.c.secondFactors.insertOne(secondFactorDoc(factor), { session });
      return { endedSessions: await applyFactorChangeIn(this.c, session, factor.userId, sessions, factor.createdAt) };
    });
  }

  async removeFactor({ userId, factorId, sessions, at, events }: ArgsOf<SecurityStore["removeFactor"]>): Promise<FactorChangeOutcome> {
    return this.c.tx(async (session) => {
      await lockAccount(this.c, session, userId);
      // Read after the account's write: a policy change meanwhile conflicts with it, and this retries under the new policy.
      const policyRequires = await policyRequiresIn(this.c, session, await orgOfIn(this.c, session, userId));
      const gone = await this.c.secondFactors.deleteOne({ _id: factorId, userId }, { session });
      if (gone.deletedCount === 0) throw factorNotFound();
      const left = await this.c.secondFactors.countDocuments({ userId }, { session });
      // A refusal aborts the transaction: the factor stays.
      decideFactorRemoval(left, policyRequires);
      if (left === 0) await this.c.recoveryCodes.deleteMany({ userId }, { session });
      // A device remembered for the second step stood in for factors that are no longer all there.
      await forgetDevicesIn(this.c, session, userId);
      await writeOutbox(this.c, session, events);
      return { endedSessions: await applyFactorChangeIn(this.c, session, userId, sessions, at) };
    });
  }

  async useTotpStep({ factorId, step, at }: ArgsOf<SecurityStore["useTotpStep"]>): Promise<boolean> {
    // Conditional: of two sign-ins with codes of one step, exactly one moves the step.
    const r = await this.c.secondFactors.updateOne(
      { _id: factorId, $or: [{ lastStep: { $exists: false } }, { lastStep: { $lt: step } }] },
      { $set: { lastStep: step, lastUsedAt: at } },
    );
    return r.matchedCount === 1;
  }

  async useWebauthnCounter({ factorId, from, to, at }: ArgsOf<SecurityStore["useWebauthnCounter"]>): Promise<boolean> {
    // Matched, not modified: a key that keeps no counter moves it from 0 to 0, as the SQL UPDATE counts it.
    const r = await this.c.secondFactors.updateOne({ _id: factorId, counter: from }, { $set: { counter: to, lastUsedAt: at } });
    return r.matchedCount === 1;
  }

  async replaceRecoveryCodes(args: ArgsOf<SecurityStore["replaceRecoveryCodes"]>): Promise<FactorChangeOutcome> {
    const { userId, codeHashes, at, sessions, events } = args;
    return this.c.tx(async (session) => {
      await lockAccount(this.c, session, userId);
      await writeOutbox(this.c, session, events);
      await this.c.recoveryCodes.deleteMany({ userId }, { session });
      if (codeHashes.length > 0) {
        await this.c.recoveryCodes.insertMany(
          codeHashes.map((codeHash) => ({ _id: recoveryCodeKey(userId, codeHash), userId, codeHash, createdAt: at })),
          { session },
        );
      }
      return { endedSessions: sessions ? await applyFactorChangeIn(this.c, session, userId, sessions, at) : [] };
    });
  }

  async useRecoveryCode({ userId, codeHash, at }: ArgsOf<SecurityStore["useRecoveryCode"]>): Promise<boolean> {
    // Conditional: of two sign-ins with one code, exactly one marks it used.
    const r = await this.c.recoveryCodes.updateOne(
      { _id: recoveryCodeKey(userId, codeHash), userId, usedAt: { $exists: false } },
      { $set: { usedAt: at } },
    );
    return r.matchedCount === 1;
  }

  async recoveryCodesLeft(userId: UserId): Promise<number> {
    return this.c.recoveryCodes.countDocuments({ userId, usedAt: { $exists: false } });
  }

  // ---------------------------------------------------------------- policies

  async getPolicies(orgId: OrgId): Promise<OrgPolicies | null> {
    const doc = await this.c.orgPolicies.findOne({ _id: orgId });
    return doc ? doc.policies : null;
  }

  async setPolicies({ orgId, policies, at, events }: ArgsOf<SecurityStore["setPolicies"]>): Promise<{ narrowedSessions: string[] }> {
    return this.c.tx(async (session) => {
      await writeOutbox(this.c, session, events);
      await this.c.orgPolicies.updateOne(
        { _id: orgId },
        { $set: { policies: storedPolicies(policies), updatedAt: at } },
        { session, upsert: true },
      );
      return { narrowedSessions: await narrowSessionsIn(this.c, session, orgId, policies, at) };
    });
  }

  // ---------------------------------------------------------------- account recovery

  async putRecoveryEnrolment({ enrolment: e, shares, events }: ArgsOf<SecurityStore["putRecoveryEnrolment"]>): Promise<void> {
    await this.c.tx(async (session) => {
      await lockAccount(this.c, session, e.userId);
      await writeOutbox(this.c, session, events);
      const old = await this.c.recoveryEnrolments.findOne({ _id: e.userId }, { session, projection: { enrolmentId: 1 } });
      if (old) {
        await this.c.recoveryRequests.updateMany(
          { enrolmentId: old.enrolmentId, status: { $in: ["pending", "opened"] } },
          { $set: { status: "cancelled", endedAt: e.createdAt } },
          { session },
        );
        await this.c.recoveryShares.deleteMany({ enrolmentId: old.enrolmentId }, { session });
        await this.c.recoveryEnrolments.deleteOne({ _id: e.userId }, { session });
      }
      await this.c.recoveryEnrolments.insertOne(recoveryEnrolmentDoc(e), { session });
      await this.c.recoveryShares.insertMany(
        shares.map((s) => recoveryShareDoc(e.enrolmentId, s)),
        { session },
      );
    });
  }

  async getRecoveryEnrolment(userId: UserId): Promise<{ enrolment: RecoveryEnrolment; shares: RecoveryShare[] } | null> {
    // One snapshot: an enrolment replaced meanwhile is seen wholly or not at all.
    return this.c.consistentRead(async (session) => {
      const e = await this.c.recoveryEnrolments.findOne({ _id: userId }, { session });
      if (!e) return null;
      const shares = await this.c.recoveryShares.find({ enrolmentId: e.enrolmentId }, { session }).sort({ trusteeId: 1 }).toArray();
      return { enrolment: toRecoveryEnrolment(e), shares: shares.map(toRecoveryShare) };
    });
  }

  async deleteRecoveryEnrolment({ userId, events }: ArgsOf<SecurityStore["deleteRecoveryEnrolment"]>): Promise<boolean> {
    return this.c.tx(async (session) => {
      await lockAccount(this.c, session, userId);
      const old = await this.c.recoveryEnrolments.findOne({ _id: userId }, { session, projection: { enrolmentId: 1 } });
      if (!old) return false;
      await writeOutbox(this.c, session, events);
      // As the SQL adapter: cancelled, without an end time (the port gives none).
      await this.c.recoveryRequests.updateMany(
        { enrolmentId: old.enrolmentId, status: { $in: ["pending", "opened"] } },
        { $set: { status: "cancelled", endedAt: new Date().toISOString() } },
        { session },
      );
      await this.c.recoveryShares.deleteMany({ enrolmentId: old.enrolmentId }, { session });
      await this.c.recoveryEnrolments.deleteOne({ _id: userId }, { session });
      return true;
    });
  }

  findRecoveryTarget(email: string): Promise<RecoveryTarget | null> {
    return findRecoveryTargetIn(this.c, email);
  }

  startRecoveryRequest({ request, events }: ArgsOf<SecurityStore["startRecoveryRequest"]>): Promise<void> {
    return startRecoveryRequestIn(this.c, request, events);
  }

  findRecoveryAsk(requestId: string): Promise<RecoveryAsk | null> {
    return findRecoveryAskIn(this.c, requestId);
  }

  async openRecoveryRequest({ requestId, sessionId, at, events }: ArgsOf<SecurityStore["openRecoveryRequest"]>): Promise<boolean> {
    return this.c.tx(async (session) => {
      const r = await this.c.recoveryRequests.updateOne(
        { _id: requestId, status: { $in: ["pending", "opened"] }, expiresAt: { $gt: at } },
        { $set: { status: "opened", sessionId, openedAt: at }, $inc: { writeSeq: 1 } },
        { session },
      );
      if (r.matchedCount !== 1) return false;
      await writeOutbox(this.c, session, events);
      return true;
    });
  }

  async findOpenedRecovery({ userId, sessionId, since }: ArgsOf<SecurityStore["findOpenedRecovery"]>): Promise<RecoveryRequest | null> {
    const doc = await this.c.recoveryRequests.findOne({ userId, sessionId, status: "opened", openedAt: { $gt: since } });
    return doc ? toRecoveryRequest(doc) : null;
  }

  async findRecoveryRequest(requestId: string): Promise<RecoveryRequest | null> {
    const doc = await this.c.recoveryRequests.findOne({ _id: requestId, userId: { $ne: null } });
    return doc ? toRecoveryRequest(doc) : null;
  }

  async listRecoveryRequests({ userId, now, pendingOnly }: ArgsOf<SecurityStore["listRecoveryRequests"]>): Promise<RecoveryRequest[]> {
    const filter = pendingOnly ? { userId, status: "pending" as const, expiresAt: { $gt: now } } : { userId };
    const docs = await this.c.recoveryRequests.find(filter).sort({ createdAt: -1, _id: -1 }).limit(50).toArray();
    return docs.map(toRecoveryRequest);
  }

  async listRequestsForTrustee({ trusteeId, now }: ArgsOf<SecurityStore["listRequestsForTrustee"]>): Promise<RecoveryRequest[]> {
    // The SQL join, on one snapshot: the trustee's shares, then the pending requests of their enrolments.
    return this.c.consistentRead(async (session) => {
      const shares = await this.c.recoveryShares.find({ trusteeId }, { session, projection: { enrolmentId: 1 } }).toArray();
      if (shares.length === 0) return [];
      const docs = await this.c.recoveryRequests
        .find({ enrolmentId: { $in: shares.map((s) => s.enrolmentId) }, status: "pending", expiresAt: { $gt: now } }, { session })
        .sort({ createdAt: 1, _id: 1 })
        .limit(100)
        .toArray();
      return docs.map(toRecoveryRequest);
    });
  }

  async listApprovals(requestId: string): Promise<RecoveryApproval[]> {
    const docs = await this.c.recoveryApprovals.find({ requestId }).sort({ approvedAt: 1, trusteeId: 1 }).toArray();
    return docs.map(toRecoveryApproval);
  }

  async addRecoveryApproval({ approval: a, now, events }: ArgsOf<SecurityStore["addRecoveryApproval"]>): Promise<void> {
    await this.c.tx(async (session) => {
      // A real write on the request first (the lock): an approval and the request's end conflict, and one retries.
      const held = await this.c.recoveryRequests.updateOne(
        { _id: a.requestId, status: "pending", expiresAt: { $gt: now } },
        { $inc: { writeSeq: 1 } },
        { session },
      );
      if (held.matchedCount !== 1) throw recoveryNotPending();
      const dup = await this.c.recoveryApprovals.findOne(
        { _id: recoveryApprovalKey(a.requestId, a.trusteeId) },
        { session, projection: { _id: 1 } },
      );
      decideNewApproval(dup !== null);
      await writeOutbox(this.c, session, events);
      await this.c.recoveryApprovals.insertOne(recoveryApprovalDoc(a), { session });
    });
  }

  async endRecoveryRequest({ requestId, status, at, events }: ArgsOf<SecurityStore["endRecoveryRequest"]>): Promise<boolean> {
    return this.c.tx(async (session) => {
      if (status === "completed") {
        if (!(await completeRecoveryIn(this.c, session, requestId, at))) return false;
      } else {
        // Cancelled while pending or opened: its owner stops it. Conditional: of two ends at once, one conflicts and retries.
        const r = await this.c.recoveryRequests.updateOne(
          { _id: requestId, status: { $in: ["pending", "opened"] } },
          { $set: { status, endedAt: at }, $inc: { writeSeq: 1 } },
          { session },
        );
        if (r.matchedCount !== 1) return false;
      }
      await writeOutbox(this.c, session, events);
      return true;
    });
  }
}

/**
 * Completes an opened request (the new password set) in the caller's transaction: the enrolment is
 * spent (deleted, its other requests cancelled). False when the request is not opened.
 */
export async function completeRecoveryIn(c: MongoContext, session: ClientSession, requestId: string, at: string): Promise<boolean> {
  const req = await c.recoveryRequests.findOneAndUpdate(
    { _id: requestId, status: "opened" },
    { $set: { status: "completed", endedAt: at }, $inc: { writeSeq: 1 } },
    { session, projection: { enrolmentId: 1 }, returnDocument: "before" },
  );
  if (!req) return false;
  // Only an account's request opens (a decoy's never has approvals): it names its enrolment.
  if (req.enrolmentId === null) return true;
  await c.recoveryRequests.updateMany(
    { enrolmentId: req.enrolmentId, status: { $in: ["pending", "opened"] } },
    { $set: { status: "cancelled", endedAt: at } },
    { session },
  );
  await c.recoveryShares.deleteMany({ enrolmentId: req.enrolmentId }, { session });
  await c.recoveryEnrolments.deleteOne({ enrolmentId: req.enrolmentId }, { session });
  return true;
}
