/**
 * Emergency access: a member (the grantor) names another member of the organization (the grantee),
 * a level (read, or take over) and a wait; the grantor's device wraps the account's stretched key to
 * the grantee's verified keys and signs the grant (protocol/formats/emergency.ts). The server keeps
 * the wrapped key and releases it only to the grantee, only after the grantee asked and the wait
 * ran out without the grantor refusing. Each request's rule is one `plan*` here.
 *
 * A grant's life: made (idle) -> asked for (waiting; its level and wait are fixed from here on) ->
 * released when the wait is over, or back to idle when the grantor refuses. The grantor may revoke
 * it, and the grantee decline it, at any time. A grant made under account keys or a password the
 * grantor has since replaced, or wrapped to keys the grantee has since replaced, is stale: it can
 * be neither asked for nor released until the grantor's device makes it again (same id, same
 * level and wait while a request stands; the request and its wait carry on).
 */
import type { EmergencyLevel } from "../../../protocol/formats/emergency";
import type { OrgId, UserId } from "../ids";
import {
  alreadyRequested,
  grantExists,
  grantFrozen,
  grantMadeUnderOldState,
  granteeKeysChanged,
  granteeNotFound,
  grantNotFound,
  grantSignatureInvalid,
  grantStale,
  grantToSelf,
  notRequested,
  stillWaiting,
} from "./refusals";

/** A grant as the store keeps it. */
export interface GrantRecord {
  grantId: string;
  orgId: OrgId;
  grantorId: UserId;
  granteeId: UserId;
  level: EmergencyLevel;
  waitHours: number;
  granteeKeys: string;
  keys: string;
  kdfVersion: number;
  wrappedKey: string;
  signature: string;
  createdAt: string;
  updatedAt: string;
  /** When the grantee asked, while the request stands. */
  requestedAt?: string;
  /** When the grantor last refused a request. */
  refusedAt?: string;
  /** The session the released grant last opened as the grantor, and when. */
  sessionId?: string;
  openedAt?: string;
}

/** What a grant is now: `stale` before anything else (it opens nothing), then by its request and wait. */
export type GrantStatus = "idle" | "waiting" | "released" | "stale";

/** Each party's account state now, as the server holds it (`keyFingerprint`, the KDF statement's version). */
export interface GrantParties {
  grantorKeys: string;
  grantorKdfVersion: number;
  granteeKeys: string;
}

const HOUR_MS = 3_600_000;

/** When a standing request's wait is over. */
export const availableAtMs = (g: Pick<GrantRecord, "requestedAt" | "waitHours">): number | null =>
  g.requestedAt === undefined ? null : Date.parse(g.requestedAt) + g.waitHours * HOUR_MS;

export function grantStatus(g: GrantRecord, parties: GrantParties, nowMs: number): GrantStatus {
  if (g.keys !== parties.grantorKeys || g.kdfVersion !== parties.grantorKdfVersion || g.granteeKeys !== parties.granteeKeys) return "stale";
  const at = availableAtMs(g);
  if (at === null) return "idle";
  return nowMs < at ? "waiting" : "released";
}

/** A grant as its grantor's device sends it (made, or made again). */
export interface GrantForm {
  grantId: string;
  granteeId: UserId;
  level: EmergencyLevel;
  waitHours: number;
  granteeKeys: string;
  keys: string;
  kdfVersion: number;
}

/** What a write does: a new grant, or the one to this grantee made again (its request, if one stands, carries on). */
export type GrantWrite = { kind: "create" } | { kind: "rewrap"; frozen: boolean };

/**
 * A grant made or made again: to another member of the grantor's organization, under the grantor's
 * account state and the grantee's keys as they are now, signed by the grantor; one grant per
 * grantee, made again under its own id, with its level and wait fixed while a request stands.
 */
export function planGrantWrite(
  grantor: { userId: UserId; orgId: OrgId; keys: string; kdfVersion: number },
  grantee: { userId: UserId; orgId: OrgId; keys: string; removed: boolean } | null,
  form: GrantForm,
  signatureOk: boolean,
  existing: GrantRecord | null,
): GrantWrite {
  if (form.granteeId === grantor.userId) throw grantToSelf();
  if (!grantee || grantee.orgId !== grantor.orgId || grantee.removed) throw granteeNotFound();
  if (form.keys !== grantor.keys) throw grantMadeUnderOldState("keys");
  if (form.kdfVersion !== grantor.kdfVersion) throw grantMadeUnderOldState("kdfVersion");
  if (form.granteeKeys !== grantee.keys) throw granteeKeysChanged();
  if (!signatureOk) throw grantSignatureInvalid();
  if (!existing) return { kind: "create" };
  if (existing.grantId !== form.grantId) throw grantExists(existing.grantId);
  const frozen = existing.requestedAt !== undefined;
  if (frozen && (existing.level !== form.level || existing.waitHours !== form.waitHours)) throw grantFrozen();
  return { kind: "rewrap", frozen };
}

/** The grant the caller is the given party to; any other is not found. */
function partyOf(g: GrantRecord | null, actorId: UserId, side: "grantor" | "grantee" | "either"): GrantRecord {
  if (!g) throw grantNotFound();
  const ok =
    side === "grantor"
      ? g.grantorId === actorId
      : side === "grantee"
        ? g.granteeId === actorId
        : g.grantorId === actorId || g.granteeId === actorId;
  if (!ok) throw grantNotFound();
  return g;
}

/** The grantee asks: the wait starts now, under the level and wait the grant states. */
export function planGrantRequest(g: GrantRecord | null, actorId: UserId, status: GrantStatus): { requestedAt: "now" } {
  partyOf(g, actorId, "grantee");
  if (status === "stale") throw grantStale();
  if (status !== "idle") throw alreadyRequested();
  return { requestedAt: "now" };
}

/**
 * The grantor refuses a standing request (waiting, or released already): the grant is idle again.
 * A session the grant opened ends with it, here and on revocation and on a new release: the store
 * ends the one the row names as it writes (a session opened meanwhile included), in one transaction.
 */
export function planGrantRefuse(g: GrantRecord | null, actorId: UserId): void {
  const grant = partyOf(g, actorId, "grantor");
  if (grant.requestedAt === undefined) throw notRequested();
}

/** The grantor revokes the grant, or the grantee declines it, at any time: it is deleted, and a session it opened ends. */
export function planGrantRevoke(g: GrantRecord | null, actorId: UserId): { by: "grantor" | "grantee" } {
  const grant = partyOf(g, actorId, "either");
  return { by: grant.grantorId === actorId ? "grantor" : "grantee" };
}

/**
 * The wrapped key, or a session as the grantor, to the grantee only, only once the wait is over:
 * a read grant opens a read-only session, a takeover grant a whole one that may set a new password.
 */
export function planGrantRelease(g: GrantRecord | null, actorId: UserId, status: GrantStatus): { readOnly: boolean } {
  const grant = partyOf(g, actorId, "grantee");
  if (status === "stale") throw grantStale();
  if (status === "idle") throw notRequested();
  if (status === "waiting") throw stillWaiting(new Date(availableAtMs(grant)!).toISOString());
  return { readOnly: grant.level === "read" };
}
