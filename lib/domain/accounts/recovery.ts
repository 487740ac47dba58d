/**
 * k-of-n account recovery: the rules the server enforces, each action's a `plan*` or `decide*`
 * (the protocol and its parts: docs/design/account-recovery.md). The server holds only wrapped
 * shares and the sealed copy: alone, or with fewer than k trustees, it learns nothing; what it
 * could lie about, the clients check.
 */
import type { OrgId, UserId } from "../ids";
import type { OrgRole } from "../types";
import { mayBeTrustee } from "../../../protocol/org-roles";
import { approvalBytes, enrolmentBytes, sessionProofBytes, type EnrolmentVersion } from "../../../protocol/formats/recovery";
import { signatureVerifies } from "./keys";
import { MAX_RECOVERY_TRUSTEES } from "../orgs/policies";
import { keyFingerprint, sha256Hex } from "../vaults/roster";
import { kdfVersionOf } from "./statements";
import { decideDeviceName } from "./sessions";
import {
  approvalNotSigned,
  badRecoveryThreshold,
  enrolmentNotSigned,
  enrolmentNotNewer,
  enrolmentStateWrong,
  noRecoveryEnrolment,
  notATrustee,
  recoveryNotPending,
  recoveryRequestNotFound,
  recoveryTokenWrong,
  tooFewApprovals,
  trusteeNamedTwice,
  trusteeNotEligible,
  trusteeOutsideOrg,
} from "./refusals";
import { removedFromOrg } from "../orgs/refusals";

export interface RecoveryEnrolment {
  enrolmentId: string;
  userId: UserId;
  orgId: OrgId;
  /** k: the approvals a recovery needs. */
  threshold: number;
  /** The sealed copy of the account's stretched key (base64). */
  copy: string;
  /** The user's signature over the enrolment statement (protocol/formats/recovery.ts `enrolmentBytes`). */
  signature: string;
  /** The KDF salt of the password the copy was made under: a password change since leaves it stale. */
  kdfSalt: string;
  createdAt: string;
  /** Signed in the versioned form (protocol/formats/recovery.ts): its number and the account state it was made under. Absent in an enrolment made before versions. */
  version?: number;
  keys?: string;
  kdfVersion?: number;
}

export interface RecoveryShare {
  enrolmentId: string;
  trusteeId: UserId;
  /** The share, RSA-OAEP-wrapped to the trustee's key (base64). */
  encryptedShare: string;
  /** The fingerprint of the trustee's keys the user's client wrapped to (hex), as signed. */
  trusteeKeys: string;
}

/**
 * `pending`: asked, approvals coming in; `opened`: k approved and the device signed in, the new
 * password not set yet (the enrolment stays, so a device that fails here can ask again);
 * `completed`: the new password is set and the enrolment spent; `cancelled`.
 */
export type RecoveryStatus = "pending" | "opened" | "completed" | "cancelled";

export interface RecoveryRequest {
  requestId: string;
  userId: UserId;
  orgId: OrgId;
  enrolmentId: string;
  /** The new device's one-time RSA key (SPKI DER, base64). */
  publicKey: string;
  /** The hash of the secret the device polls and completes with. */
  tokenHash: string;
  status: RecoveryStatus;
  createdAt: string;
  expiresAt: string;
  endedAt?: string;
  /** Once opened: the session the device signed in with, and when. */
  sessionId?: string;
  openedAt?: string;
}

export interface RecoveryApproval {
  requestId: string;
  trusteeId: UserId;
  /** The trustee's share, re-wrapped to the request's one-time key (base64). */
  encryptedShare: string;
  /** The trustee's signature over the approval statement. */
  signature: string;
  approvedAt: string;
}

/** A request lasts this long. */
export const RECOVERY_REQUEST_TTL_MS = 7 * 86_400_000;

/** What the rule knows of a would-be trustee. */
export interface TrusteeState {
  userId: UserId;
  orgId: OrgId;
  role: OrgRole;
  removedAt?: string;
}

/**
 * An enrolment: 2 to MAX_RECOVERY_TRUSTEES distinct trustees, each an owner or admin of the user's
 * organization (not removed, not the user), and k from the organization's least (at least 2) to n.
 */
