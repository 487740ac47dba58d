/**
 * Every table's row type, once. Portable types only, so the same queries run on SQLite and
 * PostgreSQL: ids, timestamps (ISO 8601 UTC), base64 values and JSON as text; counters and flags
 * as integers. Id columns carry their id's type (lib/domain/ids.ts).
 */
import type { AttachmentId, InviteId, ItemId, OrgId, SendId, UserId, VaultId } from "../../domain/ids";
import type { GrantableRole, OrgRole, VaultRole, VaultType } from "../../domain/types";
import type { InviteStatus } from "../../domain/orgs/invites";
import type { DomainEventType } from "../../domain/audit/events";
import type { FactorKind } from "../../domain/accounts/second-factors";
import type { RecoveryStatus } from "../../domain/accounts/recovery";
import type { SessionEndReason } from "../../domain/accounts/sessions";
import type { EmergencyLevel } from "../../../protocol/formats/emergency";

export interface OrgsTable {
  org_id: OrgId;
  name: string;
  created_at: string;
}

export interface UsersTable {
  user_id: UserId;
  org_id: OrgId;
  email: string;
  org_role: OrgRole;
  auth_hash: string;
  kdf: string;
  public_key: string;
  signing_public_key: string;
  public_key_signature: string;
  encrypted_private_key: string;
  encrypted_signing_private_key: string;
  created_at: string;
  /** JSON `{"version", "signature"}`, or null (protocol/formats/statements.ts). */
  key_statement: string | null;
  kdf_statement: string | null;
  /** JSON `{"inviteId", "mac"}`, or null. */
  invite_binding: string | null;
  /** Bumped by each master password change (migration 010). */
  account_version: number;
  /** When they were taken out of their organization (migration 012); null while in it. */
  removed_at: string | null;
}

export interface VaultsTable {
  vault_id: VaultId;
  org_id: OrgId;
  name: string;
  type: VaultType;
  key_version: number;
  rekey_required: number;
  created_at: string;
  updated_at: string;
  /** The signed roster's head; null for a vault without one. */
  roster_seq: number | null;
  roster_hash: string | null;
  /** The signed item log's head (protocol/formats/item-log.ts); null for a vault without one. */
  item_seq: number | null;
  item_hash: string | null;
  item_base_seq: number | null;
  item_roster_seq: number | null;
  /** The vault's last item change number, and that of its last reset (lib/domain/items/changes.ts). */
  change_seq: number;
  reset_seq: number;
  /** What the vault stores, kept by triggers (migration 017): items and trash, and kept revisions. */
  firm_items?: number | string;
  firm_bytes?: number | string;
  history_items?: number | string;
  history_bytes?: number | string;
}

/** Per item, the number of its last change; an item no longer in `items` is a tombstone. */
export interface ItemChangesTable {
  vault_id: VaultId;
  item_id: string;
  seq: number;
}

export interface ServerKeysTable {
  name: string;
  value: string;
  created_at: string;
}

export interface ItemLinksTable {
  vault_id: VaultId;
  seq: number;
  /** The link's canonical JSON, signature included. */
  link: string;
  created_at: string;
}

export interface RosterLinksTable {
  vault_id: VaultId;
  seq: number;
  hash: string;
  /** The link's canonical JSON, signature included. */
  link: string;
  created_at: string;
}

export interface VaultMembersTable {
  vault_id: VaultId;
  user_id: UserId;
  role: VaultRole;
  encrypted_vault_key: string;
  sender_id: UserId;
  wrap_signature: string;
  created_at: string;
  updated_at: string;
}

export interface ItemsTable {
  item_id: ItemId;
  vault_id: VaultId;
  encrypted_data: string;
  encrypted_name: string;
  revision: number;
  key_version: number;
  created_at: string;
  updated_at: string;
}

/** A revision an update replaced (lib/domain/items/history.ts): the item's ciphertexts as they were. */
export interface ItemRevisionsTable {
  vault_id: VaultId;
  item_id: ItemId;
  revision: number;
  encrypted_data: string;
  encrypted_name: string;
  key_version: number;
  /** When this revision was written (the item's updated_at then), and when an update replaced it. */
  created_at: string;
  replaced_at: string;
}

/** An item deleted into the vault's trash, as it was. */
export interface ItemTrashTable extends ItemsTable {
  deleted_at: string;
  deleted_by: UserId;
}

