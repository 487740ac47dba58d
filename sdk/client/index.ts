/**
 * `VaultClient`: the whole client flow over the service's HTTP interface. The server stores only
 * what this client seals, wraps and signs; everything it hands back is checked before use.
 *
 * A facade over one part per concern, each in its own file (or folder: trust/, item-log/) beside
 * this one: the session (register, login, unlock), trust in other users' keys, vaults, members and
 * the signed roster, the rekey, items, invites and the audit log. They share one `ClientCore`
 * (core.ts). Ids a caller passes are lowered here, once (`lc`).
 */
import type { Bytes } from "../../protocol/encoding";
import type { Transport } from "../http";
import type { ItemContent } from "../items";
import { groupedFingerprint, keyFingerprint, type KdfChoice } from "../../protocol/crypto/keys";
import { Audit, type CheckedAuditLog } from "./audit";
import type { AuditExport } from "../../protocol/formats/audit";
import { ClientCore, type VaultClientOptions } from "./core";
import { Invites, type CheckedInvite, type CreatedInvite } from "./invites";
import { Items } from "./items";
import { vaultStateFingerprint } from "../fingerprints";
import { ItemLogs } from "./item-log";
import { Members } from "./members";
import { Rekeys, type AdoptConfirmation, type RekeyOptions } from "./rekey";
import { History } from "./history";
import { Transfers, type ImportResult, type TransferProgress } from "./transfer";
import { Exposures } from "./exposure";
import type { ExposureReport } from "../exposure";
import type { ExportFormat } from "../transfer/export";
import { Rosters } from "./roster";
import { Session } from "./session";
import { PasswordChanges, type PasswordChangeResult } from "./password";
import { KeyRotations, type KeyRotationResult } from "./keys";
import { People, type Removal, type RemovalFinished } from "./people";
import { Trust } from "./trust";
import type {
  Account,
  AuditRecord,
  CheckedMember,
  Invite,
  Item,
  ItemRevision,
  MemberEntry,
  OrgRole,
  TrashedItem,
  RekeyResult,
  ServedBundle,
  SessionInfo,
  TrustLevel,
  Vault,
  VaultRole,
  VaultVerification,
  VerifiedRoster,
} from "./types";
import type { GrantableRole } from "../../protocol/vault-roles";
import { Vaults, type CheckedVault } from "./vaults";
import { Factors } from "./factors";
import { Recovery, type RecoveryRenewal } from "./recovery";

export type { VaultClientOptions } from "./core";
export type { CheckedInvite, CreatedInvite } from "./invites";
export type { AdoptConfirmation, RekeyOptions } from "./rekey";
export type { CheckedVault, NameCheck } from "./vaults";
export type { PasswordChangeResult } from "./password";
export type { KeyRotationResult } from "./keys";
export type { Removal, RemovalFinished } from "./people";
export type { ImportResult, TransferProgress } from "./transfer";
export type { FactorInfo, Policies } from "./factors";
export type { SecondFactorAnswer, SecondFactorChallenge, SecondFactorPrompt } from "./login";
export type { PendingRecovery, RecoveryTask } from "./recovery";
export type * from "./types";

/**
 * Ids as the server stores them: lower case. Every id a caller passes is lowered here, at the
 * boundary, and nowhere inside; what the server answers must already be so (the parts refuse it otherwise).
 */
const lc = (id: string) => id.toLowerCase();

export class VaultClient {
  private readonly core: ClientCore;
  private readonly session: Session;
  private readonly trust: Trust;
  private readonly rosters: Rosters;
  private readonly vaults: Vaults;
  private readonly memberOps: Members;
  private readonly items: Items;
  private readonly rekeys: Rekeys;
  private readonly history: History;
  private readonly transfers: Transfers;
  private readonly exposures: Exposures;
  private readonly invites: Invites;
  private readonly audit: Audit;
  private readonly passwords: PasswordChanges;
  private readonly keyRotations: KeyRotations;
  private readonly people: People;
  /** Second factors and the organization's policies (factors.ts). */
  readonly factors: Factors;
  /** k-of-n account recovery: enrol, approve as a trustee, recover (recovery.ts). */
  readonly recovery: Recovery;

