/**
 * A vault's signed roster for `vaultctl`: the saved form `vaultctl roster --save` writes, and the offline check of a saved roster that `vaultctl verify <file>` runs
 * (no server: the signers' keys come from the file and are held against this machine's pins).
 */
import fs from "node:fs";
import {
  asPin,
  bundleFingerprint,
  bundleSelfSignatureVerifies,
  SecurityError,
  replayRoster,
  roster as protocol,
  type PinStore,
  type PublicKeyBundle,
  type RosterHeadStore,
  type RosterLink,
  type RosterState,
} from "../sdk";

/** What `vaultctl roster <vault> --save FILE` writes. */
export interface SavedRoster {
  format: "vault-roster/v1";
  server: string;
  vaultId: string;
  vaultName: string;
  links: RosterLink[];
  /** The public keys of every user the chain names, as the server showed them (checked when saved). */
  keys: Record<string, PublicKeyBundle>;
}

export function readSavedRoster(file: string): SavedRoster {
  const saved = JSON.parse(fs.readFileSync(file, "utf8")) as SavedRoster;
  if (saved?.format !== "vault-roster/v1" || !Array.isArray(saved.links) || typeof saved.keys !== "object" || !saved.keys) {
    throw new Error(`${file} is not a roster saved by \`vaultctl roster --save\``);
  }
  return saved;
}

/**
 * A saved roster checked offline: every signer's keys self-signed and, where this machine pinned
 * them, the pinned ones; the chain replayed (signatures, rights, hashes); not older than, nor
 * different from, the head this machine last saw for the vault.
 */
export async function verifySavedRoster(saved: SavedRoster, pins: PinStore, heads: RosterHeadStore): Promise<RosterState | null> {
  const keysOf = async (userId: string) => {
    const bundle = saved.keys[userId];
    if (!bundle || !(await bundleSelfSignatureVerifies(bundle)))
      throw new SecurityError("BAD_SIGNATURE", `the saved keys of ${userId} are missing or not self-signed`, userId);
    const kept = await pins.get(userId);
    const pinned = kept === undefined ? undefined : asPin(kept).fingerprint;
    const current = await bundleFingerprint(bundle);
    if (pinned !== undefined && pinned !== current)
      throw new SecurityError("KEY_CHANGED", `the saved keys of ${userId} are not the ones pinned here (${pinned})`, userId);
    return bundle;
  };
  const state = await replayRoster(saved.vaultId, saved.links, keysOf);
  const seen = await heads.get(saved.vaultId);
  if (seen && (!state || state.seq < seen.seq || (await protocol.linkHash(saved.links[seen.seq]!)) !== seen.hash)) {
    throw new SecurityError(
      "ROSTER_ROLLBACK",
      `this machine saw link ${seen.seq} of the vault's roster, and the saved roster ${state && state.seq >= seen.seq ? "differs there" : "ends before it"}`,
    );
  }
  return state;
}