export interface InvitesTable {
  invite_id: InviteId;
  org_id: OrgId;
  email: string;
  role: GrantableRole;
  inviter_id: UserId;
  token_hash: string;
  status: InviteStatus;
  expires_at: string;
  created_at: string;
  updated_at: string;
  /** The inviter's statement, JSON `{"version", "signature"}`, or null. */
  statement: string | null;
}

export interface RefreshTokensTable {
  token_hash: string;
  family_id: string;
  user_id: UserId;
  status: "active" | "used" | "revoked";
  expires_at: string;
  created_at: string;
}

export interface SessionsTable {
  session_id: string;
  user_id: UserId;
  device_name: string;
  created_at: string;
  last_used_at: string;
  address: string;
  expires_at: string;
  ended_at: string | null;
  /** 1: the session may only enrol a second factor. */
  enrol_only: number;
  ended_why: SessionEndReason | null;
}

export interface RememberedDevicesTable {
  device_id: string;
  token_hash: string;
  user_id: UserId;
  device_name: string;
  created_at: string;
  last_used_at: string;
  expires_at: string;
}

export interface PasskeyLoginsTable {
  credential_id: string;
  user_id: UserId;
  name: string;
  public_key: string;
  counter: number | string;
  /** JSON array, or null. */
  transports: string | null;
  created_at: string;
  last_used_at: string | null;
  /** The three unlock wraps, all or none. */
  prf_wrapped_key: string | null;
  wrapped_stretched_key: string | null;
  kept_wrapped_key: string | null;
}

/** A file on an item (migration 025; lib/domain/attachments/decisions.ts): what the server must know to keep its chunks. */
export interface AttachmentsTable {
  attachment_id: AttachmentId;
  vault_id: VaultId;
  item_id: ItemId;
  /** The vault's organization, whose quota the file counts against. */
  org_id: OrgId;
  /** The plaintext size its uploader declared. */
  size: number | string;
  chunk_count: number;
  /** What its chunks hold sealed: the room it takes of the quota from the upload's start. */
  sealed_bytes: number | string;
  /** 1 once every chunk arrived and the upload was finished. */
  complete: number;
  uploaded_by: UserId;
  created_at: string;
  completed_at: string | null;
}

/** One sealed chunk of an attachment: its bytes in `data`, or (the embedded store) in a file of its own, `data` null. */
export interface AttachmentChunksTable {
  attachment_id: AttachmentId;
  idx: number;
  sealed_bytes: number;
  data: Uint8Array | null;
}

/** A send (migration 026; lib/domain/sends/decisions.ts): what the server must know to keep its parts. */
export interface SendsTable {
  send_id: SendId;
  org_id: OrgId;
  owner_id: UserId;
  parts: number;
  /** Sealed bytes its parts hold, as made: the room it takes of the quota. */
  bytes: number | string;
  max_views: number | null;
  views: number;
  /** SHA-256 of the link's access proof (hex): every open carries the proof. */
  access_hash: string;
  /** A slow hash of the password's proof (lib/auth/auth-hash.ts), or null. */
  password_hash: string | null;
  owner_note: string;
  /** 1 once every part arrived and it was finished. */
  complete: number;
  created_at: string;
  expires_at: string;
  /** When its parts go (its last view was taken), else null. */
  parts_gone_at: string | null;
}

/** One sealed part of a send. */
export interface SendPartsTable {
  send_id: SendId;
  idx: number;
  sealed_bytes: number;
  data: Uint8Array;
}

/** An emergency access grant (migration 027; lib/domain/emergency/decisions.ts). */
export interface EmergencyGrantsTable {
  grant_id: string;
  org_id: OrgId;
  grantor_id: UserId;
  grantee_id: UserId;
  level: EmergencyLevel;
  wait_hours: number;
  /** `keyFingerprint` of the grantee's keys it is wrapped to, and of the grantor's when it was made. */
  grantee_keys: string;
  grant_keys: string;
  kdf_version: number;
  /** The grantor's stretched key wrapped to the grantee (opaque to the server), and the grantor's signature. */
  wrapped_key: string;
  signature: string;
  created_at: string;
  updated_at: string;
  requested_at: string | null;
  refused_at: string | null;
  session_id: string | null;
  opened_at: string | null;
}

export interface KeyLogTable {
  user_id: UserId;
  version: number;
  hash: string;
  entry: string;
  created_at: string;
}

