/**
 * Emergency access (lib/domain/emergency/decisions.ts; the format: docs/protocol/emergency-access.md):
 * a member grants another the account's key, wrapped on the grantor's device to the grantee's
 * verified keys; the grantee asks, the wait runs, the grantor may refuse; after it, the grantee
 * opens a session as the grantor, read-only or to take the account over. The recovery service
 * serves them (services/emergency-access.ts).
 */
import { EMERGENCY_LEVELS, MAX_WAIT_HOURS, MIN_WAIT_HOURS } from "../../../protocol/formats/emergency";
import * as p from "../params";
import { noContent, ok, type RouteDef } from "./route-def";

/** `keyFingerprint` (protocol/crypto/keys.ts): SHA-256, hex. */
const fingerprint = { type: "string", length: 64, pattern: /^[0-9a-f]{64}$/ } as const;
/** The account's stretched key wrapped with RSA-OAEP to the grantee's key (RSA-4096 at most: 512 bytes). */
const wrappedKey = p.base64(512);

export const EMERGENCY_ROUTES = [
  {
    method: "GET",
    path: "/emergency/grants",
    action: "recovery.emergencyGrants",
    summary: "The emergency access grants the caller made (`granted`) and the ones made to the caller (`received`), each with its status",
    reply: ok("EmergencyGrants"),
  },
  {
    method: "PUT",
    path: "/emergency/grants/:grantId",
    action: "recovery.emergencyGrant",
    summary:
      "Grant a member emergency access, or make the grant again under its id (after a password change or key rotation): the account's key wrapped to the grantee's keys, signed; the level and wait stay fixed while a request stands",
    params: {
      ...p.STRICT,
      grantId: p.pathId,
      granteeId: p.uuid,
      level: { type: "enum", values: [...EMERGENCY_LEVELS] },
      waitHours: { type: "number", integer: true, min: MIN_WAIT_HOURS, max: MAX_WAIT_HOURS },
      granteeKeys: fingerprint,
      keys: fingerprint,
      kdfVersion: p.positiveInteger,
      wrappedKey,
      signature: p.signature,
    },
    reply: ok("EmergencyGrant"),
  },
  {
    method: "DELETE",
    path: "/emergency/grants/:grantId",
    action: "recovery.emergencyRemove",
    summary: "Revoke a grant (its grantor) or decline it (its grantee), at any time: a session it opened ends",
    params: { grantId: p.pathId },
    reply: noContent,
  },
  {
    method: "POST",
    path: "/emergency/grants/:grantId/request",
    action: "recovery.emergencyRequest",
    summary: "Ask for the access (its grantee): the wait starts, under the level and wait the grant states",
    params: { ...p.STRICT, grantId: p.pathId },
    reply: ok("EmergencyGrant"),
  },
  {
    method: "POST",
    path: "/emergency/grants/:grantId/refuse",
    action: "recovery.emergencyRefuse",
    summary: "Refuse a standing request (its grantor), during the wait or after it: the grant is idle again and a session it opened ends",
    params: { ...p.STRICT, grantId: p.pathId },
    reply: ok("EmergencyGrant"),
  },
  {
    method: "POST",
    path: "/emergency/grants/:grantId/session",
    action: "recovery.emergencySession",
    summary:
      "Once the wait is over (its grantee): the wrapped key and a session as the grantor, read-only for a read grant (no refresh token: open another when it expires), whole for a takeover, which may then set a new password without the old one",
    params: { ...p.STRICT, grantId: p.pathId, deviceName: p.deviceName },
    reply: ok("EmergencySession"),
  },
] as const satisfies readonly RouteDef[];
