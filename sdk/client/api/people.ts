/**
 * `client.people`: the organization's people (the parts: trust/ checks them, people.ts takes one
 * out, exposure.ts says what they could read).
 */
import type { ExposureReport } from "../../exposure";
import type { Parts } from "../parts";
import type { Removal, RemovalFinished } from "../people";
import type { OrgLogs, SignedMember } from "../org-log";
import type { OrgRole, RekeyProgress, TrustLevel } from "../types";
import { lc } from "./ids";

export interface PeopleApi {
  /**
   * The organization's people, each bundle checked (the caller's own entry against the caller's
   * own keys and email); one that fails carries its `problem` rather than failing the list (show
   * it by id, never share with it). Roles are the organization's signed log's (`orgLog: "signed"`,
   * with who signed the entry); a person it does not name is `unsigned`, shown as a member.
   */
  list(): Promise<SignedMember[]>;
  /** A user of the caller's organization by email or id, refused when the server's pairing of id, email and keys does not hold; the role as `list` gives it. */
  find(
    emailOrId: string,
  ): Promise<
    { userId: string; email: string; role: OrgRole; trust?: TrustLevel; stated: boolean } & Pick<SignedMember, "orgLog" | "signedBy">
  >;
  /** A member of the caller's organization by email or id, with what is wrong with them if anything (to show it, or to check a changed key with them). */
  findMember(emailOrId: string): Promise<SignedMember>;
  /**
   * The organization's signed log as this device verified it: `signed: false` while the
   * organization has none (an owner's next session adopts one), else its head and who it took out.
   */
  log(): Promise<{ signed: false } | { signed: true; seq: number; head: string; removed: string[] }>;
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

/** `found` with its role as the organization's signed log gives it (`unsigned`, a member, when the log does not name them). */
async function signedRoleOf<T extends { userId: string; role: OrgRole }>(
  orgLogs: OrgLogs,
  found: T,
): Promise<T & Pick<SignedMember, "orgLog" | "signedBy">> {
  const state = await orgLogs.verified();
  if (!state) return found;
  const signed = state.members.get(found.userId);
  const removed = state.removed.get(found.userId);
  if (removed) return { ...found, role: "member", orgLog: "removed", signedBy: removed.signedBy };
  if (!signed) return { ...found, role: "member", orgLog: "unsigned" };
  return { ...found, role: signed.role, orgLog: "signed", signedBy: signed.signedBy };
}

export function peopleApi({ trust, people, exposures, orgLogs }: Pick<Parts, "trust" | "people" | "exposures" | "orgLogs">): PeopleApi {
  return {
    list: () => orgLogs.members(),
    find: async (emailOrId) => signedRoleOf(orgLogs, await trust.findUser(emailOrId)),
    findMember: async (emailOrId) => signedRoleOf(orgLogs, await trust.findMember(emailOrId)),
    log: async () => {
      const state = await orgLogs.verified();
      return state ? { signed: true, seq: state.seq, head: state.head, removed: [...state.removed.keys()] } : { signed: false };
    },
    remove: (userId) => people.removeFromOrg(lc(userId)),
    finishRemoval: (removal, opts) => people.finishRemoval(removal, opts),
    exposure: (vaultId, userId) => exposures.report(lc(vaultId), lc(userId)),
  };
}
