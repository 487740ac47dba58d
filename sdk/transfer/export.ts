/**
 * Exports, made here on the client (the server only records that one was made): encrypted
 * (re-importable, files and all), json, csv. The formats: docs/design/exports.md.
 */
import Papa from "papaparse";
import { fromBase64, fromUtf8, toBase64, utf8 } from "../../protocol/encoding";
import { ITEM_TYPES, itemUrls, type ItemContent, type ItemType } from "../item-types";
import { checkKdf } from "../../protocol/crypto/kdf";
import { DEFAULT_ARGON2ID, newKdfParams } from "../../protocol/crypto/keys";
import { deriveMasterKey, gcmDecrypt, gcmEncrypt, type KdfParams } from "../../protocol/crypto/primitives";
import { spreadsheetSafe } from "./csv-formulas";
import { checkEntries, importLimits, sizeText, type ImportLimits } from "./limits";
import { addItem, ImportError, parsedOf, type ImportFile, type LeftOut, type Parsed } from "./types";

export const EXPORT_FORMATS = ["encrypted", "json", "csv"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const ENCRYPTED_EXPORT = "vault-export/v1";
/** The items' JSON as written now: each item's files by name and size, and in the encrypted export their bytes. */
export const EXPORT_ITEMS = "vault-export-items/v2";
/** The items' JSON of earlier releases (no files), still read. */
export const EXPORT_ITEMS_V1 = "vault-export-items/v1";

/**
 * The bytes of the files one encrypted export carries, all together: twice base64 (in the sealed
 * JSON, then the ciphertext) makes them about 1.8 times as large in the export, which stays within
 * the 64 MiB an import reads (sdk/transfer/limits.ts). A file past it is listed as left out.
 */
export const EXPORT_FILE_BYTES = 32 * 1024 * 1024;

/** A file of an exported item: its name, size and type, and (the encrypted export) its bytes; never its key or its id on the server. */
export interface ExportedFile {
  name: string;
  size: number;
  type?: string;
  data?: Uint8Array;
}

/** An item as exported: its content, its files as ExportedFile. */
export type ExportedItem = Omit<ItemContent, "attachments"> & { attachments?: readonly ExportedFile[] };

export interface ExportedVault {
  name: string;
  items: ExportedItem[];
}

/** A file an export does not carry, and why (past EXPORT_FILE_BYTES, or not handed over whole). */
export interface FileLeftOut {
  vault: string;
  item: string;
  file: string;
  size: number;
  why: string;
}

/** The items' JSON: files by name, size and type, with their bytes (base64) only when `withData`. */
function itemsJson(vaults: readonly ExportedVault[], exportedAt: string, withData: boolean, leftOut: readonly FileLeftOut[] = []): string {
  const file = (f: ExportedFile) => ({
    name: f.name,
    size: f.size,
    ...(f.type !== undefined && { type: f.type }),
    ...(withData && f.data && { data: toBase64(f.data) }),
  });
  const out = vaults.map((v) => ({
    name: v.name,
    items: v.items.map(({ attachments, ...content }) => ({
      ...content,
      ...(attachments && attachments.length > 0 && { attachments: attachments.map(file) }),
    })),
  }));
  return JSON.stringify({ format: EXPORT_ITEMS, exportedAt, vaults: out, ...(leftOut.length > 0 && { leftOut }) }, null, 2);
}

/** The items' JSON, in the clear: each item's files by name, size and type (their bytes, keys and ids are not in it). */
export function exportJson(vaults: readonly ExportedVault[], exportedAt: string = new Date().toISOString()): string {
  return itemsJson(vaults, exportedAt, false);
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

/**
 * The encrypted export of `vaults` under `passphrase` (Argon2id at the SDK's default cost, unless
 * `kdf` says otherwise): the files' bytes sealed with the items, and the files left out listed.
 */
export async function exportEncrypted(
  vaults: readonly ExportedVault[],
  passphrase: string,
  kdf: KdfParams = newKdfParams(DEFAULT_ARGON2ID),
  leftOut: readonly FileLeftOut[] = [],
): Promise<string> {
  if (kdf.algorithm !== "argon2id") throw new Error("an encrypted export is derived with Argon2id");
  const key = await deriveMasterKey(passphrase, kdf);
  const sealed = await gcmEncrypt(key, utf8(itemsJson(vaults, new Date().toISOString(), true, leftOut)), utf8(ENCRYPTED_EXPORT));
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

type Raw = { readonly [key: string]: unknown };
const obj = (v: unknown): Raw => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Raw) : {});

function parseItemsJson(text: string, limits: ImportLimits): Parsed {
  const doc = JSON.parse(text) as { format?: unknown; vaults?: unknown; leftOut?: unknown };
  if ((doc.format !== EXPORT_ITEMS && doc.format !== EXPORT_ITEMS_V1) || !Array.isArray(doc.vaults))
    throw new ImportError("not an export of this service");
  checkEntries(
    (doc.vaults as Array<{ items?: unknown }>).reduce((n, v) => n + (Array.isArray(v?.items) ? v.items.length : 0), 0),
    limits,
  );
  const parsed = parsedOf("vault-export");
  const leftOut = Array.isArray(doc.leftOut) ? doc.leftOut.map(obj) : [];
  for (const v of doc.vaults as Array<{ name?: unknown; items?: unknown }>) {
    for (const raw of Array.isArray(v?.items) ? v.items : []) {
      const { attachments, ...i } = obj(raw) as Raw & ItemContent;
      const name = typeof i.name === "string" ? i.name : "(no name)";
      if (typeof i.name !== "string" || typeof i.fields !== "object" || i.fields === null) {
        parsed.skipped.push({ name, why: "not an item (no name or fields)" });
        continue;
      }
      if (i.type !== undefined && !ITEM_TYPES.includes(i.type as ItemType)) {
        parsed.skipped.push({ name, why: `an item type this client does not know (${String(i.type)})` });
        continue;
      }
      const left: LeftOut[] = leftOut
        .filter((l) => l.vault === v?.name && l.item === name)
        .map((l) => ({ part: `file ${String(l.file)}`, why: `left out of the export: ${String(l.why)}` }));
      const files = exportedFiles(attachments, left);
      addItem(parsed, name, i, { left, files });
    }
  }
  return parsed;
}

/**
 * An exported item's files that carry their bytes, as files to upload; one that does not (the JSON
 * export lists files by name; an export of an earlier release named them by key), or whose bytes
 * are not the size it names, is said in `left`.
 */
function exportedFiles(raw: unknown, left: LeftOut[]): ImportFile[] {
  const files: ImportFile[] = [];
  for (const f of Array.isArray(raw) ? raw.map(obj) : []) {
    const name = typeof f.name === "string" && f.name.trim() !== "" ? f.name : "(no name)";
    if (typeof f.data !== "string") {
      left.push({ part: `file ${name}`, why: "the export names it but does not hold its bytes (only an encrypted export carries them)" });
      continue;
    }
    let data: Uint8Array;
    try {
      data = fromBase64(f.data);
    } catch {
      left.push({ part: `file ${name}`, why: "its bytes in the export are not base64" });
      continue;
    }
    if (data.length !== f.size)
      left.push({ part: `file ${name}`, why: `the export holds ${sizeText(data.length)} of it, not the ${String(f.size)} bytes it names` });
    else files.push({ name, data });
  }
  return files;
}
