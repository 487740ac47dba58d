/** What an organization role allows, from the access token's claims. */
import type { OrgId } from "../ids";
import { notOrgManager, policiesOwnersOnly } from "./refusals";
import type { Caller } from "../types";
import { managesOrg, mayChangePolicies } from "../../../protocol/org-roles";

/**
 * Owners and admins manage their organization: its invites (contract section 6) and its audit log
 * (section 8). Anyone else, and anyone of another organization, gets 403.
 */
export function assertOrgManager(caller: Caller, orgId: OrgId, what: string): void {
  if (caller.orgId !== orgId || !managesOrg(caller.role)) {
    throw notOrgManager(what);
  }
}

/** Only owners set the organization's policies; admins and members get 403. */
export function assertMayChangePolicies(caller: Caller): void {
  if (!mayChangePolicies(caller.role)) throw policiesOwnersOnly();
}
