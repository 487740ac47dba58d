/**
 * The store port: the domain-level operations the services need, and nothing of a driver.
 * Every adapter (SQL on SQLite or PostgreSQL, MongoDB) implements it and passes the same
 * contract suite (test/store.contract.ts).
 *
 * Operations that change a vault run in one transaction that locks the vault, read a snapshot,
 * let the domain decide (lib/domain/vault-decisions.ts) and write, so concurrent callers are safe.
 * They throw AppError for every refusal.
 */
import type { AuditHead, AuditRecord } from "../domain/audit";
import type { DomainEvent } from "../domain/events";
import type { Invite } from "../domain/invites";
import type { RosterEntry, RosterLink } from "../domain/roster";
import type { GrantableRole, Kdf, OrgRole, VaultRole, VaultType } from "../domain/types";

export interface UserRecord {
  userId: string;
  orgId: string;
  email: string;
  role: OrgRole;
  authHash: string;
  kdf: Kdf;
  publicKey: string;
  signingPublicKey: string;
  publicKeySignature: string;
  encryptedPrivateKey: string;
  encryptedSigningPrivateKey: string;
  createdAt: string;
}

/** A new user, before it has an organization and a role. */
export type NewUser = Omit<UserRecord, "orgId" | "role">;

export interface OrgRecord {
  orgId: string;
  name: string;
  createdAt: string;
}

/** A vault as one member sees it. */
export interface VaultView {
  vaultId: string;
  vaultName: string;
  vaultType: VaultType;
  orgId: string;
  encryptedVaultKey: string;
  senderId: string;
  wrapSignature: string;
  role: VaultRole;
  keyVersion: number;
  rekeyRequired: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface MemberEntry {
  userId: string;
  vaultId: string;
  vaultName: string;
  vaultType: VaultType;
  encryptedVaultKey: string;
  senderId: string;
  wrapSignature: string;
  role: VaultRole;
}

export interface ItemRecord {
  itemId: string;
  vaultId: string;
  encryptedData: string;
  encryptedName: string;
  revision: number;
  /** The vault key version the item was last written under. */
  keyVersion: number;
  createdAt: string;
  updatedAt: string;
}

export interface WrappedKey {
  encryptedVaultKey: string;
  wrapSignature: string;
}

export interface NewVault extends WrappedKey {
  vaultId: string;
  orgId: string;
  name: string;
  type: VaultType;
  ownerId: string;
  /** The checked `create` link of a signed vault (its vaultId is the vault's), stored with it. */
  roster?: RosterEntry;
}

export interface NewMember extends WrappedKey {
  userId: string;
  role: GrantableRole;
  keyVersion?: number;
  /** Required on a signed vault, refused on another (lib/domain/roster.ts). */
  rosterLink?: RosterLink;
}

export interface RekeyInput {
  newKeys: Array<WrappedKey & { userId: string }>;
  /** `revision`, when given, is the one the client read and re-encrypted (checked: 409 if it changed since). */
  items: Array<{ itemId: string; encryptedData: string; encryptedName: string; revision?: number }>;
  keyVersion?: number;
  /** Required on a signed vault, refused on another. */
  rosterLink?: RosterLink;
}

export interface ItemWrite {
  encryptedData: string;
  encryptedName: string;
  /** The key version the client encrypted under; refused with 409 when it is not the current one. */
  keyVersion?: number;
}

export interface RefreshTokenRecord {
  tokenHash: string;
  familyId: string;
  userId: string;
  expiresAt: string;
  createdAt: string;
}

export type RefreshOutcome =
  | { ok: true; userId: string }
  | { ok: false; reason: "unknown" | "expired" | "reused" };

/** What a revoke did: pending became revoked, it was already used or revoked, or there is no such invite. */
export type RevokeOutcome = "revoked" | "not-pending" | "not-found";

export interface AppendOutcome {
  appended: number;
  alreadyRecorded: number;
}

/** A connection pool: open connections, the idle ones, and requests waiting for one. */
export interface PoolUsage {
  total: number;
  idle: number;
  waiting: number;
}

/** What a sweep removed. */
export interface PurgeCounts {
  invites: number;
  refreshTokens: number;
}

export interface Store {
  close(): Promise<void>;
  /** Resolves once the database answers a trivial query; rejects when it cannot be reached (readiness). */
  ping(): Promise<void>;
  /** The connection pool's figures, for a store with a pool (PostgreSQL); else undefined. */
  poolUsage(): PoolUsage | undefined;
  /**
   * The embedded store only: a consistent copy of the whole database written to `file` (which must
   * not exist), while the service goes on serving. Server databases have their own tools
   * (pg_dump, mongodump): they refuse.
   */
  backupTo(file: string): Promise<void>;

