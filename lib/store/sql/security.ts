/** An account's security on SQL (the port: ../port/security.ts; MongoDB: ../mongo/security.ts). */
import type { OrgId, UserId } from "../../domain/ids";
import { decideFactorEnrolment, decideFactorRemoval, type SecondFactor } from "../../domain/accounts/second-factors";
import type { OrgPolicies } from "../../domain/orgs/policies";
import type { RecoveryApproval, RecoveryEnrolment, RecoveryRequest, RecoveryShare } from "../../domain/accounts/recovery";
import type { RecoveryAsk, RecoveryTarget } from "../../domain/accounts/recovery-requests";
import { factorNotFound, recoveryNotPending } from "../../domain/accounts/refusals";
import { decideNewApproval } from "../../domain/store-checks";
import type { ArgsOf, FactorChangeOutcome, SecurityStore } from "../port";
import type { SqlContext } from "./context";
import type { SecondFactorsTable } from "./schema";
import { completeRecoveryIn, dropEnrolment, findRecoveryAskIn, findRecoveryTargetIn, startRecoveryRequestIn, toRequest } from "./recovery";
import { writeOutbox } from "./outbox";
import { narrowSessionsIn, orgOfIn, policyRequiresIn } from "./session-scope";
import { applyFactorChangeIn } from "./sessions";
import { forgetDevicesIn } from "./remembered-devices";
import { lockAccount } from "./writes";
import { SqlPasskeyLogins } from "./passkey-logins";

const num = (v: number | string | null): number | undefined => (v === null ? undefined : Number(v));

function toFactor(r: SecondFactorsTable): SecondFactor {
  return {
    factorId: r.factor_id,
    userId: r.user_id,
    kind: r.kind,
    name: r.name,
    createdAt: r.created_at,
    ...(r.last_used_at !== null && { lastUsedAt: r.last_used_at }),
    ...(r.sealed_secret !== null && { sealedSecret: r.sealed_secret }),
    ...(r.last_step !== null && { lastStep: num(r.last_step) }),
    ...(r.credential_id !== null && { credentialId: r.credential_id }),
    ...(r.public_key !== null && { publicKey: r.public_key }),
    ...(r.counter !== null && { counter: num(r.counter) }),
    ...(r.transports !== null && { transports: JSON.parse(r.transports) as string[] }),
  };
}

export class SqlSecurity extends SqlPasskeyLogins implements SecurityStore {
  constructor(c: SqlContext) {
    super(c);
  }

  async listFactors(userId: UserId): Promise<SecondFactor[]> {
    const rows = await this.c.db.selectFrom("second_factors").selectAll().where("user_id", "=", userId).orderBy("created_at").execute();
    return rows.map(toFactor);
  }

  async addFactor({ factor, sessions, events }: ArgsOf<SecurityStore["addFactor"]>): Promise<FactorChangeOutcome> {
    return this.c.tx(async (trx) => {
      await lockAccount(trx, factor.userId);
      const existing = await trx
        .selectFrom("second_factors")
        .select(["kind", "credential_id"])
        .where("user_id", "=", factor.userId)
        .execute();
      decideFactorEnrolment(
        existing.map((r) => ({ kind: r.kind, ...(r.credential_id !== null && { credentialId: r.credential_id }) })),
        factor.kind,
        factor.credentialId,
      );
      await writeOutbox(trx, events);
      await trx
        .insertInto("second_factors")
        .values({
          factor_id: factor.factorId,
          user_id: factor.userId,
          slot: factor.kind === "totp" ? "totp" : factor.factorId,
          kind: factor.kind,
          name: factor.name,
          created_at: factor.createdAt,
          last_used_at: null,
          sealed_secret: factor.sealedSecret ?? null,
          last_step: factor.lastStep ?? null,
          credential_id: factor.credentialId ?? null,
          public_key: factor.publicKey ?? null,
          counter: factor.counter ?? null,
          transports: factor.transports ? JSON.stringify(factor.transports) : null,
        })
        .execute();
      return { endedSessions: await applyFactorChangeIn(trx, factor.userId, sessions, factor.createdAt) };
    });
  }

