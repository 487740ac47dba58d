/**
 * A KeePass database loaded within the import's caps (sdk/transfer/limits.ts). kdbxweb reads a
 * file as it asks: it derives the key with whatever AES-KDF rounds or Argon2 cost the header
 * names, inflates the payload and each compressed attachment at once into a buffer of the size the
 * file claims, and builds every entry. Here, before each of those steps:
 *
 * 1. the header's key derivation is read and checked before anything is derived;
 * 2. the decrypted payload (and, in KDBX 3, each compressed attachment) is inflated piece by
 *    piece and counted, before kdbxweb inflates it;
 * 3. the entries are counted in the parsed XML, before kdbxweb builds them.
 *
 * Steps 2 and 3 run inside kdbxweb's own load, on the one load object made here: its steps
 * `decryptData`, `trimStartBytesV3` and `setProtectedValues` are wrapped (not kdbxweb's classes, for
 * anyone else). A kdbxweb without them is refused loudly rather than read without the caps.
 */
import * as kdbxweb from "kdbxweb";
import { ImportError } from "./types";
import { checkEntries, gunzipCounted, Inflation, type ImportLimits } from "./limits";

/** A 64-bit count from a KeePass header (kdbxweb's Int64 throws past 2^53: counted here without it). */
function count(v: unknown): number {
  if (v instanceof kdbxweb.Int64) return v.hi * 0x1_0000_0000 + v.lo;
  return typeof v === "number" ? v : NaN;
}

const LOWER_IT = "lower it in KeePass (Database settings, Security) and export again";
const thousands = (n: number) => n.toLocaleString("en-US");

function checkAesRounds(rounds: number, limits: ImportLimits): void {
  if (rounds > limits.aesKdfRounds)
    throw new ImportError(
      `the database asks for ${thousands(rounds)} AES-KDF rounds, more than the ${thousands(limits.aesKdfRounds)} this client runs: ${LOWER_IT}`,
    );
}

function checkArgon2(kdf: kdbxweb.VarDictionary, limits: ImportLimits): void {
  const memoryKiB = count(kdf.get("M")) / 1024;
  const iterations = count(kdf.get("I"));
  const parallelism = count(kdf.get("P"));
  const caps = limits.argon2;
  if (
    memoryKiB > caps.memoryKiB ||
    iterations > caps.iterations ||
    parallelism > caps.parallelism ||
    memoryKiB * iterations > caps.memoryPassesKiB
  )
    throw new ImportError(
      `the database asks for Argon2 over ${thousands(memoryKiB)} KiB, ${thousands(iterations)} passes, ${thousands(parallelism)} lanes; ` +
        `this client runs at most ${thousands(caps.memoryKiB)} KiB, ${caps.iterations} passes, ${caps.parallelism} lanes ` +
        `and ${thousands(caps.memoryPassesKiB)} KiB of memory passes (memory times passes): ${LOWER_IT}`,
    );
}

/** Reads `file`'s header and refuses a key derivation past the caps, before anything is derived. */
export function checkKeepassHeader(file: ArrayBuffer, limits: ImportLimits): void {
  let header: kdbxweb.KdbxHeader;
  try {
    header = kdbxweb.KdbxHeader.read(new kdbxweb.BinaryStream(file), new kdbxweb.KdbxContext({ kdbx: new kdbxweb.Kdbx() }));
  } catch (err) {
    throw new ImportError(`not a KeePass database this client can read (${(err as Error).message})`);
  }
  if (header.versionMajor < 4) return checkAesRounds(count(header.keyEncryptionRounds), limits);
  const kdf = header.kdfParameters;
  const id = kdf?.get("$UUID");
  const kdfId = id instanceof ArrayBuffer ? kdbxweb.ByteUtils.bytesToBase64(id) : "";
  if (kdf && kdfId === kdbxweb.Consts.KdfId.Aes) checkAesRounds(count(kdf.get("R")), limits);
  else if (kdf && (kdfId === kdbxweb.Consts.KdfId.Argon2d || kdfId === kdbxweb.Consts.KdfId.Argon2id)) checkArgon2(kdf, limits);
  // Any other key derivation kdbxweb refuses itself, before deriving.
}

