/**
 * `client.vaults`: the caller's vaults, their names checked against the signed roster (the part:
 * vaults.ts), their state fingerprint and full check, the rekey (rekey.ts) and the export
 * (transfer.ts; the formats: sdk/transfer/).
 */
import type { Bytes } from "../../../protocol/encoding";
import { vaultStateFingerprint } from "../../fingerprints";
import type { ExportFormat } from "../../transfer/export";
import type { Parts } from "../parts";
import type { RekeyOptions } from "../rekey";
import type { ExportOptions } from "../transfer";
import type { RekeyResult, Vault, VaultVerification } from "../types";
import type { CheckedVault } from "../vaults";
import { lc } from "./ids";

export interface VaultsApi {
  /** The vaults as the server lists them, names unchecked (`listChecked` is what to show a person). */
  list(): Promise<Vault[]>;
  /**
   * The caller's vaults, each name checked against the vault's verified roster. A vault whose
   * roster cannot be verified stays in the list, its name unverified, with the error as its
   * `problem`; opening it fails with that error.
   */
  listChecked(): Promise<CheckedVault[]>;
  /**
   * The person confirms that vaults a listing left out (`VaultListChanged.missing`:
   * `KNOWN_VAULT_MISSING`, `NAME_MOVED`) are gone: this device stops expecting them, and their
   * names are free for other vaults. A delete or leave of this client's own forgets by itself.
   */
  forget(vaultIds: readonly string[]): Promise<void>;
  /** A vault as the server shows it to the caller, name unchecked. */
  get(vaultId: string): Promise<Vault>;
  /** One vault with its name checked against its verified roster (a type other than the roster's is `WRAP_MISMATCH`). */
  getChecked(vaultId: string): Promise<CheckedVault>;
  /** A new vault: a random 256-bit key, wrapped for the creator and signed, and a roster started with a `create` link that names it. */
  create(name: string, type?: "personal" | "shared"): Promise<Vault>;
  /** Renames a vault with a signed `rename` link; a vault without a roster is refused (`UNSIGNED_VAULT`). */
  rename(vaultId: string, name: string): Promise<Vault>;
  delete(vaultId: string): Promise<void>;
  /** The vault's key, from the caller's wrap, checked against what the verified roster vouches for. */
  open(vault: Vault): Promise<Bytes>;
  /**
   * The vault's state fingerprint (its verified roster head and item-log head): two members who
   * read the same one to each other see one history. Null for a vault without a roster.
   */
  fingerprint(vaultId: string): Promise<string | null>;
  /** The member-level check (roster, every wrap), the item list against the signed item log, and the vault's state fingerprint. */
  verify(vaultId: string): Promise<VaultVerification>;
  /**
   * A new vault key: every item sealed again under it, the key wrapped for exactly the members of
   * the verified roster (their keys checked), all sent in one call; a vault that changed meanwhile
   * starts it again. A vault without a roster is refused (`UNSIGNED_VAULT`): its owner adopts it
   * instead (`client.members.adoptRoster`).
   */
  rekey(vaultId: string, opts?: RekeyOptions): Promise<RekeyResult>;
  /**
   * The vaults' items as a file's text (`encrypted` needs a passphrase, and carries the items' files,
   * downloaded and checked here; `opts` hears each and what was left out); each vault's export is an audit record.
   */
  export(vaultIds: readonly string[], format: ExportFormat, passphrase?: string, opts?: ExportOptions): Promise<string>;
}

type Uses = Pick<Parts, "vaults" | "rosters" | "members" | "items" | "rekeys" | "transfers">;

export function vaultsApi(parts: Uses): VaultsApi {
  const { vaults, rekeys, transfers } = parts;
  return {
    list: () => vaults.listVaults(),
    listChecked: () => vaults.listCheckedVaults(),
    forget: (vaultIds) => vaults.forgetVaults(vaultIds.map(lc)),
    get: (vaultId) => vaults.getVault(lc(vaultId)),
    getChecked: (vaultId) => vaults.getCheckedVault(lc(vaultId)),
    create: (name, type = "shared") => vaults.createVault(name, type),
    rename: (vaultId, name) => vaults.renameVault(lc(vaultId), name),
    delete: (vaultId) => vaults.deleteVault(lc(vaultId)),
    open: (vault) => vaults.openVault(vault),
    fingerprint: (vaultId) => fingerprintOf(parts, lc(vaultId)),
    verify: (vaultId) => verify(parts, lc(vaultId)),
    rekey: (vaultId, opts = {}) => rekeys.rekey(lc(vaultId), opts),
    export: (vaultIds, format, passphrase, opts) => transfers.exportVaults(vaultIds.map(lc), format, passphrase, opts),
  };
}

async function fingerprintOf({ rosters, items }: Uses, vaultId: string): Promise<string | null> {
  const roster = await rosters.verifiedRoster(vaultId);
  if (!roster) return null;
  const log = await items.logs.follow(vaultId, roster);
  return vaultStateFingerprint(
    vaultId,
    { seq: roster.state.seq, head: roster.state.head },
    log && { seq: log.head.seq, head: log.head.head },
  );
}

async function verify({ members, items }: Uses, vaultId: string): Promise<VaultVerification> {
  const report = await members.verifyVault(vaultId);
  let checked: VaultVerification["items"] = null;
  if (report.roster) {
    try {
      checked = await items.checkedHead(vaultId);
    } catch (err) {
      report.problems.push(`signed item log: ${(err as Error).message}`);
      report.ok = false;
    }
  }
  const fingerprint =
    report.roster &&
    (await vaultStateFingerprint(
      vaultId,
      { seq: report.roster.seq, head: report.roster.head },
      checked && { seq: checked.seq, head: checked.head },
    ));
  return { ...report, items: checked, fingerprint };
}
