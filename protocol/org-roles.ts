/**
 * Organization roles and what they allow (contract sections 6 and 8), as plain predicates: the
 * server enforces them (lib/domain/orgs/roles.ts) and the clients show or hide what they allow with
 * the same ones.
 */
export const ORG_ROLES = ["owner", "admin", "member"] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

/** Owners and admins manage their organization: its invites and its audit log. */
export function managesOrg(role: OrgRole): boolean {
  return role === "owner" || role === "admin";
}

/**
 * Who may take a person out of the organization: anyone themselves (they leave), an owner anyone,
 * an admin members and admins. The last owner stays (`orgOwnersAfter`).
 */
export function mayRemoveFromOrg(actorRole: OrgRole, targetRole: OrgRole, removingSelf: boolean): boolean {
  return removingSelf || actorRole === "owner" || (actorRole === "admin" && targetRole !== "owner");
}

/** Only owners change the organization's policies (second factors, recovery, KDF minimums). */
export function mayChangePolicies(role: OrgRole): boolean {
  return role === "owner";
}

/** Owners and admins may hold a share of a colleague's account recovery. */
export function mayBeTrustee(role: OrgRole): boolean {
  return managesOrg(role);
}
