/**
 * Bitwarden's exports: the JSON one (`encrypted: false`) and the CSV one, as its clients write them.
 * Item types 1 login, 2 secure note, 3 card, 4 identity, 5 SSH key; a login's URIs with their match
 * rule (null: the default, domain; 4, a regular expression, has no equal here and becomes "never");
 * custom fields (text, hidden, boolean; a linked field has no value of its own and is left out);
 * the folder (its path, "Work/Servers") and an organization's collections as tags; the archived
 * mark; a login's passkeys (`fido2Credentials`, sdk/transfer/passkeys.ts). What an item holds that
 * has no place here (the password history, a passkey of a kind not held here) is listed.
 */
import type { CustomField, ItemContent, ItemType, UrlMatch } from "../item-types";
import { csvRows } from "./csv-rows";
import { checkEntries, importLimits, type ImportLimits } from "./limits";
import { passkeyFromBitwarden } from "./passkeys";
import { addItem, ImportError, parsedOf, type ImportFile, type LeftOut, type Parsed } from "./types";

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

/** The JSON export; `files`, each item's files by its id (the zip export's `attachments/<id>/`), go with their items. */
export function parseBitwardenJson(
  source: string,
  limits: ImportLimits = importLimits(),
  files: ReadonlyMap<string, ImportFile[]> = new Map(),
): Parsed {
  let doc: Raw;
  try {
    doc = JSON.parse(source) as Raw;
  } catch {
    throw new ImportError("the file is not JSON");
  }
  if (doc.encrypted === true) throw new ImportError("this Bitwarden export is encrypted: give its password");
  if (!Array.isArray(doc.items)) throw new ImportError("not a Bitwarden JSON export (no items)");
  checkEntries(doc.items.length, limits);
  const parsed = parsedOf("bitwarden-json");
  // A folder's name is its path ("Emails/WS"), as Bitwarden nests folders; an organization's collections likewise.
  const folders = new Map(list(doc.folders).map((f) => [text(f.id), text(f.name)]));
  const collections = new Map(list(doc.collections).map((c) => [text(c.id), text(c.name)]));
  const claimed = new Set<string>();
  for (const raw of list(doc.items)) {
    const name = text(raw.name) ?? "(no name)";
    const itemId = text(raw.id);
    if (itemId !== undefined) claimed.add(itemId);
    const type = TYPES[raw.type as number];
    if (!type) {
      parsed.skipped.push({ name, why: `a Bitwarden item type this service does not have (${String(raw.type)})` });
      continue;
    }
    const places = [
      folders.get(text(raw.folderId)),
      ...(Array.isArray(raw.collectionIds) ? raw.collectionIds : []).map((id) => collections.get(text(id))),
    ];
    const tags = places.filter((t): t is string => !!t);
    const left: LeftOut[] = [];
    const content = bitwardenItem(raw, type, left);
    if (tags.length > 0) content.tags = tags;
    if (text(raw.archivedDate)) content.archived = true;
    addItem(parsed, name, content, {
      left,
      files: itemId === undefined ? [] : files.get(itemId),
      ...(tags[0] && { place: tags[0].split("/")[0] }),
    });
  }
  for (const [id, unclaimed] of files)
    if (!claimed.has(id))
      for (const f of unclaimed) parsed.skipped.push({ name: `attachments/${id}/${f.name}`, why: "the export holds no item with its id" });
  return parsed;
}

/** The identity's fields that have a place of their own (the rest become custom fields). */
const IDENTITY_OWN = [
  "title",
  "firstName",
  "middleName",
  "lastName",
  "address1",
  "address2",
  "address3",
  "postalCode",
  "city",
  "state",
  "country",
  "email",
  "phone",
];
const IDENTITY_HIDDEN = ["ssn", "passportNumber", "licenseNumber"];

