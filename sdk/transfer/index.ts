/**
 * Importing into a vault and exporting out of it, read and written here on the client: the server
 * only ever sees the items sealed (one bulk request per vault) and records that an export was
 * made. `readImport` tells the formats apart by their content; KeePass is read in its own module
 * (sdk/transfer/keepass.ts, with kdbxweb), loaded only when a KeePass file is imported.
 */
import { parseBitwardenCsv, parseBitwardenJson } from "./bitwarden";
import { parseCsv } from "./csv";
import { parseLastpassCsv } from "./lastpass";
import { ENCRYPTED_EXPORT, EXPORT_ITEMS, EXPORT_ITEMS_V1, parseOwnExport } from "./export";
import { checkFileSize, importLimits, type LowerLimits } from "./limits";
import { ImportError, type Parsed } from "./types";

export { ImportError, IMPORT_FORMATS, type ImportFile, type ImportFormat, type ImportItem, type LeftOut, type Parsed } from "./types";
export { splitByTopLevel, type PlaceGroup } from "./split";
export { IMPORT_LIMITS, type ImportLimits, type LowerLimits } from "./limits";
export {
  EXPORT_FILE_BYTES,
  EXPORT_FORMATS,
  exportCsv,
  exportEncrypted,
  exportJson,
  isEncryptedExport,
  type ExportFormat,
  type ExportedFile,
  type ExportedItem,
  type ExportedVault,
  type FileLeftOut,
} from "./export";

/** KDBX files start with these 4 bytes (then the KeePass 2 signature). */
const KDBX = [0x03, 0xd9, 0xa2, 0x9a];

export const isKeepass = (bytes: Uint8Array): boolean => KDBX.every((b, i) => bytes[i] === b);
/** A zip (1Password's 1PUX is one, and Bitwarden's export with attachments). */
const isZip = (bytes: Uint8Array): boolean => bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;

/**
 * A file to import, as bytes: a KeePass database (with its `password`, and its `keyFile` if it has
 * one), 1Password's 1PUX, an export of ours (encrypted: with its `password`), Bitwarden's JSON, its
 * zip with attachments, or its CSV, LastPass's CSV, or a generic CSV. What the file may
 * ask of this client is capped (sdk/transfer/limits.ts); `limits` may lower the caps.
 */
export async function readImport(
  bytes: Uint8Array,
  opts: { password?: string; keyFile?: Uint8Array; limits?: LowerLimits } = {},
): Promise<Parsed> {
  const limits = importLimits(opts.limits);
  checkFileSize(bytes, limits);
  if (isKeepass(bytes)) {
    if (opts.password === undefined) throw new ImportError("a KeePass database: give its password");
    const { parseKeepass } = await import("./keepass.js");
    return parseKeepass(bytes, opts.password, opts.keyFile, limits);
  }
  if (isZip(bytes)) {
    const { isBitwardenZip, parseBitwardenZip } = await import("./bitwarden-zip.js");
    if (isBitwardenZip(bytes)) return parseBitwardenZip(bytes, limits);
    const { parseOnePux } = await import("./onepassword.js");
    return parseOnePux(bytes, limits);
  }
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes).replace(/^\uFEFF/, "");
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{")) {
    const format = /"format"\s*:\s*"([^"]+)"/.exec(trimmed.slice(0, 200))?.[1];
    if (format === ENCRYPTED_EXPORT || format === EXPORT_ITEMS || format === EXPORT_ITEMS_V1)
      return parseOwnExport(text, opts.password, limits);
    const doc = parseJsonObject(text);
    if (doc?.encrypted === true) {
      if (doc.passwordProtected === true && opts.password === undefined)
        throw new ImportError("this Bitwarden export is encrypted: give its password");
      const { openBitwardenEncrypted } = await import("./bitwarden-encrypted.js");
      return parseBitwardenJson(await openBitwardenEncrypted(doc, opts.password ?? "", limits), limits);
    }
    return parseBitwardenJson(text, limits);
  }
  const header = trimmed.split(/\r?\n/, 1)[0]!.toLowerCase();
  if (header.includes("login_uri") && header.includes("login_username")) return parseBitwardenCsv(text, limits);
  const columns = header.split(",").map((h) => h.trim());
  if (["url", "extra", "grouping"].every((c) => columns.includes(c))) return parseLastpassCsv(text, limits);
  if (header.includes(",")) return parseCsv(text, limits);
  throw new ImportError(
    "not a file this client can import (KeePass, 1Password 1PUX, Bitwarden JSON, zip or CSV, LastPass CSV, a CSV, or an export of this service)",
  );
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