export function decideRecoveryEnrolment(args: {
  userId: UserId;
  orgId: OrgId;
  threshold: number;
  trusteeIds: readonly UserId[];
  trustees: ReadonlyMap<UserId, TrusteeState>;
  policyMinThreshold: number;
}): void {
  const { trusteeIds, threshold } = args;
  if (new Set(trusteeIds).size !== trusteeIds.length) throw trusteeNamedTwice();
  const n = trusteeIds.length;
  if (n < 2 || n > MAX_RECOVERY_TRUSTEES || threshold < Math.max(2, args.policyMinThreshold) || threshold > n) {
    throw badRecoveryThreshold(Math.max(2, args.policyMinThreshold), MAX_RECOVERY_TRUSTEES);
  }
  for (const id of trusteeIds) {
    const t = args.trustees.get(id);
    if (!t || t.orgId !== args.orgId || t.removedAt !== undefined || id === args.userId) throw trusteeOutsideOrg(id);
    if (!mayBeTrustee(t.role)) throw trusteeNotEligible(id);
  }
}

/** A request still open at `now`. */
export function isPending(r: Pick<RecoveryRequest, "status" | "expiresAt">, now: string): boolean {
  return r.status === "pending" && r.expiresAt > now;
}

/** How long the session a recovery opened may set the new password without the old one. */
export const RECOVERY_PASSWORD_WINDOW_MS = 24 * 3_600_000;

/** A request a device may still sign in with: pending or opened (a device that failed after signing in tries again), not expired. */
export function isOpenable(r: Pick<RecoveryRequest, "status" | "expiresAt">, now: string): boolean {
  return (r.status === "pending" || r.status === "opened") && r.expiresAt > now;
}

/**
 * A trustee's approval: the request is still pending, and the caller holds a share of the very
 * enrolment it was made for (a share of another enrolment, or none, is refused).
 */
export function decideRecoveryApproval(args: {
  request: Pick<RecoveryRequest, "status" | "expiresAt" | "enrolmentId">;
  enrolmentId: string | undefined;
  trusteeIds: readonly UserId[];
  trusteeId: UserId;
  now: string;
}): void {
  if (!isPending(args.request, args.now)) throw recoveryNotPending();
  if (args.enrolmentId !== args.request.enrolmentId || !args.trusteeIds.includes(args.trusteeId)) throw notATrustee();
}

/** Signing in with a request: its own secret, still pending (or opened), and at least k approvals of its enrolment's trustees. */
export function decideRecoveryCompletion(args: {
  request: Pick<RecoveryRequest, "status" | "expiresAt" | "tokenHash" | "enrolmentId">;
  tokenHash: string;
  enrolment: Pick<RecoveryEnrolment, "enrolmentId" | "threshold"> | null;
  approvals: number;
  now: string;
}): void {
  if (args.tokenHash !== args.request.tokenHash) throw recoveryTokenWrong();
  if (!isOpenable(args.request, args.now) || args.enrolment?.enrolmentId !== args.request.enrolmentId) throw recoveryNotPending();
  if (args.approvals < args.enrolment.threshold) throw tooFewApprovals(args.approvals, args.enrolment.threshold);
}

// ---- The actions as plans: what the service read in; what it writes out, or a named refusal ----

/** What the rules know of the account an action runs for. */
export interface RecoveringAccount {
  userId: UserId;
  orgId: OrgId;
  signingPublicKey: string;
  kdf: { salt: string };
  removedAt?: string;
}

/** What an enrolment's version is checked against: the account's keys and the version of its signed KDF statement. */
export interface EnrollingAccount extends RecoveringAccount {
  publicKey: string;
  kdfStatement?: { version: number };
}

/** An enrolment with its shares, as stored. */
export interface StoredEnrolment {
  enrolment: RecoveryEnrolment;
  shares: RecoveryShare[];
}

const hashOf = (b64: string) => sha256Hex(Buffer.from(b64, "base64"));
const verifies = (bytes: Uint8Array, signature: string, key: string) =>
  signatureVerifies(Buffer.from(bytes), Buffer.from(signature, "base64"), key);

/** What the user's client sends to enrol: the statement's parts, and the user's signature over them. */
export interface EnrolmentForm extends Partial<EnrolmentVersion> {
  enrolmentId: string;
  threshold: number;
  copy: string;
  signature: string;
  shares: Array<{ trusteeId: UserId; encryptedShare: string; trusteeKeys: string }>;
}

/**
 * A versioned enrolment's form: all three of version, keys and KDF version, or none (the unversioned
 * form of earlier clients); one past the version it replaces; made under the account's own keys and
 * its current KDF statement (a client that says otherwise has old keys or an old password). What
 * the server checks here is form: each trustee's client checks the version against what it saw.
 */
