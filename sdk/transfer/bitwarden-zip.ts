/**
 * Bitwarden's ".zip (with attachments)" export: a zip its clients assemble holding `data.json`, the
 * JSON export in the clear (`encrypted: false`, read by parseBitwardenJson), and each item's files
 * under `attachments/<item id>/<file name>`. Every entry is inflated piece by piece as the zip is
 * read, and what it inflates to is counted against the import's caps (sdk/transfer/limits.ts), as
 * a 1PUX's is. A file whose item the export does not hold is listed as skipped.
 */
import { Unzip, UnzipInflate, strFromU8 } from "fflate";
import { parseBitwardenJson } from "./bitwarden";
import { importLimits, Inflation, type ImportLimits } from "./limits";
import { ImportError, type ImportFile, type Parsed } from "./types";

const DATA = "data.json";
const ATTACHMENTS = /^attachments\/([^/]+)\/(.+)$/;
/** Zip bytes pushed to the unzipper at a time: each inflates to at most about 1,000 times its size before it is counted. */
const PIECE = 16 * 1024;

/** The zip's entries that `wanted` names, inflated within the caps; their names as the zip gives them. */
function entries(file: Uint8Array, wanted: (name: string) => boolean, limits: ImportLimits): Map<string, Uint8Array> {
  const inflation = new Inflation(limits.inflatedBytes);
  const parts = new Map<string, Uint8Array[]>();
  let failure: Error | undefined;
  const unzip = new Unzip((entry) => {
    if (!wanted(entry.name) || parts.has(entry.name)) return;
    const pieces: Uint8Array[] = [];
    parts.set(entry.name, pieces);
    entry.ondata = (err, chunk) => {
      if (err) failure ??= err;
      else if (chunk) {
        inflation.add(chunk.length, "the Bitwarden export");
        pieces.push(chunk);
      }
    };
    entry.start();
  });
  unzip.register(UnzipInflate);
  try {
    for (let at = 0; at < file.length && !failure; at += PIECE) unzip.push(file.subarray(at, at + PIECE), at + PIECE >= file.length);
  } catch (err) {
    if (err instanceof ImportError) throw err;
    failure = err as Error;
  }
  if (failure) throw new ImportError(`not a zip this client can read (${failure.message})`);
  return new Map([...parts].map(([name, pieces]) => [name, joined(pieces)]));
}

function joined(pieces: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  pieces.reduce((offset, p) => (out.set(p, offset), offset + p.length), 0);
  return out;
}

/** Whether a zip is Bitwarden's export with attachments: it holds `data.json` (a 1PUX holds `export.data`). */
export function isBitwardenZip(file: Uint8Array): boolean {
  let found = false;
  const unzip = new Unzip((entry) => {
    if (entry.name === DATA) found = true;
  });
  try {
    for (let at = 0; at < file.length && !found; at += PIECE) unzip.push(file.subarray(at, at + PIECE), at + PIECE >= file.length);
  } catch {
    return false;
  }
  return found;
}

export function parseBitwardenZip(file: Uint8Array, limits: ImportLimits = importLimits()): Parsed {
  const found = entries(file, (name) => name === DATA || (ATTACHMENTS.test(name) && !name.endsWith("/")), limits);
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
