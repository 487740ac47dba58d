// What a client derives its master key with: the floor and caps every derivation is checked against.
// Design: docs/design/kdf-bounds.md
import { fromBase64 } from "../encoding";
import { SecurityError } from "../errors";

export interface Argon2idParams {
  algorithm: "argon2id";
  salt: string;
  iterations: number;
  memoryKiB: number;
  parallelism: number;
}

export interface Pbkdf2Params {
  algorithm: "pbkdf2-sha256";
  salt: string;
  iterations: number;
}

export type KdfParams = Argon2idParams | Pbkdf2Params;

/** Argon2id as Bitwarden sets it by default: 3 passes over 64 MiB in 4 lanes. */
export const DEFAULT_ARGON2ID = { algorithm: "argon2id", iterations: 3, memoryKiB: 65536, parallelism: 4 } as const;
/** The WebCrypto-only fallback, at the contract's floor (OWASP's figure for PBKDF2-SHA256). */
export const DEFAULT_PBKDF2 = { algorithm: "pbkdf2-sha256", iterations: 600_000 } as const;

export const KDF_FLOOR = {
  argon2id: { memoryKiB: 65_536, memoryPassesKiB: 3 * 65_536, iterations: 2 },
  "pbkdf2-sha256": { iterations: 600_000 },
} as const;

export const KDF_CAPS = {
  argon2id: { memoryKiB: 1_048_576, iterations: 10, parallelism: 16 },
  "pbkdf2-sha256": { iterations: 2_000_000 },
  saltBytes: { min: 16, max: 64 },
} as const;

const isInt = (v: unknown, min: number, max: number): v is number =>
  typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= max;

/**
 * Parameters outside the caps or of an unknown form: `KDF_UNSUPPORTED`; below the floor:
 * `KDF_TOO_WEAK`. Nothing is derived from a password with either.
 */
export function checkKdf(kdf: KdfParams): void {
  const unsupported = (why: string) => new SecurityError("KDF_UNSUPPORTED", `refusing to derive your key with these parameters: ${why}`);
  const tooWeak = (why: string) =>
    new SecurityError(
      "KDF_TOO_WEAK",
      `refusing to derive your key with parameters below this client's floor (${why}): a server could crack what would be sent. ` +
        "If you registered with them elsewhere, change your master password there with stronger parameters.",
    );
  if (typeof kdf !== "object" || kdf === null) throw unsupported("no parameters");
  let salt: Uint8Array;
  try {
    salt = fromBase64(kdf.salt);
  } catch {
    throw unsupported("the salt is not base64");
  }
  if (salt.length < KDF_CAPS.saltBytes.min || salt.length > KDF_CAPS.saltBytes.max)
    throw unsupported(`the salt is ${salt.length} bytes, not ${KDF_CAPS.saltBytes.min} to ${KDF_CAPS.saltBytes.max}`);
  if (kdf.algorithm === "argon2id") {
    const caps = KDF_CAPS.argon2id;
    if (!isInt(kdf.memoryKiB, 1, caps.memoryKiB)) throw unsupported(`Argon2id memory must be at most ${caps.memoryKiB} KiB (1 GiB)`);
    if (!isInt(kdf.iterations, 1, caps.iterations)) throw unsupported(`Argon2id passes must be at most ${caps.iterations}`);
    if (!isInt(kdf.parallelism, 1, caps.parallelism)) throw unsupported(`Argon2id lanes must be 1 to ${caps.parallelism}`);
    const floor = KDF_FLOOR.argon2id;
    if (kdf.memoryKiB < floor.memoryKiB) throw tooWeak(`Argon2id over ${kdf.memoryKiB} KiB; at least ${floor.memoryKiB} KiB`);
    if (kdf.iterations < floor.iterations || kdf.memoryKiB * kdf.iterations < floor.memoryPassesKiB)
      throw tooWeak(`Argon2id with ${kdf.iterations} passes over ${kdf.memoryKiB} KiB; at least 3 passes over 64 MiB`);
    return;
  }
  if (kdf.algorithm === "pbkdf2-sha256") {
    if (!isInt(kdf.iterations, 1, KDF_CAPS["pbkdf2-sha256"].iterations))
      throw unsupported(`PBKDF2 iterations must be at most ${KDF_CAPS["pbkdf2-sha256"].iterations}`);
    if (kdf.iterations < KDF_FLOOR["pbkdf2-sha256"].iterations)
      throw tooWeak(`PBKDF2-SHA256 with ${kdf.iterations} iterations; at least ${KDF_FLOOR["pbkdf2-sha256"].iterations}`);
    return;
  }
  throw unsupported(`unknown algorithm ${String((kdf as { algorithm?: unknown }).algorithm)}`);
}

/** The parameters with only their algorithm's fields, in a fixed order: what is compared, remembered and signed. */
export function kdfFields(kdf: KdfParams): KdfParams {
  return kdf.algorithm === "argon2id"
    ? { algorithm: kdf.algorithm, salt: kdf.salt, iterations: kdf.iterations, memoryKiB: kdf.memoryKiB, parallelism: kdf.parallelism }
    : { algorithm: kdf.algorithm, salt: kdf.salt, iterations: kdf.iterations };
}

export const sameKdf = (a: KdfParams, b: KdfParams): boolean => JSON.stringify(kdfFields(a)) === JSON.stringify(kdfFields(b));
