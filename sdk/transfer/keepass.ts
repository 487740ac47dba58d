/**
 * KeePass databases (KDBX 3 and 4, through kdbxweb; Argon2 through hash-wasm, as the SDK's own
 * key derivation). Every entry of every group but the recycle bin (whose entries are listed as
 * skipped): Title, UserName, Password, URL, Notes, a one-time code seed where KeePassXC, KeeWeb or
 * KeePass keep one (sdk/transfer/keepass-totp.ts), every other string field a custom field (a
 * protected one hidden); its group path below the root and its own tags as tags; its expiry date as
 * a custom field; its kept versions as the item's history; a KeePassXC passkey (`KPEX_PASSKEY_*`,
 * sdk/transfer/passkeys.ts) as the item's passkey; its attachments as the item's files (uploaded
 * once the item is in: sdk/client/transfer-files.ts).
 * What a database may ask of this client is capped before kdbxweb does it
 * (sdk/transfer/keepass-limits.ts).
 */
import * as kdbxweb from "kdbxweb";
import { argon2d, argon2id } from "hash-wasm";
import type { CustomField, ItemContent } from "../item-types";
import { loadKeepass } from "./keepass-limits";
import { importLimits, type ImportLimits } from "./limits";
import { keepassTotp } from "./keepass-totp";
import { hasKeePassXCPasskey, KEEPASSXC_PASSKEY, passkeyFromKeePassXC } from "./passkeys";
import { addItem, ImportError, parsedOf, type LeftOut, type Parsed } from "./types";

const STANDARD = new Set(["Title", "UserName", "Password", "URL", "Notes"]);

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

/**
 * A key file as KeePass reads it: 32 bytes are the key, 64 hex digits its hex, an XML key file its
 * `<Data>`, anything else hashed with SHA-256. kdbxweb tries an XML parse on anything that is not
 * the first two, and in a browser a failed parse builds an error document with inline style, which
 * the web vault's CSP blocks and reports: so a file that is plainly not XML is hashed here first
 * (the same key kdbxweb's own fallback gives).
 */
async function keyFileForKdbxweb(keyFile: Uint8Array): Promise<ArrayBuffer> {
  const bytes = keyFile.slice();
  const text = new TextDecoder("latin1").decode(bytes);
  if (bytes.byteLength === 32 || /^[a-f\d]{64}$/i.test(text) || text.trimStart().startsWith("<")) return bytes.buffer;
  return crypto.subtle.digest("SHA-256", bytes);
}

export async function parseKeepass(
  file: Uint8Array,
  password: string,
  keyFile?: Uint8Array,
  limits: ImportLimits = importLimits(),
): Promise<Parsed> {
  const key = keyFile ? await keyFileForKdbxweb(keyFile) : null;
  const credentials = new kdbxweb.Credentials(kdbxweb.ProtectedValue.fromString(password), key);
  let db: kdbxweb.Kdbx;
  try {
    db = await loadKeepass(file.slice().buffer, credentials, limits);
  } catch (err) {
    if (err instanceof ImportError) throw err;
    const code = (err as { code?: string }).code;
    if (code === kdbxweb.Consts.ErrorCodes.InvalidKey) throw new ImportError("the KeePass password (or key file) is wrong");
    throw new ImportError(`not a KeePass database this client can read (${(err as Error).message})`);
  }
  const parsed = parsedOf("keepass");
  const bin = db.meta.recycleBinUuid;
  const inBin = (group: kdbxweb.KdbxGroup) => {
    for (const entry of group.entries)
      parsed.skipped.push({ name: valueOf(entry.fields.get("Title")) || "(no title)", why: "it is in KeePass's recycle bin" });
    for (const child of group.groups) inBin(child);
  };
  // `path`: the groups below the root, as a tag ("Internet/eMail").
  const walk = (group: kdbxweb.KdbxGroup, path: string[]) => {
    if (bin && group.uuid.equals(bin)) return inBin(group);
    for (const entry of group.entries) {
      const name = valueOf(entry.fields.get("Title")) || "(no title)";
      const { content, left } = entryContent(entry);
      const tags = [...(path.length > 0 ? [path.join("/")] : []), ...entry.tags];
      if (tags.length > 0) content.tags = tags;
      const history = keptVersions(entry, content);
      if (entry.times.expires && entry.times.expiryTime) {
        (content.custom ??= []).push({ name: "Expires", value: entry.times.expiryTime.toISOString(), hidden: false });
        left.push({ part: "expiry", why: "items here do not expire: the date is kept as the custom field Expires" });
      }
      const files = [...entry.binaries].map(([file, binary]) => ({ name: file, data: binaryBytes(binary) }));
      addItem(parsed, name, content, { left, history, files, ...(path[0] && { place: path[0] }) });
    }
    for (const child of group.groups) walk(child, [...path, child.name ?? ""]);
  };
  for (const root of db.groups) walk(root, []);
  return parsed;
}

/** An attachment's bytes, as kdbxweb holds them: in the clear, protected in memory, or behind its hash in KDBX 4's pool. */
function binaryBytes(binary: kdbxweb.KdbxBinary | kdbxweb.KdbxBinaryWithHash): Uint8Array {
  const value = kdbxweb.KdbxBinaries.isKdbxBinaryWithHash(binary) ? binary.value : binary;
  return value instanceof kdbxweb.ProtectedValue ? value.getBinary() : new Uint8Array(value);
}

/** An entry's (or one of its kept versions') content, and what of it was left out. */
function entryContent(entry: kdbxweb.KdbxEntry): { content: ItemContent; left: LeftOut[] } {
  const get = (k: string) => valueOf(entry.fields.get(k));
  const content: ItemContent = { name: get("Title"), type: "login", fields: {} };
  if (get("UserName")) content.fields.username = get("UserName");
  if (get("Password")) content.fields.password = get("Password");
  if (get("Notes")) content.fields.notes = get("Notes");
  if (get("URL")) content.urls = [{ url: get("URL"), match: "domain" }];
  const { totp, used, left } = keepassTotp(get);
  if (totp) content.totp = totp;
  if (hasKeePassXCPasskey(get)) {
    const passkey = passkeyFromKeePassXC(get, entry.times.creationTime);
    if (typeof passkey === "string") left.push({ part: `passkey for ${get(KEEPASSXC_PASSKEY.rpId) || "a site"}`, why: passkey });
    else {
      content.passkeys = [passkey];
      used.push(...Object.values(KEEPASSXC_PASSKEY));
    }
  }
  const custom: CustomField[] = [];
  for (const [k, v] of entry.fields)
    if (!STANDARD.has(k) && !used.includes(k) && valueOf(v) !== "")
      custom.push({ name: k, value: valueOf(v), hidden: v instanceof kdbxweb.ProtectedValue });
  if (custom.length > 0) content.custom = custom;
  return { content, left };
}

/**
 * The entry's kept versions, oldest first, as item contents: a version the same as the one after
 * it (KeePass keeps one at each save, changed or not) or as the entry now is adds nothing, and is
 * dropped. Tags and expiry are the entry's as it is now.
 */
function keptVersions(entry: kdbxweb.KdbxEntry, current: ItemContent): ItemContent[] {
  const out: ItemContent[] = [];
  let last = "";
  for (const old of entry.history) {
    const content = entryContent(old).content;
    if (current.tags) content.tags = current.tags;
    const key = JSON.stringify(content);
    if (key !== last && content.name) out.push(content);
    last = key;
  }
  while (out.length > 0 && JSON.stringify(out.at(-1)) === JSON.stringify(current)) out.pop();
  return out;
}
