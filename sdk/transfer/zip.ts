/**
 * Zip files an import reads (a 1PUX, Bitwarden's export with attachments): the entries wanted,
 * each inflated piece by piece as the zip is read and counted against the import's caps
 * (sdk/transfer/limits.ts). An entry's size in the zip's headers is the file's word, and an
 * inflater trusts it: what it inflates to is counted as it comes.
 */
import { Unzip, UnzipInflate } from "fflate";
import { Inflation, type ImportLimits } from "./limits";
import { ImportError } from "./types";

/** Zip bytes pushed to the unzipper at a time: each inflates to at most about 1,000 times its size before it is counted. */
export const ZIP_PIECE = 16 * 1024;

/** The zip's entries that `wanted` names (the first of each name), inflated within the caps; `what` names the file in a refusal. */
export function zipEntries(
  file: Uint8Array,
  wanted: (name: string) => boolean,
  limits: ImportLimits,
  what: string,
): Map<string, Uint8Array> {
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
        inflation.add(chunk.length, what);
        pieces.push(chunk);
      }
    };
    entry.start();
  });
  unzip.register(UnzipInflate);
  try {
    for (let at = 0; at < file.length && !failure; at += ZIP_PIECE)
      unzip.push(file.subarray(at, at + ZIP_PIECE), at + ZIP_PIECE >= file.length);
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
