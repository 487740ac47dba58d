/**
 * The documents of an account's security (SQL: migrations 015 and 024): second factors, sign-in
 * passkeys, recovery codes, policies, account recovery.
 */
import type { OrgId, UserId } from "../../../domain/ids";
import type { SecondFactor } from "../../../domain/accounts/second-factors";
import type { PasskeyLogin, PasskeyUnlock } from "../../../domain/accounts/passkey-logins";
import type { OrgPolicies } from "../../../domain/orgs/policies";
import type { RecoveryApproval, RecoveryEnrolment, RecoveryRequest, RecoveryShare } from "../../../domain/accounts/recovery";
import type { NewRecoveryRequest, RecoveryAsk } from "../../../domain/accounts/recovery-requests";

/**
 * A second factor; `_id` is its factor id. Unique on (userId, slot): `slot` is "totp" for the one
 * authenticator app an account has, the factor's id for a security key.
 */
export type SecondFactorDoc = Omit<SecondFactor, "factorId"> & { _id: string; slot: string };

/** The slot a factor takes among its account's (unique per user). */
export function factorSlot(f: Pick<SecondFactor, "kind" | "factorId">): string {
  return f.kind === "totp" ? "totp" : f.factorId;
}

/** A new factor's document (unused yet, as the SQL adapter stores it: no `lastUsedAt`). */
export function secondFactorDoc(f: SecondFactor): SecondFactorDoc {
  return {
    _id: f.factorId,
    userId: f.userId,
    slot: factorSlot(f),
    kind: f.kind,
    name: f.name,
    createdAt: f.createdAt,
    ...(f.sealedSecret !== undefined && { sealedSecret: f.sealedSecret }),
    ...(f.lastStep !== undefined && { lastStep: f.lastStep }),
    ...(f.credentialId !== undefined && { credentialId: f.credentialId }),
    ...(f.publicKey !== undefined && { publicKey: f.publicKey }),
    ...(f.counter !== undefined && { counter: f.counter }),
    ...(f.transports !== undefined && { transports: [...f.transports] }),
  };
}

export function toSecondFactor(d: SecondFactorDoc): SecondFactor {
  return {
    factorId: d._id,
    userId: d.userId,
    kind: d.kind,
    name: d.name,
    createdAt: d.createdAt,
    ...(d.lastUsedAt != null && { lastUsedAt: d.lastUsedAt }),
    ...(d.sealedSecret != null && { sealedSecret: d.sealedSecret }),
    ...(d.lastStep != null && { lastStep: Number(d.lastStep) }),
    ...(d.credentialId != null && { credentialId: d.credentialId }),
    ...(d.publicKey != null && { publicKey: d.publicKey }),
    ...(d.counter != null && { counter: Number(d.counter) }),
    ...(d.transports != null && { transports: d.transports }),
  };
}

/**
 * A sign-in passkey (lib/domain/accounts/passkey-logins.ts); `_id` is its credential id (one
 * credential signs in one account). Its unlock's three wraps are all there or none is.
 */
export type PasskeyLoginDoc = Omit<PasskeyLogin, "credentialId" | "unlock"> & { _id: string } & (
    PasskeyUnlock | { [K in keyof PasskeyUnlock]?: never }
  );

/** A new passkey's document: an absent field stays absent (the driver would store an `undefined` one as null). */
export function passkeyLoginDoc(l: PasskeyLogin): PasskeyLoginDoc {
  const doc = {
    _id: l.credentialId,
    userId: l.userId,
    name: l.name,
    publicKey: l.publicKey,
    counter: l.counter,
    ...(l.transports !== undefined && { transports: [...l.transports] }),
    createdAt: l.createdAt,
    ...(l.lastUsedAt !== undefined && { lastUsedAt: l.lastUsedAt }),
  };
  if (l.unlock === undefined) return doc;
  const { prfWrappedKey, wrappedStretchedKey, keptWrappedKey } = l.unlock;
  return { ...doc, prfWrappedKey, wrappedStretchedKey, keptWrappedKey };
}

