/**
 * A vault's members: the list checked against the signed roster, sharing (the key wrapped for a
 * checked recipient), role changes and removals, each a link signed here on a signed vault; the
 * member-level check of a whole vault (`verifyVault`).
 */
import { fromBase64, toBase64 } from "../../protocol/encoding";
import { ApiError } from "../errors";
import { keyFingerprint } from "../../protocol/crypto/keys";
import { ed25519Sign, ed25519Verify, rsaModulusBytes, rsaOaepWrap } from "../../protocol/crypto/primitives";
import { rosterWraps, type RosterLink } from "../../protocol/formats/roster";
import { vaultMoved, type ClientCore } from "./core";
import { memberListProblems, type Rosters } from "./roster";
import type { Trust } from "./trust";
import type { MemberEntry, Vault, VaultRole, VaultVerification, VerifiedRoster, WrapCheck } from "./types";
import { mayDo, type GrantableRole } from "../../protocol/vault-roles";
import { nameCheckOf, type Vaults } from "./vaults";

export class Members {
  constructor(
    private readonly core: ClientCore,
    private readonly trust: Trust,
    private readonly rosters: Rosters,
    private readonly vaults: Vaults,
  ) {}

  /** The member list as the server shows it, unchecked: `verifiedMembers` is what to show a person. */
  async members(vaultId: string): Promise<MemberEntry[]> {
    return (await this.core.http.request<{ members: MemberEntry[] }>("GET", `/vaults/${encodeURIComponent(vaultId)}/members`)).members;
  }

  /**
   * The member list checked against the vault's verified signed roster (who, which role, which
   * wrap): a list that disagrees is refused (`MEMBER_LIST_MISMATCH`, `WRAP_MISMATCH`). Without a
   * roster the list is the server's word, and `roster` is null.
   */
  async verifiedMembers(vaultId: string): Promise<{ members: MemberEntry[]; roster: VerifiedRoster | null }> {
    for (let attempt = 1; ; attempt++) {
      const roster = await this.rosters.verifiedRoster(vaultId);
      const members = await this.members(vaultId);
      const problems = roster ? await memberListProblems(roster.state, members) : [];
      if (problems.length === 0) return { members, roster };
      // A change between the two reads shows as a newer head: read both again.
      const again = await this.rosters.verifiedRoster(vaultId);
      if (!(again && again.state.head !== roster!.state.head && attempt < 3)) throw problems[0]!;
    }
  }

  /**
   * Wraps the vault key for a user of the organization (keys checked against pins, statements and
   * invite bindings) and adds them, with a signed `add` link; a rekey in between (409) wraps the
   * new key instead. Refused like every write on a vault that needs a rekey or has no roster.
   */
  async share(vaultId: string, userId: string, role: GrantableRole = "member"): Promise<void> {
    const keys = this.core.requireKeys();
    let recipient = await this.trust.userKeys(userId);
    // Their keys changed between the lookup and the share (a rotation): looked up again, followed through their log, and sent again.
    let rotatedMeanwhile = false;
    await this.rosters.withRosterRetry(async () => {
      if (rotatedMeanwhile) recipient = await this.trust.userKeys(userId);
      rotatedMeanwhile = false;
      return this.vaults.withCurrentKey(vaultId, async (vaultKey, keyVersion, roster) => {
        if (roster.state.keyVersion !== keyVersion) throw vaultMoved();
        const wrapped = await rsaOaepWrap(fromBase64(recipient.publicKey), vaultKey);
        const encryptedVaultKey = toBase64(wrapped);
        const rosterLink = await this.rosters.nextRosterLink(roster.state, {
          op: "add",
          keyVersion,
          subjectId: recipient.userId,
          role,
          subjectKey: await keyFingerprint(recipient),
          wraps: await rosterWraps([{ userId: recipient.userId, encryptedVaultKey }]),
        });
        await this.core.http
          .request("POST", `/vaults/${encodeURIComponent(vaultId)}/members`, {
            body: {
              recipientUserId: recipient.userId,
              role,
              keyVersion,
              encryptedVaultKey,
              wrapSignature: toBase64(await ed25519Sign(keys.signingPrivateKey, wrapped)),
              rosterLink,
            },
          })
          .catch((err: unknown) => {
            rotatedMeanwhile = err instanceof ApiError && err.field === "rosterLink.subjectKey";
            throw err;
          });
        await this.rosters.sawRosterLink(rosterLink);
      });
    });
  }

