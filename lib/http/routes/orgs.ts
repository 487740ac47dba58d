/** An organization, its members and policies. */
import * as p from "../params";
import { PASSKEY_SIGN_IN_POLICIES } from "../../domain/orgs/policies";
import { LOCK_OUT_FIELDS } from "../../domain/orgs/policy-change";
import { created, ok, type RouteDef } from "./route-def";

export const ORG_ROUTES = [
  { method: "GET", path: "/orgs/:orgId", action: "orgs.get", summary: "An organization", params: { orgId: p.pathId }, reply: ok("Org") },
  {
    method: "DELETE",
    path: "/orgs/:orgId/members/:userId",
    action: "orgs.removeMember",
    summary:
      "Take a person out of the organization (or leave it): their sessions end and every vault refuses them; with orgLink, the removal signed into the organization's log",
    params: { ...p.STRICT, orgId: p.pathId, userId: p.pathId, orgLink: { ...p.orgLink, optional: true } },
    reply: ok("RemovedFromOrg"),
  },
  {
    method: "GET",
    path: "/orgs/:orgId/log",
    action: "orgs.log",
    summary: "The organization's signed log: who is in it, with which role, and who signed each change",
    params: { orgId: p.pathId },
    reply: ok("OrgLog"),
  },
  {
    method: "POST",
    path: "/orgs/:orgId/log",
    action: "orgs.appendLog",
    summary: "Append a link to the organization's signed log: an owner's adoption, or a member's own join",
    params: { ...p.STRICT, orgId: p.pathId, link: p.orgLink },
    reply: created("OrgLogHead"),
  },
  {
    method: "GET",
    path: "/orgs/:orgId/policies",
    action: "orgs.policies",
    enrolOnly: true,
    summary: "The organization's policies: what the server enforces, and what only clients apply",
    params: { orgId: p.pathId },
    reply: ok("Policies"),
  },
  {
    method: "PUT",
    path: "/orgs/:orgId/policies",
    action: "orgs.setPolicies",
    summary:
      "Set the organization's policies (owners); a change that would shut people out is refused naming them, unless confirmLockOut names each such policy",
    params: {
      ...p.STRICT,
      orgId: p.pathId,
      requireSecondFactor: { type: "boolean" },
      passkeySignIn: { type: "enum", values: PASSKEY_SIGN_IN_POLICIES, optional: true },
      minKdf: {
        type: "object",
        optional: true,
        strict: "remove",
        props: { argon2idMemoryKiB: p.positiveInteger, argon2idIterations: p.positiveInteger, pbkdf2Iterations: p.positiveInteger },
      },
      inviteMaxLifetime: { type: "string", optional: true, max: 16 },
      sendsForbidden: { type: "boolean", optional: true },
      sendMaxLifetime: { type: "string", optional: true, nullable: true, max: 16 },
      recoveryMinThreshold: { type: "number", integer: true, optional: true },
      client: {
        type: "object",
        optional: true,
        strict: "remove",
        props: {
          minPasswordScore: { type: "number", integer: true, optional: true },
          idleLockMinutes: { type: "number", integer: true, optional: true },
        },
      },
      confirmLockOut: {
        type: "array",
        optional: true,
        max: LOCK_OUT_FIELDS.length,
        items: { type: "enum", values: [...LOCK_OUT_FIELDS] },
      },
    },
    reply: ok("Policies"),
  },
  {
    method: "GET",
    path: "/orgs/:orgId/members",
    action: "orgs.members",
    summary: "An organization's users and their public keys",
    params: { orgId: p.pathId },
    reply: ok("OrgMembers"),
  },
] as const satisfies readonly RouteDef[];
