/** The documents of accounts: organizations, users, sessions and their refresh tokens, key logs, invites. */
import type { InviteId, OrgId, UserId } from "../../../domain/ids";
import type { Invite } from "../../../domain/orgs/invites";
import type { OrgRole } from "../../../domain/types";
import type { NewUser, OrgRecord, SessionRecord, UserRecord } from "../../port";

/** An organization; `_id` is its id. */
export type OrgDoc = Omit<OrgRecord, "orgId"> & {
  _id: OrgId;
  /** Bumped by each removal of a person, so that two removals in one organization conflict and one retries. */
  writeSeq?: number;
  /** Bumped by each attachment upload begun: two begins in one organization conflict, and one retries on the other's quota use. */
  attachmentSeq?: number;
  /** Bumped by each send made: two makes in one organization conflict, and one retries on the other's quota use. */
  sendSeq?: number;
};

/** A user; `_id` is their id, `email` is unique. */
export type UserDoc = Omit<UserRecord, "userId" | "accountVersion"> & {
  _id: UserId;
  /** Absent until the first master password change (then 2, 3, ...). */
  accountVersion?: number;
  /** Bumped by every transaction that must not overlap a password change (a login, a personal wrap): its write conflicts with it. */
  writeSeq?: number;
};

/** An invite; `_id` is its id. */
export type InviteDoc = Omit<Invite, "inviteId"> & {
  _id: InviteId;
  /** Unique; the raw token is never stored. */
  tokenHash: string;
  updatedAt: string;
};

export interface RefreshTokenDoc {
  /** The token's hash. */
  _id: string;
  familyId: string;
  userId: UserId;
  status: "active" | "used" | "revoked";
  expiresAt: string;
  createdAt: string;
}

/** A session (lib/domain/accounts/sessions.ts): `_id` is its refresh-token family's id. */
export type SessionDoc = Omit<SessionRecord, "sessionId"> & { _id: string };

/** A remembered device (lib/domain/accounts/remembered-devices.ts): `_id` is its id, `tokenHash` unique. */
export interface RememberedDeviceDoc {
  _id: string;
  tokenHash: string;
  userId: UserId;
  deviceName: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
}

/** One entry of a user's key log (lib/domain/accounts/key-rotation.ts), unique on userId + version (as the SQL primary key). */
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

/** One link of an organization's signed log (lib/domain/orgs/log.ts), unique on orgId + seq (as the SQL primary key). */
export interface OrgLogDoc {
  /** `orgLogKey(orgId, seq)`. */
  _id: string;
  orgId: OrgId;
  seq: number;
  /** SHA-256 (hex) of the link's canonical bytes: the next link's `prev`. */
  hash: string;
  /** The link as JSON text (re-serializing a document could reorder it). */
  link: string;
  createdAt: string;
}

export function orgLogKey(orgId: OrgId, seq: number): string {
  return `${orgId}:${seq}`;
}

export function toSession(d: SessionDoc): SessionRecord {
  const { _id, ...rest } = d;
  return { sessionId: _id, ...rest };
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
