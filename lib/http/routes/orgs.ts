/** An organization, its members and policies. */
import * as p from "../params";
import { ok, type RouteDef } from "./route-def";

export const ORG_ROUTES = [
  { method: "GET", path: "/orgs/:orgId", action: "orgs.get", summary: "An organization", params: { orgId: p.pathId }, reply: ok("Org") },
  {
    method: "DELETE",
    path: "/orgs/:orgId/members/:userId",
    action: "orgs.removeMember",
    summary: "Take a person out of the organization (or leave it): their sessions end and every vault refuses them",
    params: { orgId: p.pathId, userId: p.pathId },
    reply: ok("RemovedFromOrg"),
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
    summary: "Set the organization's policies (owners)",
    params: {
      ...p.STRICT,
      orgId: p.pathId,
      requireSecondFactor: { type: "boolean" },
      minKdf: {
        type: "object",
        optional: true,
        strict: "remove",
        props: { argon2idMemoryKiB: p.positiveInteger, argon2idIterations: p.positiveInteger, pbkdf2Iterations: p.positiveInteger },
      },
      inviteMaxLifetime: { type: "string", optional: true, max: 16 },
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