export function decideEnrolmentVersion(
  form: Partial<EnrolmentVersion>,
  user: Pick<EnrollingAccount, "publicKey" | "signingPublicKey" | "kdfStatement">,
  previous: Pick<RecoveryEnrolment, "version"> | null,
): EnrolmentVersion | null {
  const given = [form.version, form.keys, form.kdfVersion].filter((v) => v !== undefined).length;
  if (given === 0) return null;
  if (given !== 3) throw enrolmentStateWrong("version");
  if (previous?.version !== undefined && form.version! <= previous.version) throw enrolmentNotNewer(previous.version);
  if (form.keys !== keyFingerprint(user)) throw enrolmentStateWrong("keys");
  if (form.kdfVersion !== kdfVersionOf(user)) throw enrolmentStateWrong("kdfVersion");
  return { version: form.version!, keys: form.keys!, kdfVersion: form.kdfVersion! };
}

/**
 * An enrolment: its trustees and k (`decideRecoveryEnrolment`), then the user's signature over what
 * is stored, as the user's client made it (the server checks its form, the clients what it means).
 */
export function planRecoveryEnrolment(
  found: {
    user: EnrollingAccount;
    trustees: ReadonlyMap<UserId, TrusteeState>;
    policyMinThreshold: number;
    previous: Pick<RecoveryEnrolment, "version"> | null;
    now: string;
  },
  form: EnrolmentForm,
): StoredEnrolment {
  const { user } = found;
  decideRecoveryEnrolment({
    userId: user.userId,
    orgId: user.orgId,
    threshold: form.threshold,
    trusteeIds: form.shares.map((s) => s.trusteeId),
    trustees: found.trustees,
    policyMinThreshold: found.policyMinThreshold,
  });
  const versioned = decideEnrolmentVersion(form, user, found.previous);
  const bytes = enrolmentBytes({
    enrolmentId: form.enrolmentId,
    userId: user.userId,
    threshold: form.threshold,
    copy: hashOf(form.copy),
    trustees: form.shares.map((s) => ({ trusteeId: s.trusteeId, keys: s.trusteeKeys, share: hashOf(s.encryptedShare) })),
    ...versioned,
  });
  if (!verifies(bytes, form.signature, user.signingPublicKey)) throw enrolmentNotSigned();
  const enrolment: RecoveryEnrolment = {
    enrolmentId: form.enrolmentId,
    userId: user.userId,
    orgId: user.orgId,
    threshold: form.threshold,
    copy: form.copy,
    signature: form.signature,
    kdfSalt: user.kdf.salt,
    createdAt: found.now,
    ...versioned,
  };
  return { enrolment, shares: form.shares.map((s) => ({ enrolmentId: form.enrolmentId, ...s })) };
}

/** What the rule knows of a trustee now: their keys, and whether they left. */
export interface TrusteeKeys {
  publicKey: string;
  signingPublicKey: string;
  removedAt?: string;
}

/**
 * The caller's enrolment (none: 404), and whether it is current: made under the account's password
 * (else its copy holds a key that no longer opens the account) and, when versioned, under its
 * current keys (else its trustees' clients refuse it), with at least k trustees still holding the
 * keys their shares were wrapped to (one who rotated or left cannot open theirs).
 */
export function decideEnrolmentCurrent(
  found: StoredEnrolment | null,
  user: { kdf: { salt: string }; publicKey: string; signingPublicKey: string },
  trustees: ReadonlyMap<UserId, TrusteeKeys>,
): StoredEnrolment & { current: boolean } {
  if (!found) throw noRecoveryEnrolment();
  const holding = found.shares.filter((s) => {
    const t = trustees.get(s.trusteeId);
    return t !== undefined && t.removedAt === undefined && keyFingerprint(t) === s.trusteeKeys;
  }).length;
  const e = found.enrolment;
  const ownKeys = e.keys === undefined || e.keys === keyFingerprint(user);
  return { ...found, current: e.kdfSalt === user.kdf.salt && ownKeys && holding >= e.threshold };
}

/** An unenrolment that found no enrolment to delete: 404. */
export function decideUnenrolment(deleted: boolean): void {
  if (!deleted) throw noRecoveryEnrolment();
}

/** Only the account's own sessions cancel its requests: another account's, or none, is not found. */
export function decideRecoveryCancel(request: RecoveryRequest | null, userId: UserId): RecoveryRequest {
  if (!request || request.userId !== userId) throw recoveryRequestNotFound();
  return request;
}

/** A cancel whose request had ended (or was gone) by the time it was written: not found, as none. */
export function decideRecoveryCancelled(ended: boolean): void {
  if (!ended) throw recoveryRequestNotFound();
}

/**
 * What a device signing in with a request read: the account's request (one a trustee approved:
 * recovery-requests.ts `decideSessionAsk`), its enrolment, approvals and account.
 */