/** KDBX 3's payload inside its hashed blocks (index, SHA-256, length, data; a block of length 0 ends it); the hashes are kdbxweb's to check. */
function hashedBlocksPayload(data: Uint8Array): Uint8Array {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const parts: Uint8Array[] = [];
  let total = 0;
  for (let at = 0; at + 40 <= data.length;) {
    const length = view.getUint32(at + 36, true);
    if (length === 0 || at + 40 + length > data.length) break;
    parts.push(data.subarray(at + 40, at + 40 + length));
    total += length;
    at += 40 + length;
  }
  const out = new Uint8Array(total);
  parts.reduce((offset, p) => (out.set(p, offset), offset + p.length), 0);
  return out;
}

/** What is read here of the parsed XML (a DOM Document: the browser's, or xmldom's in Node). */
interface XmlElement {
  nodeName: string;
  parentNode: XmlElement | null;
  textContent: string | null;
  getAttribute(name: string): string | null;
}
interface XmlDocument {
  getElementsByTagName(name: string): { length: number; item(i: number): XmlElement | null };
}

/** The entries to import (not their kept revisions) and each compressed attachment of the parsed XML, within the caps. */
function checkXml(xml: XmlDocument | undefined, inflation: Inflation, limits: ImportLimits): void {
  if (!xml) return;
  const entries = xml.getElementsByTagName("Entry");
  let current = 0;
  for (let i = 0; i < entries.length; i++) if (entries.item(i)?.parentNode?.nodeName === "Group") current++;
  checkEntries(current, limits);
  const binaries = xml.getElementsByTagName("Binary");
  for (let i = 0; i < binaries.length; i++) {
    const node = binaries.item(i)!;
    if ((node.getAttribute("Compressed") ?? "").toLowerCase() !== "true" || !node.textContent) continue;
    gunzipCounted(kdbxweb.ByteUtils.base64ToBytes(node.textContent), inflation, "an attachment of the database");
  }
}

/** The steps of kdbxweb's load (KdbxFormat's own, private to it) that the caps run before. */
interface LoadSteps {
  decryptData(data: ArrayBuffer, key: ArrayBuffer): Promise<ArrayBuffer>;
  trimStartBytesV3(data: ArrayBuffer): ArrayBuffer;
  setProtectedValues(): Promise<void>;
}

/** kdbxweb's load of `file`, with the caps checked before each costly step. */
export function loadKeepass(file: ArrayBuffer, credentials: kdbxweb.Credentials, limits: ImportLimits): Promise<kdbxweb.Kdbx> {
  checkKeepassHeader(file, limits);
  const kdbx = new kdbxweb.Kdbx();
  kdbx.credentials = credentials;
  const format = new kdbxweb.KdbxFormat(kdbx);
  const steps = format as unknown as LoadSteps;
  for (const step of ["decryptData", "trimStartBytesV3", "setProtectedValues"] as const)
    if (typeof steps[step] !== "function") throw new Error(`kdbxweb's load has no step ${step}: the KeePass import cannot cap it`);
  const inflation = new Inflation(limits.inflatedBytes);
  const gzipped = () => kdbx.header.compression === kdbxweb.Consts.CompressionAlgorithm.GZip;
  const [decrypt, trim, protect] = [
    steps.decryptData.bind(format),
    steps.trimStartBytesV3.bind(format),
    steps.setProtectedValues.bind(format),
  ];
  // KDBX 4: the decrypted payload is the gzip stream.
  steps.decryptData = async (data, key) => {
    const out = await decrypt(data, key);
    if (kdbx.header.versionMajor >= 4 && gzipped()) gunzipCounted(new Uint8Array(out), inflation, "the database");
    return out;
  };
  // KDBX 3: the gzip stream in hashed blocks, once the key is known to be right.
  steps.trimStartBytesV3 = (data) => {
    const out = trim(data);
    if (gzipped()) gunzipCounted(hashedBlocksPayload(new Uint8Array(out)), inflation, "the database");
    return out;
  };
  steps.setProtectedValues = () => {
    checkXml(kdbx.xml as unknown as XmlDocument | undefined, inflation, limits);
    return protect();
  };
  return format.load(file);
}