function identityOf(i: Raw, content: ItemContent): void {
  const fullName = [i.title, i.firstName, i.middleName, i.lastName].map(text).filter(Boolean).join(" ");
  const address = [i.address1, i.address2, i.address3, [i.postalCode, i.city].map(text).filter(Boolean).join(" "), i.state, i.country]
    .map(text)
    .filter(Boolean)
    .join("\n");
  content.fields = fieldsOf({ fullName, email: i.email, phone: i.phone, address });
  for (const [k, v] of Object.entries(i))
    if (!IDENTITY_OWN.includes(k) && text(v))
      (content.custom ??= []).push({ name: k, value: text(v)!, hidden: IDENTITY_HIDDEN.includes(k) });
}

function bitwardenItem(raw: Raw, type: ItemType, left: LeftOut[]): ItemContent {
  const notes = text(raw.notes);
  const content: ItemContent = { name: text(raw.name) ?? "", type, fields: {} };
  if (type === "login") {
    const login = obj(raw.login);
    content.fields = fieldsOf({ username: login.username, password: login.password });
    const uris = list(login.uris);
    const urls = uris.flatMap((u) => (text(u.uri) ? [{ url: text(u.uri)!, match: MATCHES[u.match as number] ?? "domain" }] : []));
    if (urls.length > 0) content.urls = urls;
    if (text(login.totp)) content.totp = text(login.totp);
    for (const raw of list(login.fido2Credentials)) {
      const passkey = passkeyFromBitwarden(raw);
      if (typeof passkey !== "string") (content.passkeys ??= []).push(passkey);
      else left.push({ part: `passkey for ${text(raw.rpId) ?? "a site"}`, why: passkey });
    }
  } else if (type === "card") {
    const c = obj(raw.card);
    const expiry =
      text(c.expMonth) && text(c.expYear) ? `${String(c.expMonth).padStart(2, "0")}/${String(c.expYear).slice(-2)}` : undefined;
    content.fields = fieldsOf({ cardholder: c.cardholderName, number: c.number, expiry, code: c.code });
    if (text(c.brand)) (content.custom ??= []).push({ name: "brand", value: text(c.brand)!, hidden: false });
  } else if (type === "identity") {
    identityOf(obj(raw.identity), content);
  } else if (type === "ssh") {
    const k = obj(raw.sshKey);
    content.fields = fieldsOf({ privateKey: k.privateKey, publicKey: k.publicKey });
    if (text(k.keyFingerprint)) (content.custom ??= []).push({ name: "fingerprint", value: text(k.keyFingerprint)!, hidden: false });
  }
  if (notes) content.fields.notes = notes;
  const custom: CustomField[] = [];
  for (const f of list(raw.fields)) {
    if (!text(f.name)) continue;
    // 3: a linked field, which only points at another field of the item.
    if (f.type === 3) left.push({ part: `linked field ${text(f.name)!}`, why: "a linked field has no value of its own" });
    else custom.push({ name: text(f.name)!, value: text(f.value) ?? "", hidden: f.type === 1 });
  }
  if (custom.length > 0) content.custom = [...(content.custom ?? []), ...custom];
  const earlier = list(raw.passwordHistory).length;
  if (earlier > 0) left.push({ part: `${earlier} earlier password(s)`, why: "Bitwarden's password history is not carried" });
  if (raw.favorite === true) content.favorite = true;
  return content;
}

/** Bitwarden's CSV: folder, favorite, type (login or note), name, notes, fields ("name: value" lines), reprompt, login_uri, login_username, login_password, login_totp. */
export function parseBitwardenCsv(source: string, limits: ImportLimits = importLimits()): Parsed {
  const { rows: data } = csvRows(source, limits);
  const parsed = parsedOf("bitwarden-csv");
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
    if (row.folder?.trim()) content.tags = [row.folder.trim()];
    addItem(parsed, name, content, row.folder?.trim() ? { place: row.folder.trim().split("/")[0] } : {});
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