/** A stored passkey; its unlock only when all three wraps are there (as the SQL adapter reads its columns). */
export function toPasskeyLogin(d: PasskeyLoginDoc): PasskeyLogin {
  return {
    credentialId: d._id,
    userId: d.userId,
    name: d.name,
    publicKey: d.publicKey,
    counter: Number(d.counter),
    ...(d.transports != null && { transports: d.transports }),
    createdAt: d.createdAt,
    ...(d.lastUsedAt != null && { lastUsedAt: d.lastUsedAt }),
    ...(d.prfWrappedKey != null &&
      d.wrappedStretchedKey != null &&
      d.keptWrappedKey != null && {
        unlock: { prfWrappedKey: d.prfWrappedKey, wrappedStretchedKey: d.wrappedStretchedKey, keptWrappedKey: d.keptWrappedKey },
      }),
  };
}

/** One recovery code of a user (hashed); `_id` is `recoveryCodeKey(userId, codeHash)`, as the SQL primary key. */
export interface RecoveryCodeDoc {
  _id: string;
  userId: UserId;
  codeHash: string;
  createdAt: string;
  /** Absent while unused. */
  usedAt?: string;
}

export function recoveryCodeKey(userId: UserId, codeHash: string): string {
  return `${userId}:${codeHash}`;
}

/** An organization's policies; `_id` is the organization id. */
export interface OrgPoliciesDoc {
  _id: OrgId;
  policies: OrgPolicies;
  updatedAt: string;
}

/**
 * Policies as stored: their JSON (as the SQL adapter stores them), so that an absent rule stays
 * absent (the driver would store an `undefined` one as null).
 */
export function storedPolicies(p: OrgPolicies): OrgPolicies {
  return JSON.parse(JSON.stringify(p)) as OrgPolicies;
}

/** A user's recovery enrolment; `_id` is the user id (one each). Unique on enrolmentId. */
export type RecoveryEnrolmentDoc = Omit<RecoveryEnrolment, "userId"> & { _id: UserId };

export function recoveryEnrolmentDoc(e: RecoveryEnrolment): RecoveryEnrolmentDoc {
  return {
    _id: e.userId,
    enrolmentId: e.enrolmentId,
    orgId: e.orgId,
    threshold: e.threshold,
    copy: e.copy,
    signature: e.signature,
    kdfSalt: e.kdfSalt,
    createdAt: e.createdAt,
    ...(e.version !== undefined && { version: e.version, keys: e.keys, kdfVersion: e.kdfVersion }),
  };
}

export function toRecoveryEnrolment(d: RecoveryEnrolmentDoc): RecoveryEnrolment {
  return {
    enrolmentId: d.enrolmentId,
    userId: d._id,
    orgId: d.orgId,
    threshold: Number(d.threshold),
    copy: d.copy,
    signature: d.signature,
    kdfSalt: d.kdfSalt,
    createdAt: d.createdAt,
    ...(d.version !== undefined && d.version !== null && { version: Number(d.version), keys: d.keys, kdfVersion: Number(d.kdfVersion) }),
  };
}

/** A trustee's share of an enrolment; `_id` is `recoveryShareKey(enrolmentId, trusteeId)`, as the SQL primary key. */
export type RecoveryShareDoc = RecoveryShare & { _id: string };

export function recoveryShareKey(enrolmentId: string, trusteeId: UserId): string {
  return `${enrolmentId}:${trusteeId}`;
}

export function recoveryShareDoc(enrolmentId: string, s: RecoveryShare): RecoveryShareDoc {
  return {
    _id: recoveryShareKey(enrolmentId, s.trusteeId),
    enrolmentId,
    trusteeId: s.trusteeId,
    encryptedShare: s.encryptedShare,
    trusteeKeys: s.trusteeKeys,
  };
}

