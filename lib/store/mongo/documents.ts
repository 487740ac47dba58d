/**
 * The MongoDB adapter's documents: one interface per collection (the counterpart of
 * `sql/schema.ts`) and the mappings between documents and the port's records (the counterpart
 * of the `to*` functions in the `sql/` aggregate files). Pure: unit-tested without a server.
 */
import type { ItemLogHead } from "../../domain/item-log";
import type { InviteId, ItemId, OrgId, UserId, VaultId } from "../../domain/ids";
import { auditRecord, type AuditRecord } from "../../domain/audit";
import { EVENT_SUBJECTS, type DomainEventType, type EventSubject } from "../../domain/events";
import type { Invite, InviteStatus } from "../../domain/invites";
import type { GrantableRole, InviteBinding, Kdf, OrgRole, SignedStatement, VaultRole, VaultType } from "../../domain/types";
import type {
  ItemRecord,
  ItemRevisionRecord,
  MemberEntry,
  NewUser,
  OrgRecord,
  SessionRecord,
  TrashedItemRecord,
  UserRecord,
  VaultView,
} from "../port";

/** Collection names, mirroring the SQL tables. */
export const COLLECTIONS = {
  orgs: "orgs",
  users: "users",
  vaults: "vaults",
  members: "vault_members",
  items: "items",
  itemRevisions: "item_revisions",
  itemTrash: "item_trash",
  invites: "invites",
  refreshTokens: "refresh_tokens",
  sessions: "sessions",
  keyLog: "key_log",
  locks: "locks",
  auditEvents: "audit_events",
  auditHeads: "audit_heads",
  rosterLinks: "roster_links",
  itemLinks: "item_links",
  serverKeys: "server_keys",
  outbox: "outbox",
} as const;

export interface OrgDoc {
  _id: OrgId;
  name: string;
  createdAt: string;
  /** Bumped by each removal of a person, so that two removals in one organization conflict and one retries. */
  writeSeq?: number;
}

export interface UserDoc {
  _id: UserId;
  orgId: OrgId;
  /** Unique. */
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
  keyStatement?: SignedStatement;
  kdfStatement?: SignedStatement;
  inviteBinding?: InviteBinding;
  /** Absent until the first master password change (then 2, 3, ...). */
  accountVersion?: number;
  /** Bumped by every transaction that must not overlap a password change (a login, a personal wrap): its write conflicts with it. */
  writeSeq?: number;
  /** When they were taken out of their organization; absent while in it. */
  removedAt?: string;
}

export interface VaultDoc {
  _id: VaultId;
  orgId: OrgId;
  name: string;
  type: VaultType;
  keyVersion: number;
  rekeyRequired: boolean;
  createdAt: string;
  updatedAt: string;
  /**
   * Bumped by every transaction that changes the vault, its members or its items. Two such
   * transactions write the same document, so MongoDB lets one commit and makes the other retry
   * on the new state: the counterpart of the SQL adapter's lock on the vault row.
   */
  writeSeq?: number;
  /** The signed roster's head; absent for a vault without one. */
  roster?: { seq: number; hash: string };
  /** The signed item log's head (sdk/item-log.ts); absent for a vault without one. */
  itemLog?: { seq: number; hash: string; baseSeq: number; rosterSeq: number };
}

/** One link of a vault's signed item log (unique on vaultId + seq). */
export interface ItemLinkDoc {
  /** `rosterLinkKey(vaultId, seq)`, the same form. */
  _id: string;
  vaultId: VaultId;
  seq: number;
  /** The link's canonical JSON, signature included. */
  link: string;
  createdAt: string;
}

/** A vault document's item-log head, as the domain reads it. */
export function itemLogHeadOf(vault: VaultDoc): ItemLogHead | null {
  return vault.itemLog ? { vaultId: vault._id, keyVersion: vault.keyVersion, head: vault.itemLog.hash, ...vault.itemLog } : null;
}

/** One link of a vault's signed roster (unique on vaultId + seq, as the SQL primary key). */
export interface RosterLinkDoc {
  /** `rosterLinkKey(vaultId, seq)`. */
  _id: string;
  vaultId: VaultId;
  seq: number;
  hash: string;
  /** The link's canonical JSON, signature included (stored as text: re-serializing a document could reorder it). */
  link: string;
  createdAt: string;
}

export function rosterLinkKey(vaultId: VaultId, seq: number): string {
  return `${vaultId}:${seq}`;
}

/** One per member and vault (unique on vaultId + userId). */
export interface MemberDoc {
  vaultId: VaultId;
  userId: UserId;
  role: VaultRole;
  encryptedVaultKey: string;
  senderId: UserId;
  wrapSignature: string;
  createdAt: string;
  updatedAt: string;
}

