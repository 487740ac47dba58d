/**
 * Bitwarden's exports: the JSON one (`encrypted: false`) and the CSV one, as its clients write them.
 * Item types 1 login, 2 secure note, 3 card, 4 identity, 5 SSH key; a login's URIs with their match
 * rule (null: the default, domain; 4, a regular expression, has no equal here and becomes "never");
 * custom fields (text, hidden, boolean; a linked field has no value of its own and is skipped).
 */
import { checkedContent, type CustomField, type ItemContent, type ItemType, type UrlMatch } from "../item-types";
import { csvRows } from "./csv-rows";
import { checkEntries, importLimits, type ImportLimits } from "./limits";
import { ImportError, type Parsed } from "./types";

const TYPES: Record<number, ItemType> = { 1: "login", 2: "note", 3: "card", 4: "identity", 5: "ssh" };
const MATCHES: Record<number, UrlMatch> = { 0: "domain", 1: "host", 2: "startsWith", 3: "exact", 4: "never", 5: "never" };

type Raw = { readonly [key: string]: unknown };

/** A JSON value as an object to read fields of (anything else: an empty one). */
const obj = (v: unknown): Raw => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Raw) : {});
const list = (v: unknown): Raw[] => (Array.isArray(v) ? v.map(obj) : []);

const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : undefined);

/** The fields that are set, as strings. */
function fieldsOf(pairs: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(pairs)) {
    const t = text(v);
    if (t !== undefined) out[k] = t;
  }
  return out;
}

export function parseBitwardenJson(source: string, limits: ImportLimits = importLimits()): Parsed {
  let doc: Raw;
  try {
    doc = JSON.parse(source) as Raw;
  } catch {
    throw new ImportError("the file is not JSON");
  }
  if (doc.encrypted === true) throw new ImportError("this Bitwarden export is encrypted: give its password");
  if (!Array.isArray(doc.items)) throw new ImportError("not a Bitwarden JSON export (no items)");
  checkEntries(doc.items.length, limits);
  const parsed: Parsed = { format: "bitwarden-json", items: [], skipped: [] };
  for (const raw of list(doc.items)) {
    const name = text(raw.name) ?? "(no name)";
    const type = TYPES[raw.type as number];
    if (!type) {
      parsed.skipped.push({ name, why: `a Bitwarden item type this service does not have (${String(raw.type)})` });
      continue;
    }
    try {
      parsed.items.push(checkedContent(bitwardenItem(raw, type)));
    } catch (err) {
      parsed.skipped.push({ name, why: (err as Error).message });
    }
  }
  return parsed;
}

function bitwardenItem(raw: Raw, type: ItemType): ItemContent {
  const notes = text(raw.notes);
  const content: ItemContent = { name: text(raw.name) ?? "", type, fields: {} };
  if (type === "login") {
    const login = obj(raw.login);
    content.fields = fieldsOf({ username: login.username, password: login.password });
    const uris = list(login.uris);
    const urls = uris.flatMap((u) => (text(u.uri) ? [{ url: text(u.uri)!, match: MATCHES[u.match as number] ?? "domain" }] : []));
    if (urls.length > 0) content.urls = urls;
    if (text(login.totp)) content.totp = text(login.totp);
  } else if (type === "card") {
    const c = obj(raw.card);
    const expiry =
      text(c.expMonth) && text(c.expYear) ? `${String(c.expMonth).padStart(2, "0")}/${String(c.expYear).slice(-2)}` : undefined;
    content.fields = fieldsOf({ cardholder: c.cardholderName, number: c.number, expiry, code: c.code });
    if (text(c.brand)) (content.custom ??= []).push({ name: "brand", value: text(c.brand)!, hidden: false });
  } else if (type === "identity") {
    const i = obj(raw.identity);
    const fullName = [i.title, i.firstName, i.middleName, i.lastName].map(text).filter(Boolean).join(" ");
    const address = [i.address1, i.address2, i.address3, [i.postalCode, i.city].map(text).filter(Boolean).join(" "), i.state, i.country]
      .map(text)
      .filter(Boolean)
      .join("\n");
    content.fields = fieldsOf({ fullName, email: i.email, phone: i.phone, address });
    for (const k of ["company", "username", "ssn", "passportNumber", "licenseNumber"])
      if (text(i[k])) (content.custom ??= []).push({ name: k, value: text(i[k])!, hidden: ["ssn", "passportNumber"].includes(k) });
  } else if (type === "ssh") {
    const k = obj(raw.sshKey);
    content.fields = fieldsOf({ privateKey: k.privateKey, publicKey: k.publicKey });
  }
  if (notes) content.fields.notes = notes;
  const custom: CustomField[] = [];
  for (const f of list(raw.fields)) {
    // 3: a linked field, which only points at another field of the item.
    if (f.type === 3 || !text(f.name)) continue;
    custom.push({ name: text(f.name)!, value: text(f.value) ?? "", hidden: f.type === 1 });
  }
  if (custom.length > 0) content.custom = [...(content.custom ?? []), ...custom];
  if (raw.favorite === true) content.favorite = true;
  return content;
}

/** Bitwarden's CSV: folder, favorite, type (login or note), name, notes, fields ("name: value" lines), reprompt, login_uri, login_username, login_password, login_totp. */
export function parseBitwardenCsv(source: string, limits: ImportLimits = importLimits()): Parsed {
  const { rows: data } = csvRows(source, limits);
  const parsed: Parsed = { format: "bitwarden-csv", items: [], skipped: [] };
  for (const row of data) {
    const name = row.name || "(no name)";
    const type: ItemType | undefined = row.type === "login" ? "login" : row.type === "note" ? "note" : undefined;
    if (!type) {
      parsed.skipped.push({ name, why: `a Bitwarden CSV type this service does not read (${row.type || "none"})` });
      continue;
    }
    const content: ItemContent = {
      name: row.name ?? "",
      type,
      fields: fieldsOf({ username: row.login_username, password: row.login_password, notes: row.notes }),
    };
    const urls = (row.login_uri ?? "")
      .split(/[,\n]/)
      .map((u) => u.trim())
      .filter(Boolean);
    if (type === "login" && urls.length > 0) content.urls = urls.map((url) => ({ url, match: "domain" }));
    if (type === "login" && row.login_totp) content.totp = row.login_totp;
    const custom = customLines(row.fields);
    if (custom.length > 0) content.custom = custom;
    if (row.favorite === "1") content.favorite = true;
    try {
      parsed.items.push(checkedContent(content));
    } catch (err) {
      parsed.skipped.push({ name, why: (err as Error).message });
    }
  }
  return parsed;
}

/** "name: value" lines, as Bitwarden's CSV and our own CSV write custom fields. */
export function customLines(cell: string | undefined): CustomField[] {
  const out: CustomField[] = [];
  for (const line of (cell ?? "").split("\n")) {
    const m = line.match(/^([^:\s][^:]*):\s?(.*)$/);
    // A line that starts no field goes on the one before (a multi-line value: an SSH key, an address).
    if (m && !(out.length > 0 && /^\s/.test(line))) out.push({ name: m[1]!.trim(), value: m[2]!, hidden: false });
    else if (out.length > 0) out.at(-1)!.value += `\n${line}`;
  }
  return out;
}
