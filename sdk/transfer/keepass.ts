/**
 * KeePass databases (KDBX 3 and 4, through kdbxweb; Argon2 through hash-wasm, as the SDK's own
 * key derivation). Every entry of every group but the recycle bin: Title, UserName, Password,
 * URL, Notes, a TOTP seed where KeePassXC keeps it (`otp`, an otpauth address), every other string
 * field a custom field (a protected one hidden). Attachments are not read (they are skipped with
 * their entry's name). What a database may ask of this client is capped before kdbxweb does it
 * (sdk/transfer/keepass-limits.ts).
 */
import * as kdbxweb from "kdbxweb";
import { argon2d, argon2id } from "hash-wasm";
import { checkedContent, type CustomField, type ItemContent } from "../item-types";
import { loadKeepass } from "./keepass-limits";
import { importLimits, type ImportLimits } from "./limits";
import { ImportError, type Parsed } from "./types";

const STANDARD = new Set(["Title", "UserName", "Password", "URL", "Notes", "otp", "TOTP Seed", "TOTP Settings"]);

// Called with the cost the header names, which loadKeepass has checked against the caps first.
kdbxweb.CryptoEngine.setArgon2Impl(async (password, salt, memory, iterations, length, parallelism, type) => {
  const args = {
    password: new Uint8Array(password),
    salt: new Uint8Array(salt),
    memorySize: memory,
    iterations,
    hashLength: length,
    parallelism,
    outputType: "binary" as const,
  };
  const out = type === kdbxweb.CryptoEngine.Argon2TypeArgon2id ? await argon2id(args) : await argon2d(args);
  return out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength) as ArrayBuffer;
});

const valueOf = (v: kdbxweb.KdbxEntryField | undefined): string => (v instanceof kdbxweb.ProtectedValue ? v.getText() : (v ?? ""));

export async function parseKeepass(
  file: Uint8Array,
  password: string,
  keyFile?: Uint8Array,
  limits: ImportLimits = importLimits(),
): Promise<Parsed> {
  const credentials = new kdbxweb.Credentials(kdbxweb.ProtectedValue.fromString(password), keyFile ? keyFile.slice().buffer : null);
  let db: kdbxweb.Kdbx;
  try {
    db = await loadKeepass(file.slice().buffer, credentials, limits);
  } catch (err) {
    if (err instanceof ImportError) throw err;
    const code = (err as { code?: string }).code;
    if (code === kdbxweb.Consts.ErrorCodes.InvalidKey) throw new ImportError("the KeePass password (or key file) is wrong");
    throw new ImportError(`not a KeePass database this client can read (${(err as Error).message})`);
  }
  const parsed: Parsed = { format: "keepass", items: [], skipped: [] };
  const bin = db.meta.recycleBinUuid;
  const walk = (group: kdbxweb.KdbxGroup) => {
    if (bin && group.uuid.equals(bin)) return;
    for (const entry of group.entries) {
      const get = (k: string) => valueOf(entry.fields.get(k));
      const name = get("Title") || "(no title)";
      const content: ItemContent = { name: get("Title"), type: "login", fields: {} };
      if (get("UserName")) content.fields.username = get("UserName");
      if (get("Password")) content.fields.password = get("Password");
      if (get("Notes")) content.fields.notes = get("Notes");
      if (get("URL")) content.urls = [{ url: get("URL"), match: "domain" }];
      if (get("otp")) content.totp = get("otp");
      const custom: CustomField[] = [];
      for (const [k, v] of entry.fields)
        if (!STANDARD.has(k) && valueOf(v) !== "") custom.push({ name: k, value: valueOf(v), hidden: v instanceof kdbxweb.ProtectedValue });
      if (custom.length > 0) content.custom = custom;
      if (entry.binaries.size > 0)
        parsed.skipped.push({ name, why: `${entry.binaries.size} attachment(s) not imported (the entry itself is)` });
      try {
        parsed.items.push(checkedContent(content));
      } catch (err) {
        parsed.skipped.push({ name, why: (err as Error).message });
      }
    }
    for (const child of group.groups) walk(child);
  };
  for (const root of db.groups) walk(root);
  return parsed;
}