  constructor(opts: VaultClientOptions) {
    this.core = new ClientCore(opts);
    this.trust = new Trust(this.core);
    this.audit = new Audit(this.core);
    this.invites = new Invites(this.core, this.trust);
    this.session = new Session(this.core, this.trust, this.invites);
    this.rosters = new Rosters(this.core, this.trust, this.audit);
    this.vaults = new Vaults(this.core, this.trust, this.rosters);
    this.memberOps = new Members(this.core, this.trust, this.rosters, this.vaults);
    this.items = new Items(this.core, this.vaults, this.rosters, new ItemLogs(this.core, this.trust, this.rosters, this.audit));
    this.passwords = new PasswordChanges(this.core, this.trust, this.rosters, this.vaults);
    this.keyRotations = new KeyRotations(this.core, this.trust, this.rosters, this.vaults, this.memberOps);
    this.history = new History(this.core, this.vaults, this.items);
    this.transfers = new Transfers(this.core, this.vaults, this.items);
    this.exposures = new Exposures(this.rosters, this.items, this.history, this.audit);
    this.rekeys = new Rekeys(this.core, this.trust, this.rosters, this.vaults, this.memberOps, this.items, this.history);
    this.people = new People(this.core, this.memberOps, this.rekeys);
    this.factors = new Factors(this.core);
    this.recovery = new Recovery(this.core, this.trust, this.session, this.passwords, this.keyRotations);
  }

  get http(): Transport {
    return this.core.http;
  }

  get account(): Account {
    return this.core.account;
  }

  get unlocked(): boolean {
    return this.core.keys !== undefined;
  }

  // ---- Session (session.ts) ----------------------------------------------------------------------

  register(opts: Parameters<Session["register"]>[0]): Promise<Account> {
    return this.session.register(opts);
  }
  login(email: string, password: string): Promise<Account> {
    return this.session.login(email, password);
  }
  unlock(password: string): Promise<void> {
    return this.session.unlock(password);
  }
  unlockWithStretchedKey(stretchedKey: Bytes): Promise<void> {
    return this.session.unlockWithStretchedKey(stretchedKey);
  }
  exportStretchedKey(): Bytes {
    return this.session.exportStretchedKey();
  }
  lock(): void {
    this.session.lock();
  }
  logout(): Promise<void> {
    this.items.synced.forget();
    return this.session.logout();
  }
  me(): Promise<{ userId: string; email: string; orgId: string; role: OrgRole; createdAt: string; accountVersion: number }> {
    return this.session.me();
  }
  /**
   * Changes the master password (password.ts): every personal vault's key wrapped again, the
   * account's other sessions ended. `kdf` chooses new parameters (never below the floor).
   */
  async changePassword(
    current: string,
    next: string,
    opts?: { kdf?: KdfChoice },
  ): Promise<PasswordChangeResult & { recovery: RecoveryRenewal }> {
    const changed = await this.passwords.changePassword(current, next, opts);
    // The recovery copy held the old password's key: made again, to the same trustees, or said to be stale.
    return { ...changed, recovery: await this.recovery.renew() };
  }
  /**
   * Replaces the account's RSA and Ed25519 keys (keys.ts): a signed step in the account's key log,
   * every vault's key wrapped to the new keys, the account's other sessions ended. Peers follow the
   * key log from the keys they pinned, without a warning.
   */
  rotateKeys(opts?: { rsaBits?: number }): Promise<KeyRotationResult> {
    return this.keyRotations.rotateKeys(opts);
  }
  /** A user's key log, verified on its own (each step signed by the key before it and its own): oldest first. */
  async keyLog(userId: string): Promise<Array<{ version: number; fingerprint: string; at?: string }>> {
    return (await this.trust.verifiedKeyLog(lc(userId))).map((e) => ({
      version: e.entry.version,
      fingerprint: groupedFingerprint(e.keys),
      ...(e.entry.at !== undefined && { at: e.entry.at }),
    }));
  }
  /** Takes a person out of the organization, or (one's own id) leaves it (people.ts); `finishRemoval` then rekeys what it left. */
  removeFromOrg(userId: string): Promise<Removal> {
    return this.people.removeFromOrg(lc(userId));
  }
  finishRemoval(removal: Removal, opts?: Parameters<People["finishRemoval"]>[1]): Promise<RemovalFinished> {
    return this.people.finishRemoval(removal, opts);
  }
  sessions(): Promise<SessionInfo[]> {
    return this.session.sessions();
  }
  endSession(sessionId: string): Promise<void> {
    return this.session.endSession(lc(sessionId));
  }
  endOtherSessions(): Promise<number> {
    return this.session.endOtherSessions();
  }

  // ---- Other users' keys (trust/) ------------------------------------------------------------------

