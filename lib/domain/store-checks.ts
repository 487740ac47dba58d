/**
 * The rules a store applies to what it read inside its transaction (under its locks), before it
 * writes. Both adapters (lib/store/sql/, lib/store/mongo/) call each one, so that a refusal is
 * decided and written once; what is left in an adapter is its own race (a conditional write that
 * matched nothing).
 */
import type { VaultId } from "./ids";
import type { HeldVault as HeldRotationVault } from "./accounts/key-rotation";
import {
  approvedAlready,
  emailTaken,
  inviteRequired,
  keyLogEntryStale,
  passwordChangedMeanwhile,
  personalVaultsChanged,
  rotationVaultsChanged,
  signingKeyTaken,
  statementAlreadySet,
} from "./accounts/refusals";
import { inviteHasStatement, inviteNotFound, inviteNotRedeemable, notTheInvitedEmail } from "./orgs/refusals";
import { isRedeemable, type Invite } from "./orgs/invites";
import type { SignedStatement } from "./types";
import type { VaultSnapshot } from "./vaults/decisions";

/** A registration that opens a new organization: with `onlyIfFirstUser`, only while the server has no user. */
export function decideFirstUser(onlyIfFirstUser: boolean, anyUser: boolean): void {
  if (onlyIfFirstUser && anyUser) throw inviteRequired();
}

/** A new user: no user has their email, nor their signing key (their id is derived from it). */
export function decideNewUserFree(taken: { email: boolean; signingKey?: boolean }): void {
  if (taken.email) throw emailTaken();
  if (taken.signingKey) throw signingKeyTaken();
}

/** The invite a registration redeems, as stored: it exists, is redeemable now, and is for the address registering. Answers it. */
export function decideInviteRedemption<T extends Pick<Invite, "status" | "expiresAt" | "email">>(
  invite: T | undefined | null,
  email: string,
  now: string,
): T {
  if (!invite) throw inviteNotFound();
  if (!isRedeemable(invite, now)) throw inviteNotRedeemable();
  if (invite.email !== email) throw notTheInvitedEmail();
  return invite;
}

/** A login starts its session only while the account is at the version whose password it compared. */
export function decideSessionStart(accountVersion: number, compared: number): void {
  if (accountVersion !== compared) throw passwordChangedMeanwhile();
}

/** A statement in the form it is stored in: its version, then its signature, whatever else the request held. */
export function storedStatement(s: SignedStatement): SignedStatement {
  return { version: s.version, signature: s.signature };
}

const sameStatement = (a: SignedStatement, b: SignedStatement) => a.version === b.version && a.signature === b.signature;

/** An account's statement after an upgrade: set once; the same one again is fine, another one a `409`. Answers it as stored. */
export function decideStatementSet(
  stored: SignedStatement | null | undefined,
  given: SignedStatement,
  field: "keyStatement" | "kdfStatement",
): SignedStatement {
  if (stored && !sameStatement(stored, given)) throw statementAlreadySet(field);
  return storedStatement(given);
}

/** An invite's statement: `"same"` when it holds this one already, `"attach"` when it holds none; another one is a `409`. */
export function decideInviteStatement(stored: SignedStatement | null | undefined, given: SignedStatement): "same" | "attach" {
  if (!stored) return "attach";
  if (!sameStatement(stored, given)) throw inviteHasStatement();
  return "same";
}

/** A trustee approves a request once. */
export function decideNewApproval(approvedBefore: boolean): void {
  if (approvedBefore) throw approvedAlready();
}

/** A key rotation follows the key log's head the client checked its entry against: another rotation since is a `409`. */
export function decideKeyLogHead(storedVersion: number, checkedVersion: number): void {
  if (storedVersion !== checkedVersion) throw keyLogEntryStale(storedVersion);
}

/** The locked ones still held, and how many are held that were not locked (made or shared meanwhile). */
function stillLocked<T>(heldNow: readonly VaultId[], locked: readonly T[], idOf: (t: T) => VaultId): { held: T[]; missing: number } {
  const held = locked.filter((t) => heldNow.includes(idOf(t)));
  return { held, missing: heldNow.length - held.length };
}

/** A password change's personal vaults as locked, still exactly the user's now: one made since is missing (`409`). */
export function decidePersonalVaultsLocked(heldNow: readonly VaultId[], locked: readonly VaultSnapshot[]): VaultSnapshot[] {
  const { held, missing } = stillLocked(heldNow, locked, (s) => s.vault.vaultId);
  if (missing !== 0) throw personalVaultsChanged(missing, 0);
  return held;
}

/** A key rotation's vaults as locked, still exactly the user's now: one shared with them since is missing (`409`). */
export function decideRotationVaultsLocked(heldNow: readonly VaultId[], locked: readonly HeldRotationVault[]): HeldRotationVault[] {
  const { held, missing } = stillLocked(heldNow, locked, (h) => h.snapshot.vault.vaultId);
  if (missing !== 0) throw rotationVaultsChanged(missing, 0);
  return held;
}
