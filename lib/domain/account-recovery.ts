/**
 * k-of-n account recovery. The user's client splits a recovery secret into n shares
 * (Shamir), wraps each to a trustee's key taken from its own verified pins, seals a copy of the
 * account's stretched key under the secret, and signs it all (protocol/formats/recovery.ts). To recover,
 * a new device asks with a one-time key; each approving trustee's client checks the short code
 * with the user out of band and re-wraps its share to that key; with k approvals, the device
 * rebuilds the secret, opens the copy, and sets a new master password on the password-change path,
 * which ends every session. The server holds only wrapped shares and the sealed copy: alone, or
 * with fewer than k trustees, it learns nothing.
 *
 * The rules the server enforces are these; what the server could lie about, the clients check.
 */
import type { OrgId, UserId } from "./ids";
import type { OrgRole } from "./types";
import { mayBeTrustee } from "../../protocol/org-roles";
import { MAX_RECOVERY_TRUSTEES } from "./org-policies";
import {
  badRecoveryThreshold,
  notATrustee,
  recoveryNotPending,
  recoveryTokenWrong,
  tooFewApprovals,
  trusteeNamedTwice,
  trusteeNotEligible,
  trusteeOutsideOrg,
} from "./refusals";

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
/** Pending requests per account at once, at most (each is a question to its trustees). */
export const MAX_PENDING_RECOVERIES = 3;

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

/**
 * A new request for an account with `pending` open ones: how many of the oldest it replaces. Never
 * a refusal (a refusal would tell a stranger the account is enrolled, and let them fill the slots
 * for the week): past the cap, the oldest give way, and the account's signed-in devices see them all.
 */
export function decideRecoveryRequest(pending: number, max = MAX_PENDING_RECOVERIES): number {
  return Math.max(0, pending - max + 1);
}

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