export function toRecoveryShare(d: RecoveryShareDoc): RecoveryShare {
  return { enrolmentId: d.enrolmentId, trusteeId: d.trusteeId, encryptedShare: d.encryptedShare, trusteeKeys: d.trusteeKeys };
}

/**
 * A recovery request; `_id` is its id. A decoy's (an address with no enrolled account) has no
 * account, organization or enrolment. `addressKey`, `clientKey` and `bindingHash` as the SQL
 * columns (migration 021); a request stored before them has none.
 */
export type RecoveryRequestDoc = Omit<RecoveryRequest, "requestId" | "userId" | "orgId" | "enrolmentId"> & {
  _id: string;
  userId: UserId | null;
  orgId: OrgId | null;
  enrolmentId: string | null;
  addressKey?: string;
  clientKey?: string;
  bindingHash?: string | null;
  /** Bumped by each approval (the lock: an approval and the request's end conflict, and one retries). */
  writeSeq?: number;
};

/** A new request's document, real or decoy alike; `held`: stored ended (recovery-requests.ts, `decideRequestSlot`). */
export function recoveryRequestDoc(r: NewRecoveryRequest, held: boolean): RecoveryRequestDoc {
  return {
    _id: r.requestId,
    userId: r.account?.userId ?? null,
    orgId: r.account?.orgId ?? null,
    enrolmentId: r.account?.enrolmentId ?? null,
    addressKey: r.addressKey,
    clientKey: r.clientKey,
    bindingHash: r.bindingHash,
    publicKey: r.publicKey,
    tokenHash: r.tokenHash,
    status: held ? "cancelled" : "pending",
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    ...(held && { endedAt: r.createdAt }),
  };
}

/** An account's request as the rules read it (a decoy's is never read this way: its queries name an account). */
export function toRecoveryRequest(d: RecoveryRequestDoc): RecoveryRequest {
  if (d.userId === null || d.orgId === null || d.enrolmentId === null) throw new Error(`recovery request ${d._id} is a decoy's`);
  return {
    requestId: d._id,
    userId: d.userId,
    orgId: d.orgId,
    enrolmentId: d.enrolmentId,
    publicKey: d.publicKey,
    tokenHash: d.tokenHash,
    status: d.status,
    createdAt: d.createdAt,
    expiresAt: d.expiresAt,
    ...(d.endedAt != null && { endedAt: d.endedAt }),
    ...(d.sessionId != null && { sessionId: d.sessionId }),
    ...(d.openedAt != null && { openedAt: d.openedAt }),
  };
}

/** Any stored request, a decoy's too, as the routes that name it by its secret read it. */
export function toRecoveryAsk(d: RecoveryRequestDoc): RecoveryAsk {
  return {
    requestId: d._id,
    tokenHash: d.tokenHash,
    status: d.status,
    createdAt: d.createdAt,
    expiresAt: d.expiresAt,
    request: d.userId === null ? null : toRecoveryRequest(d),
  };
}

/** A trustee's approval of a request; `_id` is `recoveryApprovalKey(requestId, trusteeId)`, as the SQL primary key. */
export type RecoveryApprovalDoc = RecoveryApproval & { _id: string };

export function recoveryApprovalKey(requestId: string, trusteeId: UserId): string {
  return `${requestId}:${trusteeId}`;
}

export function recoveryApprovalDoc(a: RecoveryApproval): RecoveryApprovalDoc {
  return {
    _id: recoveryApprovalKey(a.requestId, a.trusteeId),
    requestId: a.requestId,
    trusteeId: a.trusteeId,
    encryptedShare: a.encryptedShare,
    signature: a.signature,
    approvedAt: a.approvedAt,
  };
}

export function toRecoveryApproval(d: RecoveryApprovalDoc): RecoveryApproval {
  return {
    requestId: d.requestId,
    trusteeId: d.trusteeId,
    encryptedShare: d.encryptedShare,
    signature: d.signature,
    approvedAt: d.approvedAt,
  };
}
