/**
 * LastPass's CSV export: `url,username,password,totp,extra,name,grouping,fav` (older exports have no
 * totp column). A row whose url is `http://sn` is a secure note, its text in `extra`; a note of a
 * kind (its text starting "NoteType:Credit Card", "NoteType:Address", "NoteType:SSH Key"...) holds
 * "Label:value" lines, mapped here to a card, an identity or an SSH key (the lines without a place
 * of their own become custom fields, a secret-looking one hidden), any other kind a secure note with
 * its lines as custom fields. Every other row is a login. `grouping` is the folder (nested with
 * "\"), kept as a tag; `fav` the favourite mark.
 */
import type { CustomField, ItemContent, ItemType } from "../item-types";
import { csvRows } from "./csv-rows";
import { importLimits, type ImportLimits } from "./limits";
import { addItem, parsedOf, type Parsed } from "./types";

const NOTE_URL = "http://sn";
const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
const SECRET = /password|passphrase|pin\b|security code|private key|cvv/i;

/** Where a kind's labels go: a field of the item's type, by label. */
const KINDS: Record<string, { type: ItemType; own: Record<string, string> }> = {
  "Credit Card": { type: "card", own: { "Name on Card": "cardholder", Number: "number", "Security Code": "code" } },
  Address: { type: "identity", own: { "Email Address": "email" } },
  "SSH Key": { type: "ssh", own: { "Private Key": "privateKey", "Public Key": "publicKey", Passphrase: "passphrase" } },
};
const NAME_PARTS = ["Title", "First Name", "Middle Name", "Last Name"];
const ADDRESS_PARTS = ["Address 1", "Address 2", "Address 3", "City / Town", "County", "State", "Zip / Postal Code", "Country"];

/** A note's "Label:value" lines, in order; "Notes:" runs to the end (it may hold lines of its own). */
function noteLines(text: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const m = /^([^:]+):(.*)$/.exec(lines[i]!);
    if (m && m[1] === "Notes") {
      out.push(["Notes", [m[2]!, ...lines.slice(i + 1)].join("\n")]);
      break;
    }
    if (m) out.push([m[1]!, m[2]!]);
    else if (out.length > 0) out.at(-1)![1] += `\n${lines[i]}`;
  }
  return out;
}

/** "June,2020" as "06/20"; undefined when the month or year is missing. */
function expiryOf(value: string): string | undefined {
  const [month = "", year = ""] = value.split(",").map((p) => p.trim());
  const m = MONTHS.indexOf(month.toLowerCase());
  return m >= 0 && /^\d{4}$/.test(year) ? `${String(m + 1).padStart(2, "0")}/${year.slice(-2)}` : undefined;
}

/** LastPass keeps a phone as JSON ({"num":"...","ext":"...","cc3l":"USA"}): its number. */
function phoneOf(value: string): string {
  try {
    const p = JSON.parse(value) as { num?: unknown; ext?: unknown };
    return [p.num, p.ext].filter((x) => typeof x === "string" && x !== "").join(" ext. ");
  } catch {
    return value;
  }
}

function noteOf(name: string, extra: string): ItemContent {
  const kind = /^NoteType:(.*)$/m.exec(extra.split(/\r?\n/, 1)[0] ?? "")?.[1]?.trim();
  if (!kind) return { name, type: "note", fields: extra.trim() ? { notes: extra } : {} };
  const { type, own } = KINDS[kind] ?? { type: "note" as ItemType, own: {} };
  const content: ItemContent = { name, type, fields: {} };
  const custom: CustomField[] = [];
  const names: string[] = [];
  const address: string[] = [];
  for (const [label, value] of noteLines(extra).slice(1)) {
    if (value.trim() === "" || value.trim() === ",") continue;
    if (label === "Notes") content.fields.notes = value;
    else if (own[label]) content.fields[own[label]] = value;
    else if (type === "card" && label === "Expiration Date" && expiryOf(value)) content.fields.expiry = expiryOf(value)!;
    else if (type === "identity" && NAME_PARTS.includes(label)) names.push(value);
    else if (type === "identity" && ADDRESS_PARTS.includes(label)) address.push(value);
    else if (type === "identity" && label === "Phone") content.fields.phone = phoneOf(value);
    else custom.push({ name: label, value: /Phone|Fax/.test(label) ? phoneOf(value) : value, hidden: SECRET.test(label) });
  }
  if (names.length > 0) content.fields.fullName = names.join(" ");
  if (address.length > 0) content.fields.address = address.join("\n");
  if (type === "note") custom.unshift({ name: "Kind", value: kind, hidden: false });
  if (custom.length > 0) content.custom = custom;
  return content;
}

export function parseLastpassCsv(source: string, limits: ImportLimits = importLimits()): Parsed {
  const { rows } = csvRows(source, limits, (h) => h.trim().toLowerCase());
  const parsed = parsedOf("lastpass-csv");
  for (const row of rows) {
    const name = (row.name ?? "").trim();
    const cell = (k: string) => row[k] ?? "";
    const content: ItemContent = cell("url").trim() === NOTE_URL ? noteOf(name, cell("extra")) : { name, type: "login", fields: {} };
    if (content.type === "login") {
      if (cell("username")) content.fields.username = cell("username");
      if (cell("password")) content.fields.password = cell("password");
      if (cell("extra").trim()) content.fields.notes = cell("extra");
      const url = cell("url").trim();
      if (url && url !== "http://") content.urls = [{ url, match: "domain" }];
      if (cell("totp").trim()) content.totp = cell("totp").trim();
    }
    const folder = cell("grouping").trim().replace(/\\/g, "/");
    if (folder) content.tags = [folder];
    if (cell("fav").trim() === "1") content.favorite = true;
    addItem(parsed, name || "(no name)", content, folder ? { place: folder.split("/")[0] } : {});
  }
  return parsed;
}
