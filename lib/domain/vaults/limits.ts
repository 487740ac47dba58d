/**
 * How large a vault may grow, and what a rekey body may hold.
 *
 * A vault must always fit in its own rekey: a vault that outgrows the rekey body limit can never be
 * rekeyed after a removal, and one whose item list outgrows what a process can build cannot even be
 * read. So a vault's stored ciphertext (`encryptedData` plus `encryptedName`, as base64 text) is
 * bounded by VAULT_MAX_BYTES (default: half of REKEY_BODY_LIMIT) and its items by VAULT_MAX_ITEMS;
 * the settings are refused at start unless a full vault, with its most members, fits in a rekey
 * body with room to spare.
 *
 * A rekey body is parsed within bounds derived from the same numbers: no legitimate rekey holds
 * more values than six per item and eight per member (plus a little for the top level and its
 * roster link), so a body of millions of tiny values is refused after its first megabyte.
 */
import { rekeyPastVaultLimit, vaultBytesFull, vaultItemsFull } from "./refusals";
import { MAX_LINK_MEMBERS } from "../../../protocol/formats/roster";

export interface VaultLimits {
  /** Characters of ciphertext (base64, both fields, every item) a vault may hold. */
  maxBytes: number;
  /** Items a vault may hold. */
  maxItems: number;
}

/** JSON characters a rekey body spends on one item beside its two ciphertexts (ids, field names, revision). */
export const REKEY_ITEM_OVERHEAD = 160;
/** ...and on one member: its `newKeys` entry (an RSA-4096 wrap, a signature, an id) and its entry in the link. */
export const REKEY_MEMBER_OVERHEAD = 1_200;

export const defaultVaultMaxBytes = (rekeyBodyLimit: number): number => Math.floor(rekeyBodyLimit / 2);
/** An eighth of the rekey body limit for the items' overhead, at most 50,000 items (the figure at the default 64 MiB). */
export const defaultVaultMaxItems = (rekeyBodyLimit: number): number =>
  Math.max(1, Math.min(50_000, Math.floor(rekeyBodyLimit / 8 / REKEY_ITEM_OVERHEAD)));
/** The fewest members a full vault's rekey must leave room for. */
export const MIN_MEMBERS_COVERED = 100;

/** Members a vault at its limits may have and still fit in a rekey body, with 10% of the limit to spare. */
export function membersCovered(limits: VaultLimits, rekeyBodyLimit: number): number {
  const room = Math.floor(rekeyBodyLimit * 0.9) - limits.maxBytes - limits.maxItems * REKEY_ITEM_OVERHEAD - 64 * 1024;
  return Math.max(0, Math.min(MAX_LINK_MEMBERS, Math.floor(room / REKEY_MEMBER_OVERHEAD)));
}

/** Why the limits cannot stand beside the rekey body limit, or undefined when they can. */
export function vaultLimitsProblem(limits: VaultLimits, rekeyBodyLimit: number): string | undefined {
  if (membersCovered(limits, rekeyBodyLimit) >= MIN_MEMBERS_COVERED) return undefined;
  return (
    `a full vault (VAULT_MAX_BYTES ${limits.maxBytes}, VAULT_MAX_ITEMS ${limits.maxItems}) with ${MIN_MEMBERS_COVERED} members needs a ` +
    `larger rekey body than REKEY_BODY_LIMIT ${rekeyBodyLimit} allows with 10% to spare: lower them or raise REKEY_BODY_LIMIT`
  );
}

/** Values a legitimate rekey body holds at most, for a vault of at most `maxItems` items. */
export const rekeyMaxValues = (maxItems: number): number => 256 + 6 * maxItems + 8 * MAX_LINK_MEMBERS;

/** What a vault holds now. */
export interface VaultSize {
  bytes: number;
  items: number;
}

/** Refuses a write that would take a vault past its limits (413, naming the limit). `change` is what the write adds (negative: frees). */
export function decideVaultGrowth(now: VaultSize, change: VaultSize, limits: VaultLimits): void {
  if (change.items > 0 && now.items + change.items > limits.maxItems) throw vaultItemsFull(now.items, limits.maxItems);
  if (change.bytes > 0 && now.bytes + change.bytes > limits.maxBytes) throw vaultBytesFull(now.bytes, limits.maxBytes);
}

/**
 * Refuses a rekey whose new ciphertexts would take the vault past VAULT_MAX_BYTES (413), unless it
 * does not grow the vault: a vault past its limit (lowered settings) can always be rekeyed as it is.
 */
export function decideRekeySize(nowBytes: number, newBytes: number, limits: VaultLimits): void {
  if (newBytes > limits.maxBytes && newBytes > nowBytes) throw rekeyPastVaultLimit(newBytes, limits.maxBytes);
}

/** The stored size of an item: both ciphertexts as the base64 text they are kept as. */
export const itemBytes = (item: { encryptedData: string; encryptedName: string }): number =>
  item.encryptedData.length + item.encryptedName.length;
