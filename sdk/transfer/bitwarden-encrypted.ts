/**
 * Bitwarden's password-protected JSON export (`encrypted: true`, `passwordProtected: true`):
 * `data` is a Bitwarden EncString of type 2 (`2.<iv>|<ciphertext>|<mac>`, base64 parts: AES-256-CBC
 * with HMAC-SHA256 over iv and ciphertext, encrypt-then-MAC) under a key made from the export's
 * password as Bitwarden makes it: PBKDF2-SHA256 over the UTF-8 salt (`kdfType` 0), or Argon2id
 * over the SHA-256 of the salt (`kdfType` 1, `kdfMemory` in MiB), 32 bytes, stretched with
 * HKDF-Expand (SHA-256) into an encryption key (info `enc`) and a MAC key (info `mac`). The MAC
 * is checked before anything is decrypted; the cost the file asks for is bounded as the SDK's own.
 * An export encrypted with a Bitwarden account's key (not a password) cannot be opened outside
 * Bitwarden.
 */
import { fromBase64, fromUtf8, utf8, type Bytes } from "../../protocol/encoding";
import { importLimits, type ImportLimits } from "./limits";
import { ImportError } from "./types";

const subtle = globalThis.crypto.subtle;
const whole = (v: number, min: number, max: number) => Number.isSafeInteger(v) && v >= min && v <= max;

async function hmac(key: Bytes, data: Bytes): Promise<Bytes> {
  const k = await subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await subtle.sign("HMAC", k, data));
}

/** HKDF-Expand (RFC 5869) with SHA-256, one block: what Bitwarden stretches a password's key with. */
const expand = (prk: Bytes, info: string): Promise<Bytes> => hmac(prk, new Uint8Array([...utf8(info), 1]));

async function passwordKey(password: string, doc: Record<string, unknown>, limits: ImportLimits): Promise<Bytes> {
  const salt = typeof doc.salt === "string" ? doc.salt : "";
  if (!salt) throw new ImportError("the Bitwarden export has no salt");
  const caps = limits.bitwarden;
  if (doc.kdfType === 0) {
    const iterations = typeof doc.kdfIterations === "number" ? doc.kdfIterations : NaN;
    if (!whole(iterations, 1, caps.pbkdf2Iterations))
      throw new ImportError(
        `the Bitwarden export asks for ${String(doc.kdfIterations)} PBKDF2 iterations: at most ${caps.pbkdf2Iterations}`,
      );
    const k = await subtle.importKey("raw", utf8(password), "PBKDF2", false, ["deriveBits"]);
    return new Uint8Array(await subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: utf8(salt), iterations }, k, 256));
  }
  if (doc.kdfType === 1) {
    const [iterations, memory, parallelism] = [doc.kdfIterations, doc.kdfMemory, doc.kdfParallelism].map((v) =>
      typeof v === "number" ? v : NaN,
    ) as [number, number, number];
    if (
      !whole(iterations, 1, caps.argon2Iterations) ||
      !whole(memory, 1, caps.argon2MemoryMiB) ||
      !whole(parallelism, 1, caps.argon2Parallelism)
    )
      throw new ImportError(
        `the Bitwarden export asks for Argon2id over ${String(doc.kdfMemory)} MiB, ${String(doc.kdfIterations)} passes, ` +
          `${String(doc.kdfParallelism)} lanes: this client runs 1 to ${caps.argon2MemoryMiB} MiB, 1 to ${caps.argon2Iterations} passes, ` +
          `1 to ${caps.argon2Parallelism} lanes (as Bitwarden allows)`,
      );
    const { argon2id } = await import("../../protocol/crypto/argon2.js");
    const saltHash = new Uint8Array(await subtle.digest("SHA-256", utf8(salt)));
    const out = await argon2id({
      password: utf8(password),
      salt: saltHash,
      iterations,
      memorySize: memory * 1024,
      parallelism,
      hashLength: 32,
      outputType: "binary",
    });
    return new Uint8Array(out);
  }
  throw new ImportError(`a Bitwarden key derivation this client does not know (kdfType ${String(doc.kdfType)})`);
}

/** Opens a type-2 EncString: refused (ImportError) unless its MAC verifies under `mac`. */
async function openEncString(text: unknown, enc: Bytes, mac: Bytes): Promise<Bytes> {
  const m = typeof text === "string" ? /^2\.([^|]+)\|([^|]+)\|([^|]+)$/.exec(text) : null;
  if (!m) throw new ImportError("the Bitwarden export's data is not an encrypted string of the form 2.iv|data|mac");
  const [iv, ct, tag] = [fromBase64(m[1]!), fromBase64(m[2]!), fromBase64(m[3]!)];
  const expected = await hmac(mac, new Uint8Array([...iv, ...ct]));
  if (expected.length !== tag.length || expected.some((b, i) => b !== tag[i]))
    throw new ImportError("the password is wrong, or the Bitwarden export was altered");
  const k = await subtle.importKey("raw", enc, "AES-CBC", false, ["decrypt"]);
  return new Uint8Array(await subtle.decrypt({ name: "AES-CBC", iv }, k, ct));
}

/** The unencrypted JSON export inside a password-protected one. */
export async function openBitwardenEncrypted(
  doc: Record<string, unknown>,
  password: string,
  limits: ImportLimits = importLimits(),
): Promise<string> {
  if (doc.passwordProtected !== true)
    throw new ImportError(
      "this Bitwarden export is encrypted with a Bitwarden account's key: export it again with a password (or as plain JSON)",
    );
  const key = await passwordKey(password, doc, limits);
  const [enc, mac] = await Promise.all([expand(key, "enc"), expand(key, "mac")]);
  if (doc.encKeyValidation_DO_NOT_EDIT !== undefined) await openEncString(doc.encKeyValidation_DO_NOT_EDIT, enc, mac);
  return fromUtf8(await openEncString(doc.data, enc, mac));
}
