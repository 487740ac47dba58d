/** Invites, and the organization's audit log. */
import { DEFAULT_AUDIT_PAGE, MAX_AUDIT_PAGE } from "../../domain/audit/log";
import * as p from "../params";
import { ok, created, noContent, type RouteDef } from "./route-def";

export const INVITE_ROUTES = [
  {
    method: "POST",
    path: "/invites",
    action: "invites.create",
    summary: "Invite a new user",
    params: { ...p.STRICT, email: p.email, role: p.grantableRole, expiresIn: { type: "string", min: 1, max: 16, optional: true } },
    reply: created("InviteCreated"),
  },
  {
    method: "GET",
    path: "/invites",
    action: "invites.list",
    summary: "An organization's pending invites",
    params: { orgId: p.orgIdQuery },
    reply: ok("InviteList"),
  },
  {
    method: "POST",
    path: "/invites/redeem",
    action: "invites.redeem",
    public: true,
    summary: "Check an invite token",
    // Checked by the action, after the rate limit: a malformed token costs a redeem attempt too.
    params: {
      ...p.STRICT,
      token: { type: "any", optional: true, openapi: { type: "string", minLength: p.opaqueToken.min, maxLength: p.opaqueToken.max } },
    },
    reply: ok("InviteRedeemable"),
  },
  {
    method: "POST",
    path: "/invites/:inviteId/statement",
    action: "invites.attachStatement",
    summary: "Attach the inviter's signed statement to an invite",
    params: { ...p.STRICT, inviteId: p.pathId, statement: p.signedStatement },
    reply: noContent,
  },
  {
    method: "DELETE",
    path: "/invites/:inviteId",
    action: "invites.revoke",
    summary: "Revoke an invite",
    params: { inviteId: p.pathId },
    reply: noContent,
  },

  {
    method: "GET",
    path: "/audit",
    action: "audit.list",
    summary: "An organization's audit log, newest first",
    params: {
      orgId: p.orgIdQuery,
      limit: {
        ...p.seqNumber,
        max: MAX_AUDIT_PAGE,
        optional: true,
        openapi: { type: "integer", minimum: 1, maximum: MAX_AUDIT_PAGE, default: DEFAULT_AUDIT_PAGE },
      },
      before: { ...p.seqNumber, optional: true },
    },
    reply: ok("AuditPage"),
  },
  {
    method: "GET",
    path: "/audit/verify",
    action: "audit.verify",
    summary: "Check an organization's audit chain (the server's word; clients check it themselves)",
    params: { orgId: p.orgIdQuery },
    reply: ok("AuditVerdict"),
  },
  {
    method: "GET",
    path: "/audit/checkpoint",
    action: "audit.checkpoint",
    summary: "The organization's audit head (seq, hash), signed now with the server's audit key",
    params: { orgId: p.orgIdQuery },
    reply: ok("AuditCheckpoint"),
  },
  {
    method: "GET",
    path: "/audit/key",
    action: "audit.key",
    public: true,
    summary: "The server's audit key (Ed25519, raw, base64): clients pin it and check checkpoints and exported logs with it",
    params: {},
    reply: ok("AuditKey"),
  },
] as const satisfies readonly RouteDef[];
