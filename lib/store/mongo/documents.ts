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
import type { FactorKind, SecondFactor } from "../../domain/second-factors";
import type { OrgPolicies } from "../../domain/org-policies";
import type { RecoveryApproval, RecoveryEnrolment, RecoveryRequest, RecoveryShare, RecoveryStatus } from "../../domain/account-recovery";
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
  itemChanges: "item_changes",
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
  secondFactors: "second_factors",
  recoveryCodes: "recovery_codes",
  orgPolicies: "org_policies",
  recoveryEnrolments: "recovery_enrolments",
  recoveryShares: "recovery_shares",
  recoveryRequests: "recovery_requests",
  recoveryApprovals: "recovery_approvals",
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
  /** The signed item log's head (protocol/formats/item-log.ts); absent for a vault without one. */
  itemLog?: { seq: number; hash: string; baseSeq: number; rosterSeq: number };
  /**
   * The vault's last item change number and that of its last reset (lib/domain/item-changes.ts).
   * Absent on a vault of an earlier release: read as a reset numbered 1 (as SQL's migration 016).
   */
  changeSeq?: number;
  resetSeq?: number;
}

/** Per item, the number of its last change (SQL: `item_changes`); an item no longer in `items` is a tombstone. */
export interface ItemChangeDoc {
  /** `itemKey(vaultId, itemId)`. */
  _id: string;
  vaultId: VaultId;
  itemId: string;
  seq: number;
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

// ---- An account's security (SQL: migration 015) ----------------------------------------

/**
 * A second factor; `_id` is its factor id. Unique on (userId, slot): `slot` is "totp" for the one
 * authenticator app an account has, the factor's id for a security key.
 */
export interface SecondFactorDoc {
  _id: string;
  userId: UserId;
  slot: string;
  kind: FactorKind;
  name: string;
  createdAt: string;
  lastUsedAt?: string;
  sealedSecret?: string;
  lastStep?: number;
  credentialId?: string;
  publicKey?: string;
  counter?: number;
  transports?: string[];
}

/** The slot a factor takes among its account's (unique per user). */
export function factorSlot(f: Pick<SecondFactor, "kind" | "factorId">): string {
  return f.kind === "totp" ? "totp" : f.factorId;
}

/** A new factor's document (unused yet, as the SQL adapter stores it: no `lastUsedAt`). */
export function secondFactorDoc(f: SecondFactor): SecondFactorDoc {
  return {
    _id: f.factorId,
    userId: f.userId,
    slot: factorSlot(f),
    kind: f.kind,
    name: f.name,
    createdAt: f.createdAt,
    ...(f.sealedSecret !== undefined && { sealedSecret: f.sealedSecret }),
    ...(f.lastStep !== undefined && { lastStep: f.lastStep }),
    ...(f.credentialId !== undefined && { credentialId: f.credentialId }),
    ...(f.publicKey !== undefined && { publicKey: f.publicKey }),
    ...(f.counter !== undefined && { counter: f.counter }),
    ...(f.transports !== undefined && { transports: [...f.transports] }),
  };
}

export function toSecondFactor(d: SecondFactorDoc): SecondFactor {
  return {
    factorId: d._id,
    userId: d.userId,
    kind: d.kind,
    name: d.name,
    createdAt: d.createdAt,
    ...(d.lastUsedAt != null && { lastUsedAt: d.lastUsedAt }),
    ...(d.sealedSecret != null && { sealedSecret: d.sealedSecret }),
    ...(d.lastStep != null && { lastStep: Number(d.lastStep) }),
    ...(d.credentialId != null && { credentialId: d.credentialId }),
    ...(d.publicKey != null && { publicKey: d.publicKey }),
    ...(d.counter != null && { counter: Number(d.counter) }),
    ...(d.transports != null && { transports: d.transports }),
  };
}

/** One recovery code of a user (hashed); `_id` is `recoveryCodeKey(userId, codeHash)`, as the SQL primary key. */
export interface RecoveryCodeDoc {
  _id: string;
  userId: UserId;
  codeHash: string;
  createdAt: string;
  /** Absent while unused. */
  usedAt?: string;
}

export function recoveryCodeKey(userId: UserId, codeHash: string): string {
  return `${userId}:${codeHash}`;
}

/** An organization's policies; `_id` is the organization id. */
export interface OrgPoliciesDoc {
  _id: OrgId;
  policies: OrgPolicies;
  updatedAt: string;
}

/**
 * Policies as stored: their JSON (as the SQL adapter stores them), so that an absent rule stays
 * absent (the driver would store an `undefined` one as null).
 */
export function storedPolicies(p: OrgPolicies): OrgPolicies {
  return JSON.parse(JSON.stringify(p)) as OrgPolicies;
}

/** A user's recovery enrolment; `_id` is the user id (one each). Unique on enrolmentId. */
export interface RecoveryEnrolmentDoc {
  _id: UserId;
  enrolmentId: string;
  orgId: OrgId;
  threshold: number;
  copy: string;
  signature: string;
  kdfSalt: string;
  createdAt: string;
}

export function recoveryEnrolmentDoc(e: RecoveryEnrolment): RecoveryEnrolmentDoc {
  return {
    _id: e.userId,
    enrolmentId: e.enrolmentId,
    orgId: e.orgId,
    threshold: e.threshold,
    copy: e.copy,
    signature: e.signature,
    kdfSalt: e.kdfSalt,
    createdAt: e.createdAt,
  };
}

export function toRecoveryEnrolment(d: RecoveryEnrolmentDoc): RecoveryEnrolment {
  return {
    enrolmentId: d.enrolmentId,
    userId: d._id,
    orgId: d.orgId,
    threshold: Number(d.threshold),
    copy: d.copy,
    signature: d.signature,
    kdfSalt: d.kdfSalt,
    createdAt: d.createdAt,
  };
}

/** A trustee's share of an enrolment; `_id` is `recoveryShareKey(enrolmentId, trusteeId)`, as the SQL primary key. */
export interface RecoveryShareDoc {
  _id: string;
  enrolmentId: string;
  trusteeId: UserId;
  encryptedShare: string;
  trusteeKeys: string;
}

export function recoveryShareKey(enrolmentId: string, trusteeId: UserId): string {
  return `${enrolmentId}:${trusteeId}`;
}

export function recoveryShareDoc(enrolmentId: string, s: RecoveryShare): RecoveryShareDoc {
  return {
    _id: recoveryShareKey(enrolmentId, s.trusteeId),
    enrolmentId,
    trusteeId: s.trusteeId,
    encryptedShare: s.encryptedShare,
    trusteeKeys: s.trusteeKeys,
  };
}

export function toRecoveryShare(d: RecoveryShareDoc): RecoveryShare {
  return { enrolmentId: d.enrolmentId, trusteeId: d.trusteeId, encryptedShare: d.encryptedShare, trusteeKeys: d.trusteeKeys };
}

/** A recovery request; `_id` is its id. */
export interface RecoveryRequestDoc {
  _id: string;
  userId: UserId;
  orgId: OrgId;
  enrolmentId: string;
  publicKey: string;
  tokenHash: string;
  status: RecoveryStatus;
  createdAt: string;
  expiresAt: string;
  endedAt?: string;
  sessionId?: string;
  openedAt?: string;
  /** Bumped by each approval (the lock: an approval and the request's end conflict, and one retries). */
  writeSeq?: number;
}

export function recoveryRequestDoc(r: RecoveryRequest): RecoveryRequestDoc {
  return {
    _id: r.requestId,
    userId: r.userId,
    orgId: r.orgId,
    enrolmentId: r.enrolmentId,
    publicKey: r.publicKey,
    tokenHash: r.tokenHash,
    status: r.status,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
  };
}

export function toRecoveryRequest(d: RecoveryRequestDoc): RecoveryRequest {
  return {
    requestId: d._id,
    userId: d.userId,
    orgId: d.orgId,
    enrolmentId: d.enrolmentId,
    publicKey: d.publicKey,
    tokenHash: d.tokenHash,
    status: d.status,
    createdAt: d.createdAt,
    expiresAt: d.expiresAt,
    ...(d.endedAt != null && { endedAt: d.endedAt }),
    ...(d.sessionId != null && { sessionId: d.sessionId }),
    ...(d.openedAt != null && { openedAt: d.openedAt }),
  };
}

/** A trustee's approval of a request; `_id` is `recoveryApprovalKey(requestId, trusteeId)`, as the SQL primary key. */
export interface RecoveryApprovalDoc {
  _id: string;
  requestId: string;
  trusteeId: UserId;
  encryptedShare: string;
  signature: string;
  approvedAt: string;
}

export function recoveryApprovalKey(requestId: string, trusteeId: UserId): string {
  return `${requestId}:${trusteeId}`;
}

export function recoveryApprovalDoc(a: RecoveryApproval): RecoveryApprovalDoc {
  return {
    _id: recoveryApprovalKey(a.requestId, a.trusteeId),
    requestId: a.requestId,
    trusteeId: a.trusteeId,
    encryptedShare: a.encryptedShare,
    signature: a.signature,
    approvedAt: a.approvedAt,
  };
}

export function toRecoveryApproval(d: RecoveryApprovalDoc): RecoveryApproval {
  return {
    requestId: d.requestId,
    trusteeId: d.trusteeId,
    encryptedShare: d.encryptedShare,
    signature: d.signature,
    approvedAt: d.approvedAt,
  };
}