export interface OrgLogTable {
  org_id: OrgId;
  seq: number;
  hash: string;
  link: string;
  created_at: string;
}

export interface AuditEventsTable {
  org_id: OrgId;
  seq: number;
  event_id: string;
  type: DomainEventType;
  at: string;
  actor_id: UserId;
  vault_id: VaultId | null;
  item_id: ItemId | null;
  target_user_id: UserId | null;
  invite_id: InviteId | null;
  prev_hash: string;
  hash: string;
}

export interface AuditHeadsTable {
  org_id: OrgId;
  seq: number;
  hash: string;
}

export interface Database {
  orgs: OrgsTable;
  users: UsersTable;
  vaults: VaultsTable;
  vault_members: VaultMembersTable;
  items: ItemsTable;
  item_revisions: ItemRevisionsTable;
  item_trash: ItemTrashTable;
  item_changes: ItemChangesTable;
  roster_links: RosterLinksTable;
  item_links: ItemLinksTable;
  server_keys: ServerKeysTable;
  invites: InvitesTable;
  refresh_tokens: RefreshTokensTable;
  sessions: SessionsTable;
  remembered_devices: RememberedDevicesTable;
  passkey_logins: PasskeyLoginsTable;
  attachments: AttachmentsTable;
  attachment_chunks: AttachmentChunksTable;
  sends: SendsTable;
  send_parts: SendPartsTable;
  emergency_grants: EmergencyGrantsTable;
  key_log: KeyLogTable;
  org_log: OrgLogTable;
  audit_events: AuditEventsTable;
  audit_heads: AuditHeadsTable;
  outbox: OutboxTable;
  second_factors: SecondFactorsTable;
  recovery_codes: RecoveryCodesTable;
  org_policies: OrgPoliciesTable;
  recovery_enrolments: RecoveryEnrolmentsTable;
  recovery_shares: RecoverySharesTable;
  recovery_requests: RecoveryRequestsTable;
  recovery_approvals: RecoveryApprovalsTable;
}

export interface SecondFactorsTable {
  factor_id: string;
  user_id: UserId;
  slot: string;
  kind: FactorKind;
  name: string;
  created_at: string;
  last_used_at: string | null;
  sealed_secret: string | null;
  /** bigint: PostgreSQL's driver answers it as a string. */
  last_step: number | string | null;
  credential_id: string | null;
  public_key: string | null;
  counter: number | string | null;
  /** JSON array. */
  transports: string | null;
}

export interface RecoveryCodesTable {
  user_id: UserId;
  code_hash: string;
  created_at: string;
  used_at: string | null;
}

export interface OrgPoliciesTable {
  org_id: OrgId;
  /** JSON (lib/domain/orgs/policies.ts). */
  policies: string;
  updated_at: string;
}

export interface RecoveryEnrolmentsTable {
  user_id: UserId;
  enrolment_id: string;
  org_id: OrgId;
  threshold: number;
  copy: string;
  signature: string;
  kdf_salt: string;
  created_at: string;
  /** The versioned form's signed fields (migration 019); null for an enrolment made before versions. */
  version: number | null;
  account_keys: string | null;
  kdf_version: number | null;
}

export interface RecoverySharesTable {
  enrolment_id: string;
  trustee_id: UserId;
  encrypted_share: string;
  trustee_keys: string;
}

export interface RecoveryRequestsTable {
  request_id: string;
  /** Null, with org_id and enrolment_id, for a decoy: a request for an address with no enrolled account (migration 021, which also dropped its reference to `users`). */
  user_id: UserId | null;
  org_id: OrgId | null;
  enrolment_id: string | null;
  /** Keyed hashes of the address asked for and of the client's address; the hash of the device's binding secret, if sent. */
  address_key: string;
  client_key: string;
  binding_hash: string | null;
  public_key: string;
  token_hash: string;
  status: RecoveryStatus;
  created_at: string;
  expires_at: string;
  ended_at: string | null;
  session_id: string | null;
  opened_at: string | null;
}

export interface RecoveryApprovalsTable {
  request_id: string;
  trustee_id: UserId;
  encrypted_share: string;
  signature: string;
  approved_at: string;
}

export interface OutboxTable {
  event_id: string;
  ord: string;
  /** The domain event as JSON. */
  event: string;
}
