/**
 * A rekey as one decision: what the store found under the vault's lock in, everything the rekey
 * writes out (the roster's step, the item log's step, the new key version), or a named refusal.
 * Both store adapters lock, read what `LockedForRekey` asks for, call `planRekey`, and write the plan.
 */
import type { ItemLogEntry, ItemLink } from "../items/log";
import { decideRekeyItemStep } from "../items/log";
import type { ItemId, UserId } from "../ids";
import { decideWrapVersion } from "../accounts/password-change";
import type { RosterEntry, RosterLink } from "./roster";
import { decideRekey, requireMember, type VaultSnapshot } from "./decisions";
import { decideRekeySize, itemBytes, type VaultLimits } from "./limits";

type Ciphertexts = { encryptedData: string; encryptedName: string };

/** What a rekey request carries (the store port's `RekeyInput` is this type). */
export interface RekeyRequest {
  newKeys: Array<{ userId: UserId; encryptedVaultKey: string; wrapSignature: string }>;
  /** `revision`, when given, is the one the client read and re-encrypted (checked: 409 if it changed since). */
  items: Array<Ciphertexts & { itemId: ItemId; revision?: number }>;
  keyVersion?: number;
  /** The kept revisions re-encrypted (lib/domain/items/history.ts): each at most once; those left out are dropped. */
  history?: Array<Ciphertexts & { itemId: ItemId; revision: number }>;
  /** The trashed items re-encrypted, likewise. */
  trash?: Array<Ciphertexts & { itemId: ItemId }>;
  /** Required on a signed vault; on a vault without a roster, an `adopt` link starts one. */
  rosterLink?: RosterLink;
  /** Required on a vault with a signed item log: its `rekey` link (lib/domain/items/log.ts). */
  itemLink?: ItemLink;
  /** A personal vault's new wrap is under this account version's stretched key. */
  accountVersion?: number;
}

/** What the store read under the vault's lock for a rekey. */
export interface LockedForRekey {
  snapshot: VaultSnapshot | null;
  actorId: UserId;
  /** Each current item's stored revision. */
  revisions: ReadonlyMap<string, number>;
  /** The size limits in force, with what the vault stores now; absent where no limit applies. */
  size?: { limits: VaultLimits; storedBytes: number };
  /** The actor's account version, read under its lock where `readsAccountVersion` says so. */
  accountVersion?: number;
}

/** Everything a rekey writes besides the request's own ciphertexts and wraps. */
export interface RekeyPlan {
  keyVersion: number;
  /** The roster's next link, on a signed vault (or the `adopt` that starts one). */
  roster?: RosterEntry;
  /** The item log's next link, on a vault with a signed item log. */
  itemStep?: ItemLogEntry;
}

/** A personal vault's wrap is under its owner's password: the rekey needs the account's version, locked. */
export function readsAccountVersion(snapshot: VaultSnapshot | null): boolean {
  return snapshot?.vault.type === "personal";
}

/**
 * The rekey's rules in their order: the actor may rekey; the exact member and item sets, the
 * wraps and the revisions (`decideRekey`, which also checks the roster link); the size; a personal
 * wrap under the current password; then the item log's link, which follows the roster's new head.
 */
export function planRekey(locked: LockedForRekey, rekey: RekeyRequest): RekeyPlan {
  const { snapshot, actorId, revisions } = locked;
  const roster = decideRekey(snapshot, actorId, revisions, rekey);
  const { vault } = snapshot!;
  if (locked.size) decideRekeySize(locked.size.storedBytes, rekeyedBytes(rekey), locked.size.limits);
  if (readsAccountVersion(snapshot)) decideWrapVersion(locked.accountVersion!, rekey.accountVersion);
  const keyVersion = vault.keyVersion + 1;
  const itemStep = decideRekeyItemStep(rekey.itemLink, {
    vaultId: vault.vaultId,
    head: vault.itemLog,
    rosterAfter: roster ? { seq: roster.seq, hash: roster.hash } : vault.roster,
    keyVersionAfter: keyVersion,
    actor: { userId: actorId, signingPublicKey: requireMember(snapshot, actorId).signingPublicKey },
    current: revisions,
    items: rekey.items,
  });
  return { keyVersion, ...(roster && { roster }), ...(itemStep && { itemStep }) };
}

/** The ciphertext a rekey leaves in the vault: its items, kept revisions and trash. */
function rekeyedBytes(rekey: RekeyRequest): number {
  return [...rekey.items, ...(rekey.history ?? []), ...(rekey.trash ?? [])].reduce((sum, i) => sum + itemBytes(i), 0);
}
