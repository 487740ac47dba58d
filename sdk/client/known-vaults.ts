/**
 * What a device knows of its account's vaults, against a new listing (pure: the store is the
 * caller's). A listing that leaves out a vault this device saw, or shows a name it knows on another
 * vault, is not taken as complete until the person confirms it; a listing that passes replaces
 * what is known, names taken only where a verified roster gives them.
 */
import type { KnownVault } from "../pins";
import type { VaultType } from "../../protocol/vault-roles";

/** A vault of a listing as the known-vault check reads it: `name` only where its verified roster gives it. */
export interface ListedVault {
  vaultId: string;
  name?: string;
  namedBy?: string;
  createdBy?: string;
  vaultType?: VaultType;
}

/** A known vault a listing leaves out. */
export type MissingVault = KnownVault & { vaultId: string };

/** A name this device knows for one vault, which a listing gives (verified) to another one. */
export interface MovedName {
  name: string;
  /** The vault this device knows under the name (left out of the listing). */
  knownId: string;
  /** The listed vault that now carries it, and who signed that. */
  nowId: string;
  namedBy?: string;
  /** The vault this device knows was made by this account, and the name on the other one is signed by someone else. */
  takenFromYours: boolean;
}

/** What a listing leaves out of what this device knows (`me`: the account). */
export function knownChanges(
  me: string,
  known: Readonly<Record<string, KnownVault>>,
  listed: readonly ListedVault[],
): { missing: MissingVault[]; moved: MovedName[] } {
  const ids = new Set(listed.map((v) => v.vaultId));
  const missing = Object.entries(known)
    .filter(([vaultId]) => !ids.has(vaultId))
    .map(([vaultId, k]) => ({ ...k, vaultId }));
  const moved: MovedName[] = [];
  for (const m of missing) {
    if (m.name === undefined) continue;
    for (const v of listed)
      if (v.name === m.name)
        moved.push({
          name: m.name,
          knownId: m.vaultId,
          nowId: v.vaultId,
          ...(v.namedBy && { namedBy: v.namedBy }),
          takenFromYours: m.createdBy === me && v.namedBy !== me,
        });
  }
  return { missing, moved };
}

/**
 * What this device knows after a listing that passed: every listed vault, with the verified name
 * where the listing has one and the one known before where it has none (a roster that failed its
 * checks this time does not erase the name), except `forgotten` ones.
 */
export function knownAfter(
  known: Readonly<Record<string, KnownVault>>,
  listed: readonly ListedVault[],
  forgotten: ReadonlySet<string> = new Set(),
): Record<string, KnownVault> {
  const next: Record<string, KnownVault> = {};
  for (const v of listed) {
    if (forgotten.has(v.vaultId)) continue;
    const before = known[v.vaultId] ?? {};
    next[v.vaultId] = {
      ...before,
      ...(v.name !== undefined && { name: v.name, namedBy: v.namedBy }),
      ...(v.createdBy && { createdBy: v.createdBy }),
      ...(v.vaultType && { vaultType: v.vaultType }),
    };
    if (next[v.vaultId]!.namedBy === undefined) delete next[v.vaultId]!.namedBy;
  }
  return next;
}

/** The same knowledge (to write only what changed). */
export const sameKnown = (a: Readonly<Record<string, KnownVault>>, b: Readonly<Record<string, KnownVault>>): boolean =>
  JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));

const sorted = (r: Readonly<Record<string, KnownVault>>) =>
  Object.keys(r)
    .sort()
    .map((id) => [id, r[id]!.name ?? null, r[id]!.namedBy ?? null, r[id]!.createdBy ?? null, r[id]!.vaultType ?? null]);
