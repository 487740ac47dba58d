/** Accounts and sessions: users, their organizations, and refresh tokens (stored hashed). */
import type { InviteId, OrgId, UserId } from "../../domain/ids";
import type { InviteBinding, Kdf, OrgRole, SignedStatement } from "../../domain/types";
import type { WithEvents } from "./outbox";

export interface UserRecord {
  userId: UserId;
  orgId: OrgId;
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
  /** The user's signed key statement (their id, email and keys); absent for an account made without one and not yet upgraded. */
  keyStatement?: SignedStatement;
  /** The user's signed KDF statement (their id, email and KDF parameters); absent likewise. */
  kdfStatement?: SignedStatement;
  /** What the user registered with, invited by a link that carried a binding secret. */
  inviteBinding?: InviteBinding;
}

/** A new user, before it has an organization and a role. */
export type NewUser = Omit<UserRecord, "orgId" | "role">;

export interface OrgRecord {
  orgId: OrgId;
  name: string;
  createdAt: string;
}

export interface RefreshTokenRecord {
  tokenHash: string;
  familyId: string;
  userId: UserId;
  expiresAt: string;
  createdAt: string;
}

export type RefreshOutcome = { ok: true; userId: UserId } | { ok: false; reason: "unknown" | "expired" | "reused" };

export interface AccountStore {
  /** A new organization with the user as its owner. With `onlyIfFirstUser`, 403 unless the server has no user yet. */
  registerOwnerOfNewOrg(args: { user: NewUser; org: OrgRecord; onlyIfFirstUser: boolean } & WithEvents): Promise<UserRecord>;
  /** Creates the user in the invite's organization and marks the invite used, in one step: exactly one caller wins. */
  registerWithInvite(args: { user: NewUser; inviteId: InviteId; now: string } & WithEvents): Promise<UserRecord>;
  /** Whether the server has any user yet (registration without an invite is for the first one). */
  hasUsers(): Promise<boolean>;
  findUserByEmail(email: string): Promise<UserRecord | null>;
  findUserById(userId: UserId): Promise<UserRecord | null>;
  getOrg(orgId: OrgId): Promise<OrgRecord | null>;
  listOrgMembers(orgId: OrgId): Promise<UserRecord[]>;

  // Refresh tokens rotate on use; a reused one revokes its whole family.
  saveRefreshToken(token: RefreshTokenRecord): Promise<void>;
  /** The next token joins the old one's user and family. */
  rotateRefreshToken(args: {
    oldHash: string;
    next: Pick<RefreshTokenRecord, "tokenHash" | "expiresAt" | "createdAt">;
    now: string;
  }): Promise<RefreshOutcome>;
  revokeRefreshFamily(args: { tokenHash: string; userId: UserId }): Promise<void>;

  /**
   * Sets the user's statements that are not set yet (an account made before them, upgraded by its
   * client); one already set must be given unchanged, else `409 CONFLICT`. The caller checked them.
   */
  setStatements(args: { userId: UserId; keyStatement?: SignedStatement; kdfStatement?: SignedStatement }): Promise<void>;
}