export interface ItemDoc {
  /** `itemKey(vaultId, itemId)`: item ids are unique per vault, as in SQL. */
  _id: string;
  itemId: ItemId;
  vaultId: VaultId;
  encryptedData: string;
  encryptedName: string;
  revision: number;
  keyVersion: number;
  createdAt: string;
  updatedAt: string;
}

/** A revision an update replaced (lib/domain/item-history.ts): the item's ciphertexts as they were. */
export interface ItemRevisionDoc {
  /** `itemRevisionKey(vaultId, itemId, revision)`: one per item and revision, as the SQL primary key. */
  _id: string;
  vaultId: VaultId;
  itemId: ItemId;
  revision: number;
  encryptedData: string;
  encryptedName: string;
  keyVersion: number;
  /** When this revision was written (the item's updatedAt then), and when an update replaced it. */
  createdAt: string;
  replacedAt: string;
}

/** An item deleted into its vault's trash, as it was; `_id` is its `itemKey`, as in `items`. */
export interface TrashedItemDoc extends ItemDoc {
  deletedAt: string;
  deletedBy: UserId;
}

export interface InviteDoc {
  _id: InviteId;
  orgId: OrgId;
  email: string;
  role: GrantableRole;
  inviterId: UserId;
  /** Unique; the raw token is never stored. */
  tokenHash: string;
  status: InviteStatus;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
  statement?: SignedStatement;
}

export interface RefreshTokenDoc {
  /** The token's hash. */
  _id: string;
  familyId: string;
  userId: UserId;
  status: "active" | "used" | "revoked";
  expiresAt: string;
  createdAt: string;
}

/** A session (lib/domain/sessions.ts): `_id` is its refresh-token family's id. */
export interface SessionDoc {
  _id: string;
  userId: UserId;
  deviceName: string;
  createdAt: string;
  lastUsedAt: string;
  address: string;
  expiresAt: string;
  endedAt?: string;
}

/** One entry of a user's key log (lib/domain/key-rotation.ts), unique on userId + version (as the SQL primary key). */
export interface KeyLogDoc {
  /** `keyLogKey(userId, version)`. */
  _id: string;
  userId: UserId;
  version: number;
  /** SHA-256 (hex) of the entry's canonical bytes: the next entry's `prev`. */
  hash: string;
  /** The entry as JSON (stored as text, as a roster link is: re-serializing a document could reorder it). */
  entry: string;
  createdAt: string;
}

export function keyLogKey(userId: UserId, version: number): string {
  return `${userId}:${version}`;
}

export function toSession(d: SessionDoc): SessionRecord {
  const { _id, ...rest } = d;
  return { sessionId: _id, ...rest };
}

/** A document whose only job is to be written by transactions that must not overlap. */
export interface LockDoc {
  _id: string;
  seq: number;
}

export function toUser(d: UserDoc): UserRecord {
  return {
    userId: d._id,
    orgId: d.orgId,
    email: d.email,
    role: d.role,
    authHash: d.authHash,
    kdf: d.kdf,
    publicKey: d.publicKey,
    signingPublicKey: d.signingPublicKey,
    publicKeySignature: d.publicKeySignature,
    encryptedPrivateKey: d.encryptedPrivateKey,
    encryptedSigningPrivateKey: d.encryptedSigningPrivateKey,
    createdAt: d.createdAt,
    // Absent on documents from before password changes: version 1.
    accountVersion: d.accountVersion ?? 1,
    ...(d.removedAt !== undefined && { removedAt: d.removedAt }),
    ...(d.keyStatement ? { keyStatement: d.keyStatement } : {}),
    ...(d.kdfStatement ? { kdfStatement: d.kdfStatement } : {}),
    ...(d.inviteBinding ? { inviteBinding: d.inviteBinding } : {}),
  };
}

export function userDoc(user: NewUser, orgId: OrgId, role: OrgRole): UserDoc {
  return {
    _id: user.userId,
    orgId,
    email: user.email,
    role,
    authHash: user.authHash,
    kdf: user.kdf,
    publicKey: user.publicKey,
    signingPublicKey: user.signingPublicKey,
    publicKeySignature: user.publicKeySignature,
    encryptedPrivateKey: user.encryptedPrivateKey,
    encryptedSigningPrivateKey: user.encryptedSigningPrivateKey,
    createdAt: user.createdAt,
    ...(user.keyStatement ? { keyStatement: user.keyStatement } : {}),
    ...(user.kdfStatement ? { kdfStatement: user.kdfStatement } : {}),
    ...(user.inviteBinding ? { inviteBinding: user.inviteBinding } : {}),
  };
}