  async removeFactor({ userId, factorId, sessions, at, events }: ArgsOf<SecurityStore["removeFactor"]>): Promise<FactorChangeOutcome> {
    return this.c.tx(async (trx) => {
      await lockAccount(trx, userId);
      // Read under the lock: a policy that comes to require a factor meanwhile is the one this removal answers to.
      const policyRequires = await policyRequiresIn(trx, await orgOfIn(trx, userId));
      const gone = await trx
        .deleteFrom("second_factors")
        .where("factor_id", "=", factorId)
        .where("user_id", "=", userId)
        .executeTakeFirst();
      if (Number(gone.numDeletedRows) === 0) throw factorNotFound();
      const left = await trx.selectFrom("second_factors").select("factor_id").where("user_id", "=", userId).execute();
      decideFactorRemoval(left.length, policyRequires);
      if (left.length === 0) await trx.deleteFrom("recovery_codes").where("user_id", "=", userId).execute();
      // A device remembered for the second step stood in for factors that are no longer all there.
      await forgetDevicesIn(trx, userId);
      await writeOutbox(trx, events);
      return { endedSessions: await applyFactorChangeIn(trx, userId, sessions, at) };
    });
  }

  async useTotpStep({ factorId, step, at }: ArgsOf<SecurityStore["useTotpStep"]>): Promise<boolean> {
    const r = await this.c.db
      .updateTable("second_factors")
      .set({ last_step: step, last_used_at: at })
      .where("factor_id", "=", factorId)
      .where((eb) => eb.or([eb("last_step", "is", null), eb("last_step", "<", step)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async useWebauthnCounter({ factorId, from, to, at }: ArgsOf<SecurityStore["useWebauthnCounter"]>): Promise<boolean> {
    const r = await this.c.db
      .updateTable("second_factors")
      .set({ counter: to, last_used_at: at })
      .where("factor_id", "=", factorId)
      .where("counter", "=", from)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async replaceRecoveryCodes(args: ArgsOf<SecurityStore["replaceRecoveryCodes"]>): Promise<FactorChangeOutcome> {
    const { userId, codeHashes, at, sessions, events } = args;
    return this.c.tx(async (trx) => {
      await lockAccount(trx, userId);
      await writeOutbox(trx, events);
      await trx.deleteFrom("recovery_codes").where("user_id", "=", userId).execute();
      if (codeHashes.length > 0) {
        await trx
          .insertInto("recovery_codes")
          .values(codeHashes.map((code_hash) => ({ user_id: userId, code_hash, created_at: at, used_at: null })))
          .execute();
      }
      return { endedSessions: sessions ? await applyFactorChangeIn(trx, userId, sessions, at) : [] };
    });
  }

  async useRecoveryCode({ userId, codeHash, at }: ArgsOf<SecurityStore["useRecoveryCode"]>): Promise<boolean> {
    const r = await this.c.db
      .updateTable("recovery_codes")
      .set({ used_at: at })
      .where("user_id", "=", userId)
      .where("code_hash", "=", codeHash)
      .where("used_at", "is", null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async recoveryCodesLeft(userId: UserId): Promise<number> {
    const r = await this.c.db
      .selectFrom("recovery_codes")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("user_id", "=", userId)
      .where("used_at", "is", null)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async getPolicies(orgId: OrgId): Promise<OrgPolicies | null> {
    const r = await this.c.db.selectFrom("org_policies").select("policies").where("org_id", "=", orgId).executeTakeFirst();
    return r ? (JSON.parse(r.policies) as OrgPolicies) : null;
  }

  async setPolicies({ orgId, policies, at, events }: ArgsOf<SecurityStore["setPolicies"]>): Promise<{ narrowedSessions: string[] }> {
    return this.c.tx(async (trx) => {
      await writeOutbox(trx, events);
      const text = JSON.stringify(policies);
      await trx
        .insertInto("org_policies")
        .values({ org_id: orgId, policies: text, updated_at: at })
        .onConflict((oc) => oc.column("org_id").doUpdateSet({ policies: text, updated_at: at }))
        .execute();
      return { narrowedSessions: await narrowSessionsIn(trx, orgId, policies, at) };
    });
  }

  async putRecoveryEnrolment({ enrolment: e, shares, events }: ArgsOf<SecurityStore["putRecoveryEnrolment"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      await lockAccount(trx, e.userId);
      await writeOutbox(trx, events);
      const old = await trx.selectFrom("recovery_enrolments").select("enrolment_id").where("user_id", "=", e.userId).executeTakeFirst();
      if (old) await dropEnrolment(trx, old.enrolment_id, e.createdAt, e.userId);
      await trx
        .insertInto("recovery_enrolments")
        .values({
          user_id: e.userId,
          enrolment_id: e.enrolmentId,
          org_id: e.orgId,
          threshold: e.threshold,
          copy: e.copy,
          signature: e.signature,
          kdf_salt: e.kdfSalt,
          created_at: e.createdAt,
          version: e.version ?? null,
          account_keys: e.keys ?? null,
          kdf_version: e.kdfVersion ?? null,
        })
        .execute();
      await trx
        .insertInto("recovery_shares")
        .values(
          shares.map((s) => ({
            enrolment_id: e.enrolmentId,
            trustee_id: s.trusteeId,
            encrypted_share: s.encryptedShare,
            trustee_keys: s.trusteeKeys,
          })),
        )
        .execute();
    });
  }

  async getRecoveryEnrolment(userId: UserId): Promise<{ enrolment: RecoveryEnrolment; shares: RecoveryShare[] } | null> {
    const e = await this.c.db.selectFrom("recovery_enrolments").selectAll().where("user_id", "=", userId).executeTakeFirst();
    if (!e) return null;
    const shares = await this.c.db
      .selectFrom("recovery_shares")
      .selectAll()
      .where("enrolment_id", "=", e.enrolment_id)
      .orderBy("trustee_id")
      .execute();
    return {
      enrolment: {
        enrolmentId: e.enrolment_id,
        userId: e.user_id,
        orgId: e.org_id,
        threshold: Number(e.threshold),
        copy: e.copy,
        signature: e.signature,
        kdfSalt: e.kdf_salt,
        createdAt: e.created_at,
        ...(e.version !== null && { version: Number(e.version), keys: e.account_keys!, kdfVersion: Number(e.kdf_version) }),
      },
      shares: shares.map((s) => ({
        enrolmentId: s.enrolment_id,
        trusteeId: s.trustee_id,
        encryptedShare: s.encrypted_share,
        trusteeKeys: s.trustee_keys,
      })),
    };
  }

  async deleteRecoveryEnrolment({ userId, events }: ArgsOf<SecurityStore["deleteRecoveryEnrolment"]>): Promise<boolean> {
    return this.c.tx(async (trx) => {
      await lockAccount(trx, userId);
      const old = await trx.selectFrom("recovery_enrolments").select("enrolment_id").where("user_id", "=", userId).executeTakeFirst();
      if (!old) return false;
      await writeOutbox(trx, events);
      await dropEnrolment(trx, old.enrolment_id, new Date().toISOString(), userId);
      return true;
    });
  }

  findRecoveryTarget(email: string): Promise<RecoveryTarget | null> {
    return findRecoveryTargetIn(this.c.db, email);
  }

  startRecoveryRequest({ request, events }: ArgsOf<SecurityStore["startRecoveryRequest"]>): Promise<void> {
    return startRecoveryRequestIn(this.c, request, events);
  }

  findRecoveryAsk(requestId: string): Promise<RecoveryAsk | null> {
    return findRecoveryAskIn(this.c.db, requestId);
  }

  async openRecoveryRequest({ requestId, sessionId, at, events }: ArgsOf<SecurityStore["openRecoveryRequest"]>): Promise<boolean> {
    return this.c.tx(async (trx) => {
      const r = await trx
        .updateTable("recovery_requests")
        .set({ status: "opened", session_id: sessionId, opened_at: at })
        .where("request_id", "=", requestId)
        .where("status", "in", ["pending", "opened"])
        .where("expires_at", ">", at)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return false;
      await writeOutbox(trx, events);
      return true;
    });
  }

  async findOpenedRecovery({ userId, sessionId, since }: ArgsOf<SecurityStore["findOpenedRecovery"]>): Promise<RecoveryRequest | null> {
    const r = await this.c.db
      .selectFrom("recovery_requests")
      .selectAll()
      .where("user_id", "=", userId)
      .where("session_id", "=", sessionId)
      .where("status", "=", "opened")
      .where("opened_at", ">", since)
      .executeTakeFirst();
    return r ? toRequest(r) : null;
  }

  async findRecoveryRequest(requestId: string): Promise<RecoveryRequest | null> {
    const r = await this.c.db
      .selectFrom("recovery_requests")
      .selectAll()
      .where("request_id", "=", requestId)
      .where("user_id", "is not", null)
      .executeTakeFirst();
    return r ? toRequest(r) : null;
  }

  async listRecoveryRequests({ userId, now, pendingOnly }: ArgsOf<SecurityStore["listRecoveryRequests"]>): Promise<RecoveryRequest[]> {
    let q = this.c.db.selectFrom("recovery_requests").selectAll().where("user_id", "=", userId);
    if (pendingOnly) q = q.where("status", "=", "pending").where("expires_at", ">", now);
    const rows = await q.orderBy("created_at", "desc").limit(50).execute();
    return rows.map(toRequest);
  }

  async listRequestsForTrustee({ trusteeId, now }: ArgsOf<SecurityStore["listRequestsForTrustee"]>): Promise<RecoveryRequest[]> {
    const rows = await this.c.db
      .selectFrom("recovery_requests as r")
      .innerJoin("recovery_shares as s", "s.enrolment_id", "r.enrolment_id")
      .selectAll("r")
      .where("s.trustee_id", "=", trusteeId)
      .where("r.status", "=", "pending")
      .where("r.expires_at", ">", now)
      .orderBy("r.created_at")
      .limit(100)
      .execute();
    return rows.map(toRequest);
  }

  async listApprovals(requestId: string): Promise<RecoveryApproval[]> {
    const rows = await this.c.db
      .selectFrom("recovery_approvals")
      .selectAll()
      .where("request_id", "=", requestId)
      .orderBy("approved_at")
      .execute();
    return rows.map((a) => ({
      requestId: a.request_id,
      trusteeId: a.trustee_id,
      encryptedShare: a.encrypted_share,
      signature: a.signature,
      approvedAt: a.approved_at,
    }));
  }

  async addRecoveryApproval({ approval: a, now, events }: ArgsOf<SecurityStore["addRecoveryApproval"]>): Promise<void> {
    await this.c.tx(async (trx) => {
      // A write on the request first: an approval and the request's end come one after the other.
      const held = await trx
        .updateTable("recovery_requests")
        .set({ status: "pending" })
        .where("request_id", "=", a.requestId)
        .where("status", "=", "pending")
        .where("expires_at", ">", now)
        .executeTakeFirst();
      if (Number(held.numUpdatedRows) !== 1) throw recoveryNotPending();
      const dup = await trx
        .selectFrom("recovery_approvals")
        .select("trustee_id")
        .where("request_id", "=", a.requestId)
        .where("trustee_id", "=", a.trusteeId)
        .executeTakeFirst();
      decideNewApproval(!!dup);
      await writeOutbox(trx, events);
      await trx
        .insertInto("recovery_approvals")
        .values({
          request_id: a.requestId,
          trustee_id: a.trusteeId,
          encrypted_share: a.encryptedShare,
          signature: a.signature,
          approved_at: a.approvedAt,
        })
        .execute();
    });
  }

  async endRecoveryRequest({ requestId, status, at, events }: ArgsOf<SecurityStore["endRecoveryRequest"]>): Promise<boolean> {
    return this.c.tx(async (trx) => {
      if (status === "completed") {
        if (!(await completeRecoveryIn(trx, requestId, at))) return false;
      } else {
        const r = await trx
          .updateTable("recovery_requests")
          .set({ status, ended_at: at })
          .where("request_id", "=", requestId)
          // Cancelled while pending or opened: its owner stops it.
          .where("status", "in", ["pending", "opened"])
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) !== 1) return false;
      }
      await writeOutbox(trx, events);
      return true;
    });
  }
}