  userKeys(userId: string): Promise<ServedBundle> {
    return this.trust.userKeys(lc(userId));
  }
  fingerprint(userId: string): Promise<{ current: string; pinned?: string; email: string; trust?: TrustLevel }> {
    return this.trust.fingerprint(lc(userId));
  }
  /** This account's own key fingerprint, grouped: what others compare theirs with. */
  async ownFingerprint(): Promise<string> {
    return groupedFingerprint(await keyFingerprint(this.core.account));
  }
  trustUser(userId: string, fingerprint: string, email: string): Promise<void> {
    return this.trust.trustUser(lc(userId), fingerprint, email);
  }
  orgMembers(): Promise<CheckedMember[]> {
    return this.trust.orgMembers();
  }
  findUser(emailOrId: string): Promise<{ userId: string; email: string; role: OrgRole; trust?: TrustLevel; stated: boolean }> {
    return this.trust.findUser(emailOrId);
  }
  findMember(emailOrId: string): Promise<CheckedMember> {
    return this.trust.findMember(emailOrId);
  }

  // ---- Vaults (vaults.ts) ----------------------------------------------------------------------------

  listVaults(): Promise<Vault[]> {
    return this.vaults.listVaults();
  }
  listCheckedVaults(): Promise<CheckedVault[]> {
    return this.vaults.listCheckedVaults();
  }
  getVault(vaultId: string): Promise<Vault> {
    return this.vaults.getVault(lc(vaultId));
  }
  getCheckedVault(vaultId: string): Promise<CheckedVault> {
    return this.vaults.getCheckedVault(lc(vaultId));
  }
  createVault(name: string, type: "personal" | "shared" = "shared"): Promise<Vault> {
    return this.vaults.createVault(name, type);
  }
  renameVault(vaultId: string, name: string): Promise<Vault> {
    return this.vaults.renameVault(lc(vaultId), name);
  }
  deleteVault(vaultId: string): Promise<void> {
    return this.vaults.deleteVault(lc(vaultId));
  }
  openVault(vault: Vault): Promise<Bytes> {
    return this.vaults.openVault(vault);
  }

  // ---- Members and the signed roster (members.ts, roster.ts) ---------------------------------------

  members(vaultId: string): Promise<MemberEntry[]> {
    return this.memberOps.members(lc(vaultId));
  }
  verifiedMembers(vaultId: string): Promise<{ members: MemberEntry[]; roster: VerifiedRoster | null }> {
    return this.memberOps.verifiedMembers(lc(vaultId));
  }
  share(vaultId: string, userId: string, role: GrantableRole = "member"): Promise<void> {
    return this.memberOps.share(lc(vaultId), lc(userId), role);
  }
  removeMember(vaultId: string, userId: string): Promise<{ rekeyRequired: boolean; remainingMembers: MemberEntry[] }> {
    return this.memberOps.removeMember(lc(vaultId), lc(userId));
  }
  changeRole(vaultId: string, userId: string, role: VaultRole): Promise<MemberEntry> {
    return this.memberOps.changeRole(lc(vaultId), lc(userId), role);
  }
  verifiedRoster(vaultId: string): Promise<VerifiedRoster | null> {
    return this.rosters.verifiedRoster(lc(vaultId));
  }
  adoptRoster(vaultId: string, confirmed: AdoptConfirmation, opts: RekeyOptions = {}): Promise<VerifiedRoster> {
    const members = confirmed.members.map((m) => ({ ...m, userId: lc(m.userId) }));
    return this.rekeys.adoptRoster(lc(vaultId), { ...confirmed, members }, opts);
  }
  /**
   * The vault's state fingerprint (its verified roster head and item-log head): two members who
   * read the same one to each other see one history. Null for a vault without a roster.
   */
  async vaultFingerprint(vaultId: string): Promise<string | null> {
    const roster = await this.rosters.verifiedRoster(lc(vaultId));
    if (!roster) return null;
    const log = await this.items.logs.follow(lc(vaultId), roster);
    return vaultStateFingerprint(
      lc(vaultId),
      { seq: roster.state.seq, head: roster.state.head },
      log && { seq: log.head.seq, head: log.head.head },
    );
  }

  /** The member-level check (roster, every wrap), the item list against the signed item log, and the vault's state fingerprint. */
  async verifyVault(vaultId: string): Promise<VaultVerification> {
    const report = await this.memberOps.verifyVault(lc(vaultId));
    let items: VaultVerification["items"] = null;
    if (report.roster) {
      try {
        items = await this.items.checkedHead(lc(vaultId));
      } catch (err) {
        report.problems.push(`signed item log: ${(err as Error).message}`);
        report.ok = false;
      }
    }
    const fingerprint =
      report.roster &&
      (await vaultStateFingerprint(
        lc(vaultId),
        { seq: report.roster.seq, head: report.roster.head },
        items && { seq: items.seq, head: items.head },
      ));
    return { ...report, items, fingerprint };
  }

  // ---- Rekey (rekey.ts) ----------------------------------------------------------------------------

  rekey(vaultId: string, opts: RekeyOptions = {}): Promise<RekeyResult> {
    return this.rekeys.rekey(lc(vaultId), opts);
  }

  // ---- Items (items.ts) ----------------------------------------------------------------------------