  /**
   * Removes a member (or leaves, with one's own id). When `rekeyRequired` comes back, call `rekey`.
   * On a signed vault the removal is a signed `remove` link, and the members the server says
   * remain must be the roster's.
   */
  removeMember(vaultId: string, userId: string): Promise<{ rekeyRequired: boolean; remainingMembers: MemberEntry[] }> {
    return this.rosters.withRosterRetry(async () => {
      const roster = await this.rosters.verifiedRoster(vaultId);
      const rosterLink = await this.subjectLink(roster, userId, { op: "remove" });
      const result = await this.core.http.request<{ rekeyRequired: boolean; remainingMembers: MemberEntry[] }>(
        "DELETE",
        `/vaults/${encodeURIComponent(vaultId)}/members/${encodeURIComponent(userId)}`,
        { body: rosterLink ? { rosterLink } : undefined },
      );
      if (roster) {
        await this.rosters.sawRosterLink(rosterLink);
        const members = new Map(roster.state.members);
        const wraps = new Map(roster.state.wraps);
        members.delete(userId);
        wraps.delete(userId);
        const problems = await memberListProblems({ ...roster.state, members, wraps }, result.remainingMembers);
        if (problems.length > 0) throw problems[0]!;
      }
      // Left: this device saw its own removal succeed, so the vault is not expected in listings any more.
      if (userId === this.core.account.userId) await this.vaults.forgetVaults([vaultId]);
      return result;
    });
  }

  /**
   * On a signed vault, the caller's signed link that removes or re-roles `userId`, a member by its
   * roster (else 404), under the keys the roster recorded for them; none on a vault without one.
   */
  private async subjectLink(
    roster: VerifiedRoster | null,
    userId: string,
    change: { op: "remove" } | { op: "role"; role: VaultRole },
  ): Promise<RosterLink | undefined> {
    if (!roster) return undefined;
    const subject = roster.state.members.get(userId);
    if (!subject) throw new ApiError(404, "NOT_FOUND", `${userId} is not a member of the vault according to its signed roster`);
    return this.rosters.nextRosterLink(roster.state, {
      ...change,
      keyVersion: roster.state.keyVersion,
      subjectId: userId,
      subjectKey: subject.key,
      wraps: [],
    });
  }

  /** Changes a member's role; on a signed vault, with a signed `role` link. */
  changeRole(vaultId: string, userId: string, role: VaultRole): Promise<MemberEntry> {
    return this.rosters.withRosterRetry(async () => {
      const rosterLink = await this.subjectLink(await this.rosters.verifiedRoster(vaultId), userId, { op: "role", role });
      const entry = await this.core.http.request<MemberEntry>(
        "PATCH",
        `/vaults/${encodeURIComponent(vaultId)}/members/${encodeURIComponent(userId)}`,
        { body: { role, rosterLink } },
      );
      await this.rosters.sawRosterLink(rosterLink);
      return entry;
    });
  }

  /**
   * Checks every member's wrap as far as a member can: its signature verifies against the
   * sender's pinned key, the sender is an owner or admin of the vault, the wrap has the size
   * its recipient's key gives, the wraps are exactly one per member, and the caller's own wrap
   * opens. (Other members' wraps cannot be opened here: that is the point.)
   */
  async verifyVault(vaultId: string): Promise<Omit<VaultVerification, "items" | "fingerprint">> {
    const vault = await this.vaults.getVault(vaultId);
    const [members, org] = await Promise.all([this.members(vaultId), this.trust.orgMembers()]);
    // Emails only of people whose keys and identity check out; anyone else by id.
    const emails = new Map(org.filter((m) => !m.problem).map((m) => [m.userId, m.email]));
    const roles = new Map(members.map((m) => [m.userId, m.role]));
    const problems = memberSetProblems(vault, members, roles, this.core.account.userId);
    const warnings: string[] = [];
    if (vault.rekeyRequired) warnings.push("a member left and the vault has not been rekeyed: the key they held still opens its items");
    const roster = await this.checkRoster(vault, members, problems, warnings);
    try {
      await this.vaults.openVault(vault);
    } catch (err) {
      problems.push(`your own wrap does not open: ${(err as Error).message}`);
    }
    const checks: WrapCheck[] = [];
    for (const m of members) checks.push(await this.checkWrap(vault, m, roles, emails));
    return {
      vaultId: vault.vaultId,
      vaultName: vault.vaultName,
      vaultType: vault.vaultType,
      keyVersion: vault.keyVersion,
      ok: problems.length === 0 && checks.every((c) => c.ok),
      problems,
      warnings,
      members: checks,
      roster: roster && { seq: roster.state.seq, head: roster.state.head },
    };
  }

