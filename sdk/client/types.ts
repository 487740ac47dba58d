/** What the client's calls take and answer: the server's shapes (contract sections 2 to 8) and the client's own reports. */
import type { SealedItem, ItemContent } from "../items";
import type { ItemType } from "../item-types";
import type { StoredAccountKeys } from "../../protocol/crypto/keys";
import type { KdfParams } from "../../protocol/crypto/primitives";
import type { RosterLink, RosterState } from "../../protocol/formats/roster";
import type { GrantableRole, VaultRole } from "../../protocol/vault-roles";

export type { VaultRole } from "../../protocol/vault-roles";
export type { OrgRole } from "../../protocol/org-roles";
import type { OrgRole } from "../../protocol/org-roles";
import type { PublicKeyBundle } from "../../protocol/crypto/keys";
import type { SignedStatement } from "../../protocol/formats/statements";
import type { SecurityError } from "../errors";
import type { PinSource } from "../pins";

/** A vault as the server shows it to the caller (contract section 3). */
export interface Vault {
  vaultId: string;
  vaultName: string;
  vaultType: "personal" | "shared";
  encryptedVaultKey: string;
  senderId: string;
  wrapSignature: string;
  role: VaultRole;
  orgId: string;
  keyVersion: number;
  rekeyRequired: boolean;
  createdAt: string;
  updatedAt: string;
}

/** One member's wrap of the vault key, as the member list and the remove-member answer show it. */
export interface MemberEntry extends Pick<
  Vault,
  "vaultId" | "vaultName" | "vaultType" | "encryptedVaultKey" | "senderId" | "wrapSignature" | "role"
> {
  userId: string;
}

export interface StoredItem extends SealedItem {
  vaultId: string;
  revision: number;
  keyVersion?: number;
  createdAt: string;
  updatedAt: string;
}

/** An item opened: its content beside the server's bookkeeping. */
export interface Item extends ItemContent {
  type: ItemType;
  itemId: string;
  vaultId: string;
  revision: number;
  createdAt: string;
  updatedAt: string;
}

export interface Invite {
  id: string;
  email: string;
  role: GrantableRole;
  inviterId: string;
  expiresAt: string;
  createdAt: string;
}

export type { AuditRecord } from "../../protocol/formats/audit";

/** One of the account's sessions (logins), as the server recorded it. */
export interface SessionInfo {
  sessionId: string;
  /** The name the client gave at login (`VaultClientOptions.deviceName`), or "unnamed device". */
  deviceName: string;
  createdAt: string;
  lastUsedAt: string;
  /** The client's address at its last use. */
  address: string;
  expiresAt: string;
  /** The session this client is in. */
  current: boolean;
}

/** Who is logged in, and their keys as the server keeps them (public, or sealed under the stretched key). */
export interface Account extends StoredAccountKeys {
  userId: string;
  orgId: string;
  role: OrgRole;
  email: string;
  kdf: KdfParams;
  /**
   * The account's key version this client's stretched key belongs to (1, then one more at each
   * master password change); sent with every personal-vault wrap. Absent in a login saved by an
   * earlier release: those wraps are then sent without it.
   */
  accountVersion?: number;
  /**
   * The account state this session's keys belong to, as the login (or this session's own change)
   * verified it: the signed KDF statement version its stretched key comes from and its key-log
   * version. Every personal wrap it makes is labelled with them. Absent in a login saved by an
   * earlier release: then worked out once (`WrapLabels`).
   */
  kdfVersion?: number;
  keyLogVersion?: number;
}

export interface RekeyProgress {
  phase: "items" | "wraps" | "upload";
  done: number;
  total: number;
}

export interface RekeyResult {
  keyVersion: number;
  items: number;
  members: number;
  attempts: number;
  /** Kept revisions and trashed items re-encrypted with the items (a server of an earlier release keeps none: 0). */
  history: number;
  trash: number;
}

/** A revision an update replaced, opened here. */
export interface ItemRevision extends ItemContent {
  type: ItemType;
  itemId: string;
  vaultId: string;
  revision: number;
  /** When it was written and replaced: the server's word. */
  createdAt: string;
  replacedAt: string;
  /** Whether a signed item-log link this client verified names this revision's ciphertext (else: older than what it verified, or a vault without a log). */
  verified: boolean;
  /** Who wrote it, where such a link says so. */
  signedBy?: string;
}

/** An item in the vault's trash, opened here. */
export interface TrashedItem extends Item {
  deletedAt: string;
  /** Who deleted it: the signer of the `delete` link this client verified, else the server's word. */
  deletedBy: string;
  /** Whether that delete link vouches for this copy (false: deleted before the last checkpoint or rekey this client follows from). */
  verified: boolean;
}

export interface WrapCheck {
  userId: string;
  email?: string;
  role: VaultRole;
  senderId: string;
  ok: boolean;
  problems: string[];
}

export interface VaultVerification {
  vaultId: string;
  vaultName: string;
  vaultType: "personal" | "shared";
  keyVersion: number;
  ok: boolean;
  /** Problems with the vault as a whole (member set, the caller's own key). */
  problems: string[];
  /** Not failures, but worth knowing (a pending rekey). */
  warnings: string[];
  members: WrapCheck[];
  /** The verified head of the vault's signed roster; null for a vault without one. */
  roster: { seq: number; head: string } | null;
  /** The verified head of the vault's signed item log, with the items it holds (checked against the list); null without one. */
  items: { seq: number; head: string; count: number } | null;
  /** `vaultStateFingerprint` of the two heads, to compare with another member out of band; null for a vault without a roster. */
  fingerprint: string | null;
}

/** A vault's roster as this client verified it: the replayed state and the links it came from. */
export interface VerifiedRoster {
  state: RosterState;
  links: RosterLink[];
}

/** A user's public keys as the server hands them out, with what vouches for them. */
export interface ServedBundle extends PublicKeyBundle {
  email: string;
  keyStatement?: SignedStatement;
  inviteBinding?: { inviteId: string; mac: string };
}

/** `removedAt`: taken out of the organization (their keys stay, for the rosters they signed; nothing is shared with them). */
export type OrgMember = ServedBundle & { role: OrgRole; createdAt: string; removedAt?: string };

/** How far this device trusts a user's keys, after `checkBundle`. */
export type TrustLevel = PinSource;

/** A member of the organization with their keys checked; `problem` when the server's pairing does not hold. */
export interface CheckedMember extends OrgMember {
  trust?: TrustLevel;
  /** The user signed their id, email and keys (a key statement); false for an account not upgraded since statements came. */
  stated: boolean;
  problem?: SecurityError;
}
