/**
 * A master password change: the client proves the old password, and sends the new KDF
 * parameters, auth hash, private keys under the new stretched key, a KDF statement signed by the
 * account's key, and a new wrap of every personal vault's key (with its `rewrap` roster link), all
 * at once. The store applies it in one transaction, under a compare-and-swap on the account's key
 * version, so a client that read the account before another change (or before a personal vault
 * was made) is refused and starts over: no personal vault is ever left wrapped under a password
 * nobody knows. The auth hash is compared by the service (slow, and rate-limited) before this.
 */
import type { UserId, VaultId } from "../ids";
import { checkKdf } from "./keys";
import { tooManyPersonalVaults, personalVaultsChanged, staleAccountVersion, vaultNamedTwice, wrapUnderOldPassword } from "./refusals";
import type { RosterEntry, RosterLink } from "../vaults/roster";
import { checkKdfStatement } from "./statements";
import type { Kdf, SignedStatement } from "../types";
import { decideRewrap, type VaultSnapshot } from "../vaults/decisions";

/**
 * The most personal vaults an account holds: one password change re-wraps them all in one
 * request, and the gateway's 1 MiB body holds about 1,500 with their links.
 */
export const MAX_PERSONAL_VAULTS = 1_000;

/** A new personal vault, counted against the cap (under the account's lock, so two at once cannot pass it together). */
export function decidePersonalVaultCount(held: number): void {
  if (held >= MAX_PERSONAL_VAULTS) throw tooManyPersonalVaults(MAX_PERSONAL_VAULTS);
}

/** A personal vault's key, wrapped again under the new stretched key. */
export interface PersonalRewrap {
  vaultId: VaultId;
  /** The vault key version the client wrapped: the vault's current one, else 409. */
  keyVersion: number;
  encryptedVaultKey: string;
  wrapSignature: string;
  /** The `rewrap` link, on a vault with a signed roster. */
  rosterLink?: RosterLink;
}

export interface PasswordChange {
  /** The account key version the client read. */
  accountVersion: number;
  kdf: Kdf;
  kdfStatement: SignedStatement;
  vaults: PersonalRewrap[];
}

/** What the rule needs of the account: who it is, its keys, its version and its current KDF statement. */
export interface AccountState {
  userId: UserId;
  email: string;
  publicKey: string;
  signingPublicKey: string;
  accountVersion: number;
  kdfStatement?: SignedStatement;
}

/** The form of the request, before anything is locked: the KDF within the floor and caps, the statement signed, the next version. */
export function checkPasswordChangeForm(account: AccountState, change: Pick<PasswordChange, "kdf" | "kdfStatement" | "vaults">): void {
  checkKdf(change.kdf);
  // The next statement: one version above the account's (which other devices remember), so they take the new parameters up.
  checkKdfStatement({ ...account, kdf: change.kdf }, change.kdfStatement, "kdfStatement", (account.kdfStatement?.version ?? 0) + 1);
  if (new Set(change.vaults.map((v) => v.vaultId)).size !== change.vaults.length) throw vaultNamedTwice();
}

/** The version the client read must be the account's: else another change came first (`409`), and the client reads again. */
export function decideAccountVersion(current: number, stated: number): void {
  if (stated !== current) throw staleAccountVersion(current, stated);
}

/**
 * Under the locks: the version is the account's, the vaults are exactly its personal vaults (as
 * locked), and each re-wrap is whole (`decideRewrap`). Returns the roster links to store, by vault.
 */
export function decidePasswordChange(
  account: Pick<AccountState, "userId" | "accountVersion">,
  personal: readonly VaultSnapshot[],
  change: PasswordChange,
): Map<VaultId, RosterEntry | undefined> {
  decideAccountVersion(account.accountVersion, change.accountVersion);
  const held = new Map(personal.map((s) => [s.vault.vaultId, s]));
  const missing = [...held.keys()].filter((id) => !change.vaults.some((v) => v.vaultId === id)).length;
  const extra = change.vaults.filter((v) => !held.has(v.vaultId)).length;
  if (missing > 0 || extra > 0) throw personalVaultsChanged(missing, extra);
  return new Map(change.vaults.map((v) => [v.vaultId, decideRewrap(held.get(v.vaultId)!, account.userId, v)]));
}

/**
 * A personal vault's wrap (a new vault, a rekey) is under the stretched key of the account version
 * the client states: it must be the account's, else the wrap is under a password that was
 * changed meanwhile and would not open with the new one (`409`). Not stated: not checked (a client
 * from before password changes).
 */
export function decideWrapVersion(current: number, stated: number | undefined): void {
  if (stated !== undefined && stated !== current) throw wrapUnderOldPassword(current, stated);
}
