/**
 * What a file to import may ask of this client. The file is not trusted (it may come from anyone,
 * and the web vault reads it in a browser tab): every cost it controls is capped, and a file past a
 * cap is refused before the work, with an ImportError naming the cap. The caps (user's view:
 * docs/user/import-export.md):
 *
 * - its size, and the entries (items, rows) it holds: a vault's default item limit;
 * - what its compressed parts inflate to (a KeePass database's XML and attachments, a 1PUX's data),
 *   counted as they inflate, so that a small file that expands without end is stopped early;
 * - the key derivation it asks for (KeePass's AES-KDF rounds and Argon2; Bitwarden's PBKDF2 and
 *   Argon2id), read from the file and checked before anything is derived.
 *
 * A caller may lower them (`readImport(bytes, { limits })`), never raise them.
 */
import { Gunzip } from "fflate";
import { ImportError } from "./types";

const MiB = 1024 * 1024;

export interface ImportLimits {
  /** The largest file read, of any format. */
  fileBytes: number;
  /** Entries (items, rows) one file may hold. */
  entries: number;
  /** What a file's compressed parts may inflate to, all together. */
  inflatedBytes: number;
  /** KeePass: AES-KDF rounds (KDBX 3's transform rounds, KDBX 4's AES-KDF). */
  aesKdfRounds: number;
  /** KeePass KDBX 4: Argon2d and Argon2id, each bound and their product (memory times passes). */
  argon2: { memoryKiB: number; iterations: number; parallelism: number; memoryPassesKiB: number };
  /** Bitwarden's password-protected export: PBKDF2-SHA256 and Argon2id as Bitwarden's own clients allow them. */
  bitwarden: { pbkdf2Iterations: number; argon2MemoryMiB: number; argon2Iterations: number; argon2Parallelism: number };
}

/** Caps to lower: any of them, the key derivations' each on its own. */
export type LowerLimits = Partial<Omit<ImportLimits, "argon2" | "bitwarden">> & {
  argon2?: Partial<ImportLimits["argon2"]>;
  bitwarden?: Partial<ImportLimits["bitwarden"]>;
};

export const IMPORT_LIMITS: Readonly<ImportLimits> = Object.freeze({
  fileBytes: 64 * MiB,
  // A vault's VAULT_MAX_ITEMS at its default: a file with more would not fit in one vault.
  entries: 50_000,
  inflatedBytes: 128 * MiB,
  // About 7 s in Node on this project's machines, 5 to 15 s in a browser; KeePass's "1 second"
  // setting on a fast desktop asks for tens of millions.
  aesKdfRounds: 100_000_000,
  // As the SDK's own derivation allows each (protocol/crypto/kdf.ts), with more passes (KeePassXC
  // sets them by time), and at most 16 GiB of memory passes (1 GiB 16 times; 64 MiB 100 times).
  argon2: { memoryKiB: 1024 * 1024, iterations: 100, parallelism: 16, memoryPassesKiB: 16 * 1024 * 1024 },
  bitwarden: { pbkdf2Iterations: 2_000_000, argon2MemoryMiB: 1024, argon2Iterations: 10, argon2Parallelism: 16 },
});

const lower = (cap: number, given: number | undefined): number =>
  typeof given === "number" && Number.isFinite(given) && given >= 0 ? Math.min(cap, given) : cap;

/** The caps, each lowered where `given` asks for less (never raised). */
export function importLimits(given: LowerLimits = {}): ImportLimits {
  const d = IMPORT_LIMITS;
  const a = given.argon2 ?? {};
  const b = given.bitwarden ?? {};
  return {
    fileBytes: lower(d.fileBytes, given.fileBytes),
    entries: lower(d.entries, given.entries),
    inflatedBytes: lower(d.inflatedBytes, given.inflatedBytes),
    aesKdfRounds: lower(d.aesKdfRounds, given.aesKdfRounds),
    argon2: {
      memoryKiB: lower(d.argon2.memoryKiB, a.memoryKiB),
      iterations: lower(d.argon2.iterations, a.iterations),
      parallelism: lower(d.argon2.parallelism, a.parallelism),
      memoryPassesKiB: lower(d.argon2.memoryPassesKiB, a.memoryPassesKiB),
    },
    bitwarden: {
      pbkdf2Iterations: lower(d.bitwarden.pbkdf2Iterations, b.pbkdf2Iterations),
      argon2MemoryMiB: lower(d.bitwarden.argon2MemoryMiB, b.argon2MemoryMiB),
      argon2Iterations: lower(d.bitwarden.argon2Iterations, b.argon2Iterations),
      argon2Parallelism: lower(d.bitwarden.argon2Parallelism, b.argon2Parallelism),
    },
  };
}

/** A size for people: "64 MiB", "512 KiB", "100 bytes". */
export function sizeText(bytes: number): string {
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes.toLocaleString("en-US")} bytes`;
}

export function checkFileSize(bytes: Uint8Array, limits: ImportLimits): void {
  if (bytes.length > limits.fileBytes)
    throw new ImportError(`the file is larger than ${sizeText(limits.fileBytes)}, the most this client imports at once: split it`);
}

/** Refuses a file of more than `limits.entries` entries (`count` of them, or at least that many). */
export function checkEntries(count: number, limits: ImportLimits): void {
  if (count > limits.entries)
    throw new ImportError(
      `the file holds more than ${limits.entries.toLocaleString("en-US")} entries, the most one import (and, by default, one vault) takes: split it`,
    );
}

/** What a file's compressed parts have inflated to so far, refused past `limits.inflatedBytes`. */
export class Inflation {
  private total = 0;
  constructor(private readonly limit: number) {}

  add(bytes: number, what: string): void {
    this.total += bytes;
    if (this.total > this.limit)
      throw new ImportError(
        `${what} inflates past ${sizeText(this.limit)}, the most this client inflates from one file (a small file that expands without end is refused)`,
      );
  }
}

/** Pieces pushed to an inflater at a time: each inflates to at most about 1,000 times its size before it is counted. */
const PIECE = 16 * 1024;

/** Inflates gzip data piece by piece, counting what it inflates to against `inflation` (and keeping none of it). */
export function gunzipCounted(data: Uint8Array, inflation: Inflation, what: string): void {
  const gunzip = new Gunzip((chunk) => inflation.add(chunk.length, what));
  try {
    for (let at = 0; at < data.length; at += PIECE) gunzip.push(data.subarray(at, at + PIECE), at + PIECE >= data.length);
  } catch (err) {
    if (err instanceof ImportError) throw err;
    throw new ImportError(`${what} does not inflate (${(err as Error).message})`);
  }
}