  // --- users and organizations
  /** A new organization with the user as its owner. With `onlyIfFirstUser`, 403 unless the server has no user yet. */
  registerOwnerOfNewOrg(user: NewUser, org: OrgRecord, opts: { onlyIfFirstUser: boolean }): Promise<UserRecord>;
  /** Creates the user in the invite's organization and marks the invite used, in one step: exactly one caller wins. */
  registerWithInvite(user: NewUser, inviteId: string, now: string): Promise<UserRecord>;
  /** Whether the server has any user yet (registration without an invite is for the first one). */
  hasUsers(): Promise<boolean>;
  findUserByEmail(email: string): Promise<UserRecord | null>;
  findUserById(userId: string): Promise<UserRecord | null>;
  getOrg(orgId: string): Promise<OrgRecord | null>;
  listOrgMembers(orgId: string): Promise<UserRecord[]>;

  // --- refresh tokens (stored hashed; rotate on use; reuse revokes the family)
  saveRefreshToken(token: RefreshTokenRecord): Promise<void>;
  /** The next token joins the old one's user and family. */
  rotateRefreshToken(oldHash: string, next: Pick<RefreshTokenRecord, "tokenHash" | "expiresAt" | "createdAt">, now: string): Promise<RefreshOutcome>;
  revokeRefreshFamily(tokenHash: string, userId: string): Promise<void>;

  // --- vaults (null / NOT_FOUND where the caller is not a member)
  listVaults(userId: string): Promise<VaultView[]>;
  getVault(vaultId: string, userId: string): Promise<VaultView | null>;
  createVault(vault: NewVault, now: string): Promise<VaultView>;
  renameVault(vaultId: string, actorId: string, name: string, now: string): Promise<VaultView>;
  deleteVault(vaultId: string, actorId: string): Promise<void>;

  // --- members
  listMembers(vaultId: string, actorId: string): Promise<MemberEntry[] | null>;
  addMember(vaultId: string, actorId: string, member: NewMember, now: string): Promise<void>;
  changeMemberRole(vaultId: string, actorId: string, targetId: string, role: VaultRole, now: string, rosterLink?: RosterLink): Promise<MemberEntry>;
  removeMember(
    vaultId: string, actorId: string, targetId: string, now: string, rosterLink?: RosterLink,
  ): Promise<{ rekeyRequired: boolean; remainingMembers: MemberEntry[] }>;

  // --- signed roster (sdk/roster.ts): every link is stored in the transaction of the change it describes
  /** Makes a vault without a roster a signed one, with an owner's `adopt` link. */
  adoptRoster(vaultId: string, actorId: string, link: RosterLink, now: string): Promise<void>;
  /** The vault's chain in seq order (empty without a roster); null when the caller is not a member. */
  getRoster(vaultId: string, actorId: string): Promise<RosterLink[] | null>;

  // --- rekey: every wrap and item replaced, or nothing
  rekeyVault(vaultId: string, actorId: string, input: RekeyInput, now: string): Promise<void>;

  // --- items
  listItems(vaultId: string, actorId: string): Promise<ItemRecord[] | null>;
  getItem(vaultId: string, actorId: string, itemId: string): Promise<ItemRecord>;
  createItem(vaultId: string, actorId: string, itemId: string, write: ItemWrite, now: string): Promise<ItemRecord>;
  updateItem(vaultId: string, actorId: string, itemId: string, write: ItemWrite & { revision?: number }, now: string): Promise<ItemRecord>;
  deleteItem(vaultId: string, actorId: string, itemId: string): Promise<void>;

  // --- invites
  /** 409 when a user with the email already exists. */
  createInvite(invite: Invite, tokenHash: string): Promise<void>;
  /** Pending, unexpired invites of an organization, newest first. */
  listPendingInvites(orgId: string, now: string): Promise<Invite[]>;
  findInviteByTokenHash(tokenHash: string): Promise<Invite | null>;
  getInvite(inviteId: string): Promise<Invite | null>;
  /** Pending becomes revoked; `not-found` when there is no such invite in the organization. */
  revokeInvite(inviteId: string, orgId: string, now: string): Promise<RevokeOutcome>;

  // --- audit log (lib/domain/audit.ts): append-only, one hash chain per organization
  /**
   * Appends each event whose id is not recorded yet to its organization's chain, in one
   * transaction that holds the organization's head. Safe to call again with the same events and
   * from several workers at once: `appended` were new, `alreadyRecorded` were not.
   */
  appendAuditEvents(events: DomainEvent[]): Promise<AppendOutcome>;
  /** An organization's records, newest first, those with seq < `before` when it is given. */
  listAuditRecords(orgId: string, limit: number, before?: number): Promise<AuditRecord[]>;
  /** Records in seq order with afterSeq < seq <= upToSeq, at most `limit` (verification reads pages). */
  readAuditChain(orgId: string, afterSeq: number, upToSeq: number, limit: number): Promise<AuditRecord[]>;
  /** The organization's last seq and hash (EMPTY_HEAD before its first record). */
  auditHead(orgId: string): Promise<AuditHead>;

  // --- housekeeping (the sweeper)
  /**
   * Deletes invites that were never used (pending or revoked) and expired before
   * `invitesExpiredBefore` (until then an expired token is still known, and answers "not
   * redeemable" rather than "not found"), and refresh tokens that are expired at `now` or revoked.
   * Used invites, active tokens and used tokens not yet expired (they detect the reuse of a
   * stolen token) stay.
   */
  purgeExpired(now: string, invitesExpiredBefore: string): Promise<PurgeCounts>;
}
