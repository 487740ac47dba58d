/**
 * Exports, made here on the client (the server only records that one was made): encrypted
 * (re-importable), json, csv. The formats: docs/design/exports.md.
 */
import Papa from "papaparse";
import { fromBase64, fromUtf8, toBase64, utf8 } from "../../protocol/encoding";
import { checkedContent, ITEM_TYPES, itemUrls, type ItemContent, type ItemType } from "../item-types";
import { checkKdf } from "../../protocol/crypto/kdf";
import { DEFAULT_ARGON2ID, newKdfParams } from "../../protocol/crypto/keys";
import { deriveMasterKey, gcmDecrypt, gcmEncrypt, type KdfParams } from "../../protocol/crypto/primitives";
import { spreadsheetSafe } from "./csv-formulas";
import { checkEntries, importLimits, type ImportLimits } from "./limits";
import { ImportError, parsedOf, type Parsed } from "./types";

export const EXPORT_FORMATS = ["encrypted", "json", "csv"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const ENCRYPTED_EXPORT = "vault-export/v1";
export const EXPORT_ITEMS = "vault-export-items/v1";

export interface ExportedVault {
  name: string;
  items: ItemContent[];
}

/** The items' JSON, in the clear. */
export function exportJson(vaults: readonly ExportedVault[], exportedAt: string = new Date().toISOString()): string {
  return JSON.stringify({ format: EXPORT_ITEMS, exportedAt, vaults }, null, 2);
}

const CSV_COLUMNS = ["vault", "type", "name", "username", "password", "urls", "totp", "notes", "favorite", "fields"] as const;

/**
 * One row per item, a spreadsheet's way. Every cell that a spreadsheet would run as a formula is
 * written with a leading `'` (sdk/transfer/csv-formulas.ts: a shared item's name or a member's
 * password could be a formula that sends a row's password away, or a DDE call that starts a
 * program); our import takes it off again.
 */
export function exportCsv(vaults: readonly ExportedVault[]): string {
  const rows = vaults.flatMap((v) =>
    v.items.map((i): Record<(typeof CSV_COLUMNS)[number], string> => {
      const { username, password, notes, ...rest } = i.fields;
      const { url: _url, ...other } = rest;
      return {
        vault: v.name,
        type: i.type ?? "login",
        name: i.name,
        username: username ?? "",
        password: password ?? "",
        urls: itemUrls(i)
          .map((u) => u.url)
          .join("\n"),
        totp: i.totp ?? "",
        notes: notes ?? "",
        favorite: i.favorite ? "1" : "",
        fields: [...Object.entries(other).map(([k, val]) => `${k}: ${val}`), ...(i.custom ?? []).map((c) => `${c.name}: ${c.value}`)].join(
          "\n",
        ),
      };
    }),
  );
  const safe = rows.map((row) => Object.fromEntries(CSV_COLUMNS.map((c) => [c, spreadsheetSafe(row[c])])));
  // Papa's own escapeFormulae looks at a cell's first line only: ours is spreadsheetSafe. A quoted
  // cell is also put in double quotes, as Papa does with the cells it escapes.
  return Papa.unparse(safe, {
    columns: [...CSV_COLUMNS],
    quotes: (value: unknown) => typeof value === "string" && value.startsWith("'"),
  });
}

/** The encrypted export of `vaults` under `passphrase` (Argon2id at the SDK's default cost, unless `kdf` says otherwise). */
export async function exportEncrypted(
  vaults: readonly ExportedVault[],
  passphrase: string,
  kdf: KdfParams = newKdfParams(DEFAULT_ARGON2ID),
): Promise<string> {
  if (kdf.algorithm !== "argon2id") throw new Error("an encrypted export is derived with Argon2id");
  const key = await deriveMasterKey(passphrase, kdf);
  const sealed = await gcmEncrypt(key, utf8(exportJson(vaults)), utf8(ENCRYPTED_EXPORT));
  return JSON.stringify({ format: ENCRYPTED_EXPORT, kdf, ciphertext: toBase64(sealed) });
}

/** Whether a text is an encrypted export of ours (it needs a passphrase). */
export function isEncryptedExport(text: string): boolean {
  try {
    return (JSON.parse(text) as { format?: unknown }).format === ENCRYPTED_EXPORT;
  } catch {
    return false;
  }
}

/** Opens an export of ours: the encrypted form (with its passphrase) or the JSON one. */
export async function parseOwnExport(text: string, passphrase?: string, limits: ImportLimits = importLimits()): Promise<Parsed> {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new ImportError("the file is not JSON");
  }
  if (doc.format === ENCRYPTED_EXPORT) {
    if (passphrase === undefined) throw new ImportError("this export is encrypted: give its passphrase");
    const kdf = doc.kdf as KdfParams;
    try {
      checkKdf(kdf);
    } catch (err) {
      throw new ImportError(`the export's key derivation is not one this client accepts: ${(err as Error).message}`);
    }
    if (kdf.algorithm !== "argon2id" || typeof doc.ciphertext !== "string") throw new ImportError("not an encrypted export of this form");
    const key = await deriveMasterKey(passphrase, kdf);
    let plain: string;
    try {
      plain = fromUtf8(await gcmDecrypt(key, fromBase64(doc.ciphertext), utf8(ENCRYPTED_EXPORT)));
    } catch {
      throw new ImportError("the passphrase is wrong, or the export was altered");
    }
    return parseItemsJson(plain, limits);
  }
  return parseItemsJson(text, limits);
}

function parseItemsJson(text: string, limits: ImportLimits): Parsed {
  const doc = JSON.parse(text) as { format?: unknown; vaults?: unknown };
  if (doc.format !== EXPORT_ITEMS || !Array.isArray(doc.vaults)) throw new ImportError("not an export of this service");
  checkEntries(
    (doc.vaults as Array<{ items?: unknown }>).reduce((n, v) => n + (Array.isArray(v?.items) ? v.items.length : 0), 0),
    limits,
  );
  const parsed = parsedOf("vault-export");
  for (const v of doc.vaults as Array<{ items?: unknown }>) {
    for (const raw of Array.isArray(v?.items) ? v.items : []) {
      const i = raw as ItemContent;
      const name = typeof i?.name === "string" ? i.name : "(no name)";
      if (typeof i?.name !== "string" || typeof i.fields !== "object" || i.fields === null) {
        parsed.skipped.push({ name, why: "not an item (no name or fields)" });
        continue;
      }
      if (i.type !== undefined && !ITEM_TYPES.includes(i.type as ItemType)) {
        parsed.skipped.push({ name, why: `an item type this client does not know (${String(i.type)})` });
        continue;
      }
      try {
        parsed.items.push(checkedContent(i));
      } catch (err) {
        parsed.skipped.push({ name, why: (err as Error).message });
      }
    }
  }
  return parsed;
}
