/**
 * `client.people`: the organization's people (the parts: trust/ checks them, people.ts takes one
 * out, exposure.ts says what they could read).
 */
import type { ExposureReport } from "../../exposure";
import type { Parts } from "../parts";
import type { Removal, RemovalFinished } from "../people";
import type { CheckedMember, OrgRole, RekeyProgress, TrustLevel } from "../types";
import { lc } from "./ids";

export interface PeopleApi {
  /**
   * The organization's people, each bundle checked (the caller's own entry against the caller's
   * own keys and email); one that fails carries its `problem` rather than failing the list (show
   * it by id, never share with it).
   */
  list(): Promise<CheckedMember[]>;
  /** A user of the caller's organization by email or id, refused when the server's pairing of id, email and keys does not hold. */
  find(emailOrId: string): Promise<{ userId: string; email: string; role: OrgRole; trust?: TrustLevel; stated: boolean }>;
  /** A member of the caller's organization by email or id, with what is wrong with them if anything (to show it, or to check a changed key with them). */
  findMember(emailOrId: string): Promise<CheckedMember>;
  /** Takes a person out of the organization, or (one's own id) leaves it; `finishRemoval` then rekeys what it left. */
  remove(userId: string): Promise<Removal>;
  /** For each vault the removal left to rekey: the person's signed `remove` link, then a rekey, where this client may. */
  finishRemoval(
    removal: Removal,
    opts?: { onProgress?: (vaultId: string, done: number, total: number, step: RekeyProgress) => void },
  ): Promise<RemovalFinished>;
  /** After a removal: which secrets `userId` could have read and which were changed since (the rules: sdk/exposure.ts). */
  exposure(vaultId: string, userId: string): Promise<ExposureReport>;
}

export function peopleApi({ trust, people, exposures }: Pick<Parts, "trust" | "people" | "exposures">): PeopleApi {
  return {
    list: () => trust.orgMembers(),
    find: (emailOrId) => trust.findUser(emailOrId),
    findMember: (emailOrId) => trust.findMember(emailOrId),
    remove: (userId) => people.removeFromOrg(lc(userId)),
    finishRemoval: (removal, opts) => people.finishRemoval(removal, opts),
    exposure: (vaultId, userId) => exposures.report(lc(vaultId), lc(userId)),
  };
}
