/**
 * The documents of emergency access grants (SQL: migration 027's `emergency_grants`), one per grant.
 * What a grant may lack (no request standing, never refused, no session opened) is stored as null,
 * so that one filter on `null` finds it whether the field is null or absent.
 */
import type { GrantRecord } from "../../../domain/emergency/decisions";
import type { OrgId, UserId } from "../../../domain/ids";
import type { EmergencyLevel } from "../../../../protocol/formats/emergency";

/** A grant; `_id` is its id. Unique on (grantorId, granteeId): one grant per grantor and grantee. */
export interface GrantDoc {
  _id: string;
  orgId: OrgId;
  grantorId: UserId;
  granteeId: UserId;
  level: EmergencyLevel;
  waitHours: number;
  /** `keyFingerprint` of the grantee's keys it is wrapped to, and of the grantor's when it was made. */
  granteeKeys: string;
  keys: string;
  kdfVersion: number;
  /** The grantor's stretched key wrapped to the grantee (opaque to the server), and the grantor's signature. */
  wrappedKey: string;
  signature: string;
  createdAt: string;
  updatedAt: string;
  requestedAt: string | null;
  refusedAt: string | null;
  sessionId: string | null;
  openedAt: string | null;
}

export const toGrant = (d: GrantDoc): GrantRecord => ({
  grantId: d._id,
  orgId: d.orgId,
  grantorId: d.grantorId,
  granteeId: d.granteeId,
  level: d.level,
  waitHours: d.waitHours,
  granteeKeys: d.granteeKeys,
  keys: d.keys,
  kdfVersion: d.kdfVersion,
  wrappedKey: d.wrappedKey,
  signature: d.signature,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
  ...(d.requestedAt != null && { requestedAt: d.requestedAt }),
  ...(d.refusedAt != null && { refusedAt: d.refusedAt }),
  ...(d.sessionId != null && { sessionId: d.sessionId }),
  ...(d.openedAt != null && { openedAt: d.openedAt }),
});