  listItems(vaultId: string): Promise<Item[]> {
    return this.items.listItems(lc(vaultId));
  }
  getItem(vaultId: string, itemId: string): Promise<Item> {
    return this.items.getItem(lc(vaultId), lc(itemId));
  }
  addItem(vaultId: string, content: ItemContent): Promise<Item> {
    return this.items.addItem(lc(vaultId), content);
  }
  editItem(vaultId: string, itemId: string, content: ItemContent, opts: { revision?: number } = {}): Promise<Item> {
    return this.items.editItem(lc(vaultId), lc(itemId), content, opts);
  }
  /** Moves an item to the vault's trash (history.ts: `trash`, `restoreItem`, `purgeItem`). */
  deleteItem(vaultId: string, itemId: string): Promise<void> {
    return this.items.deleteItem(lc(vaultId), lc(itemId));
  }
  /** An item's kept revisions, newest first, opened and checked against the signed item log. */
  itemHistory(vaultId: string, itemId: string): Promise<ItemRevision[]> {
    return this.history.itemHistory(lc(vaultId), lc(itemId));
  }
  /** Makes a kept revision the item's content again (a new revision). */
  restoreRevision(vaultId: string, itemId: string, revision: number, seen?: ItemContent): Promise<Item> {
    return this.history.restoreRevision(lc(vaultId), lc(itemId), revision, seen);
  }
  trash(vaultId: string): Promise<TrashedItem[]> {
    return this.history.trash(lc(vaultId));
  }
  /** Out of the trash; `unverified: true` once the person confirmed an entry the signed history cannot vouch for (TRASH_UNVERIFIED). */
  restoreItem(vaultId: string, itemId: string, opts: { unverified?: boolean } = {}): Promise<Item> {
    return this.history.restoreItem(lc(vaultId), lc(itemId), opts);
  }
  purgeItem(vaultId: string, itemId: string): Promise<void> {
    return this.history.purgeItem(lc(vaultId), lc(itemId));
  }

  /** After a removal: which secrets `userId` could have read and which were changed since (exposure.ts; the rules: sdk/exposure.ts). */
  exposureReport(vaultId: string, userId: string): Promise<ExposureReport> {
    return this.exposures.report(lc(vaultId), lc(userId));
  }

  // ---- Import and export (transfer.ts; the formats: sdk/transfer/) ------------------------------

  /** Seals the items here and adds them in one bulk request per 5,000 (each all or none). */
  importItems(vaultId: string, contents: readonly ItemContent[], onProgress?: (p: TransferProgress) => void): Promise<ImportResult> {
    return this.transfers.importItems(lc(vaultId), contents, onProgress);
  }
  /** The vaults' items as a file's text (`encrypted` needs a passphrase); each vault's export is an audit record. */
  exportVaults(vaultIds: readonly string[], format: ExportFormat, passphrase?: string): Promise<string> {
    return this.transfers.exportVaults(vaultIds.map(lc), format, passphrase);
  }

  // ---- Invites and the audit log (invites.ts, audit.ts) ------------------------------------------

  createInvite(email: string, role: GrantableRole = "member", expiresIn?: string): Promise<CreatedInvite> {
    return this.invites.createInvite(email, role, expiresIn);
  }
  inviteLink(code: string): string {
    return this.invites.inviteLink(code);
  }
  listInvites(orgId?: string): Promise<Invite[]> {
    return this.invites.listInvites(orgId);
  }
  revokeInvite(inviteId: string): Promise<void> {
    return this.invites.revokeInvite(inviteId);
  }
  redeemInvite(linkOrCode: string): Promise<CheckedInvite> {
    return this.invites.redeemInvite(linkOrCode);
  }
  auditLog(opts: { orgId?: string; limit?: number; before?: number } = {}): Promise<{ events: AuditRecord[]; nextBefore: number | null }> {
    return this.audit.auditLog(opts);
  }
  /** The organization's audit log checked here (sdk/client/audit.ts); throws a named SecurityError where it does not hold. */
  verifyAuditLog(orgId?: string, opts: { full?: boolean } = {}): Promise<CheckedAuditLog> {
    return this.audit.verifyAuditLog(orgId, opts);
  }
  /** The server's own verdict on its chain: its word only. */
  serverAuditVerdict(orgId?: string): Promise<{ ok: boolean; count: number; head?: string; brokenAt?: number }> {
    return this.audit.serverAuditVerdict(orgId);
  }
  /** The whole log with a signed checkpoint and the audit key, checked here first: `vaultctl audit verify FILE` checks it anywhere. */
  exportAuditLog(orgId?: string): Promise<AuditExport> {
    return this.audit.exportAuditLog(orgId);
  }
}