  /** The vault against its signed roster (key version, pending rekey, member list, name): the problems and warnings found, and the roster. */
  private async checkRoster(vault: Vault, members: MemberEntry[], problems: string[], warnings: string[]): Promise<VerifiedRoster | null> {
    let roster: VerifiedRoster | null = null;
    try {
      roster = await this.rosters.verifiedRoster(vault.vaultId);
      if (roster) {
        if (roster.state.keyVersion !== vault.keyVersion)
          problems.push(`the vault is at key version ${vault.keyVersion}, its signed roster at ${roster.state.keyVersion}`);
        if (roster.state.rekeyRequired && !vault.rekeyRequired)
          problems.push("its signed roster says a removed member still holds the key, but the server says no rekey is due");
        for (const problem of await memberListProblems(roster.state, members)) problems.push(`signed roster: ${problem.message}`);
      } else {
        warnings.push("the vault has no signed roster: its member list is the server's word (an owner can adopt it)");
      }
      const name = nameCheckOf(vault, roster);
      if (name.status === "mismatch") problems.push(`the server calls the vault "${name.shown}", its signed roster "${name.name}"`);
      if (name.status === "unverified" && roster) warnings.push(`its name is not vouched for: ${name.why}`);
    } catch (err) {
      problems.push(`signed roster: ${(err as Error).message}`);
    }
    return roster;
  }

  /** One member's wrap: its vault, its size for its recipient's key, its signature by its sender's key, and a sender who may wrap. */
  private async checkWrap(
    vault: Vault,
    m: MemberEntry,
    roles: ReadonlyMap<string, VaultRole>,
    emails: ReadonlyMap<string, string>,
  ): Promise<WrapCheck> {
    const name = (id: string) => emails.get(id) ?? id;
    const check: WrapCheck = { userId: m.userId, email: emails.get(m.userId), role: m.role, senderId: m.senderId, ok: true, problems: [] };
    try {
      const wrapped = fromBase64(m.encryptedVaultKey);
      if (m.vaultId !== vault.vaultId) check.problems.push(`the wrap belongs to vault ${m.vaultId}`);
      const expectedSize =
        vault.vaultType === "personal" ? 40 : await rsaModulusBytes(fromBase64((await this.trust.keysOf(m.userId)).publicKey));
      if (wrapped.length !== expectedSize)
        check.problems.push(`the wrap is ${wrapped.length} bytes, not the ${expectedSize} its recipient's key gives`);
      const sender = await this.trust.keysOf(m.senderId);
      if (!(await ed25519Verify(fromBase64(sender.signingPublicKey), wrapped, fromBase64(m.wrapSignature)))) {
        check.problems.push(`the signature does not verify against the signing key of ${name(m.senderId)}`);
      }
      const senderRole = roles.get(m.senderId);
      // Who may wrap the key for a member is who may add one (the role table).
      if (!senderRole || !mayDo(senderRole, "addMember")) {
        check.problems.push(
          `signed by ${name(m.senderId)}, who is ${senderRole ? `a ${senderRole}` : "not a member"} of this vault, not an owner or admin`,
        );
      }
    } catch (err) {
      check.problems.push((err as Error).message);
    }
    check.ok = check.problems.length === 0;
    return check;
  }
}

/** The member set as the server lists it: each user once, the caller in it, one member of a personal vault, an owner. */
function memberSetProblems(vault: Vault, members: readonly MemberEntry[], roles: ReadonlyMap<string, VaultRole>, me: string): string[] {
  const problems: string[] = [];
  if (roles.size !== members.length) problems.push("the member list holds the same user more than once");
  if (!roles.has(me)) problems.push("you are not in the member list the server returned");
  if (vault.vaultType === "personal" && members.length !== 1) problems.push("a personal vault has more than one member");
  if (![...roles.values()].includes("owner")) problems.push("the vault has no owner");
  return problems;
}
