/** `client.members`: a vault's members and its signed roster (the parts: members.ts, roster.ts, rekey.ts). */
import type { GrantableRole } from "../../../protocol/vault-roles";
import type { Parts } from "../parts";
import type { AdoptConfirmation, RekeyOptions } from "../rekey";
import type { MemberEntry, VaultRole, VerifiedRoster } from "../types";
import { lc } from "./ids";

export interface MembersApi {
  /** The member list as the server shows it, unchecked: `verified` is what to show a person. */
  list(vaultId: string): Promise<MemberEntry[]>;
  /**
   * The member list checked against the vault's verified signed roster (who, which role, which
   * wrap): a list that disagrees is refused (`MEMBER_LIST_MISMATCH`, `WRAP_MISMATCH`). Without a
   * roster the list is the server's word, and `roster` is null.
   */
  verified(vaultId: string): Promise<{ members: MemberEntry[]; roster: VerifiedRoster | null }>;
  /**
   * Wraps the vault key for a user of the organization (keys checked against pins, statements and
   * invite bindings) and adds them, with a signed `add` link.
   */
  share(vaultId: string, userId: string, role?: GrantableRole): Promise<void>;
  /** Removes a member (or leaves, with one's own id). When `rekeyRequired` comes back, call `client.vaults.rekey`. */
  remove(vaultId: string, userId: string): Promise<{ rekeyRequired: boolean; remainingMembers: MemberEntry[] }>;
  /** Changes a member's role; on a signed vault, with a signed `role` link. */
  changeRole(vaultId: string, userId: string, role: VaultRole): Promise<MemberEntry>;
  /**
   * The vault's signed roster, verified link by link under the role rules and the pinned keys, and
   * never older than, nor different from, a head this client saw before (`ROSTER_ROLLBACK`). Null
   * for a vault without a roster.
   */
  roster(vaultId: string): Promise<VerifiedRoster | null>;
  /**
   * Gives a vault made without a roster a signed one. The owner says who the members are (user
   * ids, the owner included): a list that differs from the server's is refused
   * (`MEMBER_LIST_MISMATCH`). Then, as a rekey, a fresh key is wrapped for exactly those members,
   * with the `adopt` link that starts the roster. `name`, when given, is the vault's name as the
   * owner confirmed it: the link signs it.
   */
  adoptRoster(vaultId: string, confirmed: AdoptConfirmation, opts?: RekeyOptions): Promise<VerifiedRoster>;
}

export function membersApi({ members, rosters, rekeys }: Pick<Parts, "members" | "rosters" | "rekeys">): MembersApi {
  return {
    list: (vaultId) => members.members(lc(vaultId)),
    verified: (vaultId) => members.verifiedMembers(lc(vaultId)),
    share: (vaultId, userId, role = "member") => members.share(lc(vaultId), lc(userId), role),
    remove: (vaultId, userId) => members.removeMember(lc(vaultId), lc(userId)),
    changeRole: (vaultId, userId, role) => members.changeRole(lc(vaultId), lc(userId), role),
    roster: (vaultId) => rosters.verifiedRoster(lc(vaultId)),
    adoptRoster: (vaultId, confirmed, opts = {}) => {
      const confirmedMembers = confirmed.members.map((m) => ({ ...m, userId: lc(m.userId) }));
      return rekeys.adoptRoster(lc(vaultId), { ...confirmed, members: confirmedMembers }, opts);
    },
  };
}
