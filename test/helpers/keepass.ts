/** A KeePass KDBX 4 database (Argon2id) made with kdbxweb, the format's library, for import tests: a nested group's entry with every kind of field, an entry with an attachment, one in the recycle bin. */
import * as kdbxweb from "kdbxweb";
import { argon2id } from "hash-wasm";

export async function keepassFile(password: string): Promise<Uint8Array> {
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
