/**
 * KeePass databases made with kdbxweb, the format's library, for import tests: `keepassFile`, a
 * KDBX 4 database (Argon2id) with a nested group's entry with every kind of field, an entry with an
 * attachment, one in the recycle bin; `keepassAsking`, a small database whose header asks for the
 * key derivation a test chooses (as a file made elsewhere would), and whose contents inflate as it
 * chooses.
 */
import { createHash } from "node:crypto";
import { gzipSync } from "fflate";
import * as kdbxweb from "kdbxweb";
import { argon2id } from "hash-wasm";

function useArgon2(): void {
  kdbxweb.CryptoEngine.setArgon2Impl(async (pw, salt, memory, iterations, length, parallelism) => {
    const out = await argon2id({
      password: new Uint8Array(pw),
      salt: new Uint8Array(salt),
      memorySize: memory,
      iterations,
      hashLength: length,
      parallelism,
      outputType: "binary",
    });
    return out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength) as ArrayBuffer;
  });
}

export async function keepassFile(password: string): Promise<Uint8Array> {
  useArgon2();
  const db = kdbxweb.Kdbx.create(new kdbxweb.Credentials(kdbxweb.ProtectedValue.fromString(password)), "Team");
  db.setVersion(4);
  db.setKdf(kdbxweb.Consts.KdfId.Argon2id);
  const root = db.getDefaultGroup();
  const servers = db.createGroup(root, "Servers");
  const entry = db.createEntry(servers);
  entry.fields.set("Title", "db1");
  entry.fields.set("UserName", "postgres");
  entry.fields.set("Password", kdbxweb.ProtectedValue.fromString("p0stgres!"));
  entry.fields.set("URL", "https://db1.example");
  entry.fields.set("Notes", "primary\nreplica on db2");
  entry.fields.set("otp", "otpauth://totp/db1?secret=JBSWY3DPEHPK3PXP");
  entry.fields.set("Root PIN", kdbxweb.ProtectedValue.fromString("9999"));
  entry.fields.set("Rack", "B4");
  const withFile = db.createEntry(root);
  withFile.fields.set("Title", "scan");
  const pdf = await db.createBinary(new TextEncoder().encode("%PDF-1.4").buffer as ArrayBuffer);
  withFile.binaries.set("passport.pdf", pdf as unknown as kdbxweb.KdbxBinary);
  db.createRecycleBin();
  const binned = db.createEntry(root);
  binned.fields.set("Title", "old");
  db.remove(binned);
  return new Uint8Array(await db.save());
}

export interface Asking {
  version: 3 | 4;
  /** KDBX 4's key derivation (KDBX 3 has AES-KDF only). */
  kdf?: "aes" | "argon2id";
  /** AES-KDF rounds, and Argon2's memory (KiB), passes and lanes, as the header will name them. */
  rounds?: number;
  memoryKiB?: number;
  iterations?: number;
  parallelism?: number;
  /** Entries (each with a title), and the text of the first one's notes. */
  entries?: number;
  notes?: string;
  /** KDBX 3: an attachment of the first entry, kept in the XML gzip-compressed (as KeePass 2 writes them). */
  compressedAttachment?: Uint8Array;
}

const int64 = (n: number) => new kdbxweb.Int64(n % 0x1_0000_0000, Math.floor(n / 0x1_0000_0000));

/** KDBX 3 keeps attachments in the XML; kdbxweb writes them plain: these are written compressed. */
function compressAttachments(db: kdbxweb.Kdbx): void {
  const build = db.buildXml.bind(db);
  db.buildXml = (ctx) => {
    build(ctx);
    const binaries = db.xml!.getElementsByTagName("Binary");
    for (let i = 0; i < binaries.length; i++) {
      const node = binaries.item(i)!;
      if (node.parentNode?.nodeName !== "Binaries" || !node.textContent) continue;
      node.textContent = kdbxweb.ByteUtils.bytesToBase64(gzipSync(kdbxweb.ByteUtils.base64ToBytes(node.textContent)));
      node.setAttribute("Compressed", "True");
    }
  };
}

/**
 * A database made at kdbxweb's cheap default cost, then its header changed to ask for `asking`'s
 * (its SHA-256 in KDBX 4 made anew, so that kdbxweb reads on to the derivation): what kdbxweb
 * would derive a key with if nothing capped it. The password is right; the key it derives is not
 * the one the file was encrypted with, so past the derivation kdbxweb refuses it as a wrong key.
 */
export async function keepassAsking(password: string, asking: Asking): Promise<Uint8Array> {
  useArgon2();
  const db = kdbxweb.Kdbx.create(new kdbxweb.Credentials(kdbxweb.ProtectedValue.fromString(password)), "Asking");
  db.setVersion(asking.version);
  if (asking.version === 4) db.setKdf(asking.kdf === "aes" ? kdbxweb.Consts.KdfId.Aes : kdbxweb.Consts.KdfId.Argon2id);
  for (let i = 0; i < (asking.entries ?? 1); i++) {
    const entry = db.createEntry(db.getDefaultGroup());
    entry.fields.set("Title", `entry ${i}`);
    if (i === 0 && asking.notes !== undefined) entry.fields.set("Notes", asking.notes);
    if (i === 0 && asking.compressedAttachment)
      entry.binaries.set("big.bin", (await db.createBinary(asking.compressedAttachment.slice().buffer)) as unknown as kdbxweb.KdbxBinary);
  }
  if (asking.compressedAttachment) compressAttachments(db);
  const saved = await db.save();
  const costs = [asking.rounds, asking.memoryKiB, asking.iterations, asking.parallelism];
  if (costs.every((c) => c === undefined)) return new Uint8Array(saved);
  const header = kdbxweb.KdbxHeader.read(new kdbxweb.BinaryStream(saved), new kdbxweb.KdbxContext({ kdbx: new kdbxweb.Kdbx() }));
  const oldEnd = header.endPos!;
  const { UInt32, UInt64 } = kdbxweb.VarDictionary.ValueType;
  if (asking.version === 3 && asking.rounds !== undefined) header.keyEncryptionRounds = asking.rounds;
  const kdf = header.kdfParameters;
  if (kdf && asking.rounds !== undefined) kdf.set("R", UInt64, int64(asking.rounds));
  if (kdf && asking.memoryKiB !== undefined) kdf.set("M", UInt64, int64(asking.memoryKiB * 1024));
  if (kdf && asking.iterations !== undefined) kdf.set("I", UInt64, int64(asking.iterations));
  if (kdf && asking.parallelism !== undefined) kdf.set("P", UInt32, asking.parallelism);
  const stm = new kdbxweb.BinaryStream();
  header.write(stm);
  const head = new Uint8Array(stm.getWrittenBytes());
  const rest = new Uint8Array(saved).subarray(oldEnd + (asking.version === 4 ? 32 : 0));
  const hash = asking.version === 4 ? createHash("sha256").update(head).digest() : new Uint8Array(0);
  return new Uint8Array([...head, ...hash, ...rest]);
}
