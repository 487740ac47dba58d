/**
 * 1Password's 1PUX export: a zip (read with fflate) holding `export.data`, JSON of accounts,
 * their vaults and items. Each item has a category (`categoryUuid`): logins (001) and passwords
 * (005) become logins, with their username and password fields, websites, and a one-time code from
 * any section field holding one; secure notes (003) notes; credit cards (002) cards; SSH keys (114)
 * SSH keys; every other category (identity, server, bank account...) a secure note holding its
 * fields. Every section field without a place of its own becomes a custom field, hidden when
 * 1Password conceals it. Documents (006) are files: skipped, named.
 */
import { Unzip, UnzipInflate, strFromU8 } from "fflate";
import { checkedContent, type CustomField, type ItemContent, type ItemType } from "../item-types";
import { checkEntries, importLimits, Inflation, type ImportLimits } from "./limits";
import { ImportError, type Parsed } from "./types";

type Raw = { readonly [key: string]: unknown };
const obj = (v: unknown): Raw => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Raw) : {});
const list = (v: unknown): Raw[] => (Array.isArray(v) ? v.map(obj) : []);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : undefined);

const TYPES: Record<string, ItemType> = { "001": "login", "005": "login", "003": "note", "002": "card", "114": "ssh" };

/** A section field's value as text: 1PUX keeps each kind under its own key. */
function valueText(value: Raw): { text?: string; concealed: boolean; totp: boolean } {
  const [kind, v] = Object.entries(value)[0] ?? [];
  if (kind === undefined) return { concealed: false, totp: false };
  if (kind === "totp") return { text: str(v), concealed: false, totp: true };
  if (kind === "concealed") return { text: str(v), concealed: true, totp: false };
  if (kind === "email") return { text: str(obj(v).email_address) ?? str(v), concealed: false, totp: false };
  if (kind === "address") {
    const a = obj(v);
    return {
      text: [a.street, [a.zip, a.city].map(str).filter(Boolean).join(" "), a.state, a.country].map(str).filter(Boolean).join("\n"),
      concealed: false,
      totp: false,
    };
  }
  if (kind === "monthYear" && typeof v === "number")
    return { text: `${String(v % 100).padStart(2, "0")}/${String(Math.floor(v / 100)).slice(-2)}`, concealed: false, totp: false };
  if (kind === "sshKey") return { text: str(obj(v).privateKey), concealed: true, totp: false };
  return { text: str(v), concealed: false, totp: false };
}

function itemOf(raw: Raw): ItemContent {
  const overview = obj(raw.overview);
  const details = obj(raw.details);
  const category = str(raw.categoryUuid) ?? "";
  const type = TYPES[category] ?? "note";
  const content: ItemContent = { name: str(overview.title) ?? "", type, fields: {} };
  const custom: CustomField[] = [];
  for (const f of list(details.loginFields)) {
    const value = str(f.value);
    if (!value) continue;
    if (f.designation === "username") content.fields.username = value;
    else if (f.designation === "password") content.fields.password = value;
    else custom.push({ name: str(f.name) ?? "field", value, hidden: f.fieldType === "P" });
  }
  if (category === "005" && str(details.password)) content.fields.password = str(details.password)!;
  for (const section of list(details.sections))
    for (const f of list(section.fields)) {
      const { text, concealed, totp } = valueText(obj(f.value));
      if (!text) continue;
      const id = str(f.id) ?? "";
      if (totp && type === "login" && !content.totp) content.totp = text;
      else if (type === "card" && id === "cardholder") content.fields.cardholder = text;
      else if (type === "card" && id === "ccnum") content.fields.number = text;
      else if (type === "card" && id === "cvv") content.fields.code = text;
      else if (type === "card" && id === "expiry") content.fields.expiry = text;
      else if (type === "ssh" && "sshKey" in obj(f.value)) {
        content.fields.privateKey = text;
        const publicKey = str(obj(obj(obj(f.value).sshKey).metadata).publicKey);
        if (publicKey) content.fields.publicKey = publicKey;
      } else custom.push({ name: str(f.title) ?? (id || "field"), value: text, hidden: concealed });
    }
  const notes = str(details.notesPlain);
  if (notes) content.fields.notes = notes;
  const urls = [...list(overview.urls).map((u) => str(u.url)), str(overview.url)].filter((u): u is string => !!u);
  if (type === "login" && urls.length > 0) content.urls = [...new Set(urls)].map((url) => ({ url, match: "domain" }));
  if (custom.length > 0) content.custom = custom;
  if (typeof raw.favIndex === "number" && raw.favIndex > 0) content.favorite = true;
  return content;
}

/** Zip bytes pushed to the unzipper at a time: each inflates to at most about 1,000 times its size before it is counted. */
const PIECE = 16 * 1024;

/**
 * export.data, inflated piece by piece as the zip is read and counted against the caps: its size
 * in the zip's headers is the file's word, and an inflater trusts it.
 */
function exportData(file: Uint8Array, limits: ImportLimits): Uint8Array | undefined {
  const inflation = new Inflation(limits.inflatedBytes);
  const parts: Uint8Array[] = [];
  let found = false;
  let failure: Error | undefined;
  const unzip = new Unzip((entry) => {
    if (entry.name !== "export.data" || found) return;
    found = true;
    entry.ondata = (err, chunk) => {
      if (err) failure ??= err;
      else if (chunk) {
        inflation.add(chunk.length, "the 1Password export's data");
        parts.push(chunk);
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
  if (!found) return undefined;
  const data = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((offset, p) => (data.set(p, offset), offset + p.length), 0);
  return data;
}

export function parseOnePux(file: Uint8Array, limits: ImportLimits = importLimits()): Parsed {
  const data = exportData(file, limits);
  if (!data) throw new ImportError("not a 1Password export (no export.data in it)");
  let doc: Raw;
  try {
    doc = obj(JSON.parse(strFromU8(data)));
  } catch {
    throw new ImportError("the 1Password export's data is not JSON");
  }
  checkEntries(
    list(doc.accounts).reduce((n, a) => n + list(a.vaults).reduce((m, v) => m + list(v.items).length, 0), 0),
    limits,
  );
  const parsed: Parsed = { format: "1password", items: [], skipped: [] };
  for (const account of list(doc.accounts))
    for (const vault of list(account.vaults))
      for (const raw of list(vault.items)) {
        const name = str(obj(raw.overview).title) ?? "(no title)";
        if (raw.categoryUuid === "006") {
          parsed.skipped.push({ name, why: "a 1Password document (a file): not imported" });
          continue;
        }
        try {
          parsed.items.push(checkedContent(itemOf(raw)));
        } catch (err) {
          parsed.skipped.push({ name, why: (err as Error).message });
        }
      }
  return parsed;
}