export interface FoundForSession<U extends RecoveringAccount> {
  request: RecoveryRequest;
  tokenHash: string;
  enrolment: StoredEnrolment | null;
  approvals: ReadonlyArray<Pick<RecoveryApproval, "trusteeId">>;
  user: U | null;
  now: string;
}

/**
 * Signing in with an approved request, in this order: `decideRecoveryCompletion` (counting only
 * approvals of the enrolment's trustees); the account is there and in its organization; the
 * enrolment was made under its password; the device signs with the signing key the copy opened (it
 * rebuilt the account's keys); its device name.
 */
export function planRecoverySession<U extends RecoveringAccount>(
  found: FoundForSession<U>,
  form: { signature: string; deviceName?: string },
): { request: RecoveryRequest; user: U; deviceName: string } {
  const { request, enrolment, user } = found;
  decideRecoveryCompletion({
    request,
    tokenHash: found.tokenHash,
    enrolment: enrolment?.enrolment ?? null,
    approvals: found.approvals.filter((a) => enrolment?.shares.some((s) => s.trusteeId === a.trusteeId)).length,
    now: found.now,
  });
  if (!user) throw recoveryTokenWrong();
  if (user.removedAt !== undefined) throw removedFromOrg();
  // Made under another password: its copy no longer opens the account.
  if (enrolment!.enrolment.kdfSalt !== user.kdf.salt) throw recoveryNotPending();
  const proof = sessionProofBytes({ requestId: request.requestId, userId: user.userId });
  if (!verifies(proof, form.signature, user.signingPublicKey)) throw approvalNotSigned();
  return { request, user, deviceName: decideDeviceName(form.deviceName ?? "recovered device") };
}

/** The request had ended, or was opened by another device, by the time the store went to open it: 409. */
export function decideRecoveryOpened(opened: boolean): void {
  if (!opened) throw recoveryNotPending();
}

/**
 * A trustee's approval: a request of the trustee's organization (another's, or none, is not found),
 * `decideRecoveryApproval`, then the trustee's signature over the request, its one-time key and the
 * re-wrapped share. Answers the approval to store.
 */
export function planRecoveryApproval(
  found: {
    request: RecoveryRequest | null;
    trustee: Pick<RecoveringAccount, "userId" | "orgId" | "signingPublicKey">;
    enrolment: StoredEnrolment | null;
    now: string;
  },
  form: { encryptedShare: string; signature: string },
): { request: RecoveryRequest; approval: RecoveryApproval } {
  const { request, trustee, enrolment, now } = found;
  if (!request || request.orgId !== trustee.orgId) throw recoveryRequestNotFound();
  decideRecoveryApproval({
    request,
    enrolmentId: enrolment?.enrolment.enrolmentId,
    trusteeIds: enrolment?.shares.map((s) => s.trusteeId) ?? [],
    trusteeId: trustee.userId,
    now,
  });
  const bytes = approvalBytes({
    requestId: request.requestId,
    userId: request.userId,
    enrolmentId: request.enrolmentId,
    trusteeId: trustee.userId,
    requestKey: hashOf(request.publicKey),
    share: hashOf(form.encryptedShare),
  });
  if (!verifies(bytes, form.signature, trustee.signingPublicKey)) throw approvalNotSigned();
  const approval = {
    requestId: request.requestId,
    trusteeId: trustee.userId,
    encryptedShare: form.encryptedShare,
    signature: form.signature,
  };
  return { request, approval: { ...approval, approvedAt: now } };
}

/** A request's status as its owner and trustees see it: an expired one reads as cancelled (nothing more can happen to it). */
export function recoveryStatusAt(r: Pick<RecoveryRequest, "status" | "expiresAt">, now: string): RecoveryStatus {
  return isOpenable(r, now) || (r.status !== "pending" && r.status !== "opened") ? r.status : "cancelled";
}

/**
 * What polling a real request shows: its status, k of its enrolment (2 once the enrolment is
 * replaced or gone), and whether the account's sealed keys go with it: only while the request is
 * openable, for its own enrolment, with k approvals (before, they would let whoever asked guess
 * the password offline; after a cancel or expiry, its owner stopped it).
 */
export function decideRecoveryState(
  request: Pick<RecoveryRequest, "status" | "expiresAt" | "enrolmentId">,
  enrolment: Pick<RecoveryEnrolment, "enrolmentId" | "threshold"> | null,
  approvals: number,
  now: string,
): { status: RecoveryStatus; threshold: number; disclose: boolean } {
  const own = enrolment !== null && enrolment.enrolmentId === request.enrolmentId;
  const threshold = own ? enrolment.threshold : 2;
  return { status: recoveryStatusAt(request, now), threshold, disclose: own && isOpenable(request, now) && approvals >= threshold };
}
