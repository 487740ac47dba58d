/**
 * Bitwarden's ".zip (with attachments)" export: a zip its clients assemble holding `data.json`, the
 * JSON export in the clear (`encrypted: false`, read by parseBitwardenJson), and each item's files
 * under `attachments/<item id>/<file name>`. Every entry is inflated piece by piece as the zip is
 * read, and what it inflates to is counted against the import's caps (sdk/transfer/limits.ts), as
 * a 1PUX's is. A file whose item the export does not hold is listed as skipped.
 */
import { Unzip, strFromU8 } from "fflate";
import { parseBitwardenJson } from "./bitwarden";
import { importLimits, type ImportLimits } from "./limits";
import { ZIP_PIECE, zipEntries } from "./zip";
import { ImportError, type ImportFile, type Parsed } from "./types";

const DATA = "data.json";
const ATTACHMENTS = /^attachments\/([^/]+)\/(.+)$/;
/** Whether a zip is Bitwarden's export with attachments: it holds `data.json` (a 1PUX holds `export.data`). */
export function isBitwardenZip(file: Uint8Array): boolean {
  let found = false;
  const unzip = new Unzip((entry) => {
    if (entry.name === DATA) found = true;
  });
  try {
    for (let at = 0; at < file.length && !found; at += ZIP_PIECE)
      unzip.push(file.subarray(at, at + ZIP_PIECE), at + ZIP_PIECE >= file.length);
  } catch {
    return false;
  }
  return found;
}

export function parseBitwardenZip(file: Uint8Array, limits: ImportLimits = importLimits()): Parsed {
  const found = zipEntries(
    file,
    (name) => name === DATA || (ATTACHMENTS.test(name) && !name.endsWith("/")),
    limits,
    "the Bitwarden export",
  );
  const data = found.get(DATA);
  if (!data) throw new ImportError("not a Bitwarden export with attachments (no data.json in it)");
  const files = new Map<string, ImportFile[]>();
  for (const [path, bytes] of found) {
    const m = ATTACHMENTS.exec(path);
    if (!m) continue;
    files.set(m[1]!, [...(files.get(m[1]!) ?? []), { name: m[2]!, data: bytes }]);
  }
  const parsed = parseBitwardenJson(strFromU8(data), limits, files);
  parsed.format = "bitwarden-zip";
  return parsed;
}