export function toOrg(d: OrgDoc): OrgRecord {
  return { orgId: d._id, name: d.name, createdAt: d.createdAt };
}

export function toVaultView(v: VaultDoc, m: MemberDoc): VaultView {
  return {
    vaultId: v._id,
    vaultName: v.name,
    vaultType: v.type,
    orgId: v.orgId,
    encryptedVaultKey: m.encryptedVaultKey,
    senderId: m.senderId,
    wrapSignature: m.wrapSignature,
    role: m.role,
    keyVersion: v.keyVersion,
    rekeyRequired: v.rekeyRequired,
    createdAt: v.createdAt,
    updatedAt: v.updatedAt,
  };
}

export function toMemberEntry(v: VaultDoc, m: MemberDoc): MemberEntry {
  return {
    userId: m.userId,
    vaultId: v._id,
    vaultName: v.name,
    vaultType: v.type,
    encryptedVaultKey: m.encryptedVaultKey,
    senderId: m.senderId,
    wrapSignature: m.wrapSignature,
    role: m.role,
  };
}

/** An item's document id: its vault and its id (a client's id may be used in another vault too). */
export function itemKey(vaultId: VaultId, itemId: ItemId): string {
  return `${vaultId}:${itemId}`;
}

export function toItem(d: ItemDoc): ItemRecord {
  return {
    itemId: d.itemId,
    vaultId: d.vaultId,
    encryptedData: d.encryptedData,
    encryptedName: d.encryptedName,
    revision: d.revision,
    keyVersion: d.keyVersion,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

export function itemRevisionKey(vaultId: VaultId, itemId: ItemId, revision: number): string {
  return `${vaultId}/${itemId}/${revision}`;
}

export function toRevision(d: ItemRevisionDoc): ItemRevisionRecord {
  return {
    itemId: d.itemId,
    vaultId: d.vaultId,
    revision: d.revision,
    encryptedData: d.encryptedData,
    encryptedName: d.encryptedName,
    keyVersion: d.keyVersion,
    createdAt: d.createdAt,
    replacedAt: d.replacedAt,
  };
}

export function toTrashed(d: TrashedItemDoc): TrashedItemRecord {
  return { ...toItem(d), deletedAt: d.deletedAt, deletedBy: d.deletedBy };
}

export function toInvite(d: InviteDoc): Invite {
  return {
    inviteId: d._id,
    orgId: d.orgId,
    email: d.email,
    role: d.role,
    inviterId: d.inviterId,
    status: d.status,
    expiresAt: d.expiresAt,
    createdAt: d.createdAt,
    ...(d.statement ? { statement: d.statement } : {}),
  };
}

export function inviteDoc(invite: Invite, tokenHash: string): InviteDoc {
  return {
    _id: invite.inviteId,
    orgId: invite.orgId,
    email: invite.email,
    role: invite.role,
    inviterId: invite.inviterId,
    tokenHash,
    status: invite.status,
    expiresAt: invite.expiresAt,
    createdAt: invite.createdAt,
    updatedAt: invite.createdAt,
  };
}

/** Vault rows ordered as the contract lists them: by createdAt, then id. */
export function byCreatedThenId<T>(createdAt: (x: T) => string, id: (x: T) => string) {
  return (a: T, b: T) => (createdAt(a) < createdAt(b) ? -1 : createdAt(a) > createdAt(b) ? 1 : id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0);
}

/** One audit record; `_id` is the event id (recorded once). Unique on (orgId, seq). */
export interface AuditEventDoc {
  _id: string;
  orgId: OrgId;
  seq: number;
  type: DomainEventType;
  at: string;
  actorId: UserId;
  vaultId?: VaultId;
  itemId?: ItemId;
  targetUserId?: UserId;
  inviteId?: InviteId;
  prevHash: string;
  hash: string;
}

/** An organization's chain head; `_id` is the organization id. `writes` is bumped by every append (the lock). */
export interface AuditHeadDoc {
  _id: string;
  seq: number;
  hash: string;
  writes?: number;
}

export function auditDoc(r: AuditRecord): AuditEventDoc {
  const doc: AuditEventDoc = {
    _id: r.eventId,
    orgId: r.orgId,
    seq: r.seq,
    type: r.type,
    at: r.at,
    actorId: r.actorId,
    prevHash: r.prevHash,
    hash: r.hash,
  };
  for (const key of EVENT_SUBJECTS) if (r[key] !== undefined) (doc as Record<EventSubject, string>)[key] = r[key];
  return doc;
}

export function toAuditRecord(d: AuditEventDoc): AuditRecord {
  const { _id, ...rest } = d;
  return auditRecord({ ...rest, eventId: _id });
}
