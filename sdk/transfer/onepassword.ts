/**
 * 1Password's 1PUX export: a zip (read with fflate) holding `export.data`, JSON of accounts,
 * their vaults and items. Each item has a category (`categoryUuid`): logins (001) and passwords
 * (005) become logins, with their username and password fields, websites, and a one-time code from
 * any section field holding one (a second one: a hidden custom field, listed); secure notes (003)
 * notes; credit cards (002) cards; identities (004) identities; SSH keys (114) SSH keys; every other
 * category (server, bank account...) a secure note holding its fields. Every section field without
 * a place of its own becomes a custom field, hidden when 1Password conceals it. Each item is tagged
 * with its vault's name and its own tags, and keeps its archived state. Documents (006) are files,
 * and trashed items were deleted: both skipped, named.
 */
import { strFromU8 } from "fflate";
import type { CustomField, ItemContent, ItemType } from "../item-types";
import { checkEntries, importLimits, type ImportLimits } from "./limits";
import { zipEntries } from "./zip";
import { addItem, ImportError, parsedOf, type LeftOut, type Parsed } from "./types";

type Raw = { readonly [key: string]: unknown };
const obj = (v: unknown): Raw => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Raw) : {});
const list = (v: unknown): Raw[] => (Array.isArray(v) ? v.map(obj) : []);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : typeof v === "number" ? String(v) : undefined);

const TYPES: Record<string, ItemType> = { "001": "login", "005": "login", "003": "note", "002": "card", "004": "identity", "114": "ssh" };

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
  // A date: seconds since 1970, shown as the day.
  if (kind === "date" && typeof v === "number")
    return { text: new Date(v * 1000).toISOString().slice(0, 10), concealed: false, totp: false };
  if (kind === "sshKey") return { text: str(obj(v).privateKey), concealed: true, totp: false };
  return { text: str(v), concealed: false, totp: false };
}

/** Where a section field goes in an item of `type`, by its id: a field of the type, or (undefined) a custom field. */
const OWN: Partial<Record<ItemType, Record<string, string>>> = {
  card: { cardholder: "cardholder", ccnum: "number", cvv: "code", expiry: "expiry" },
  identity: { email: "email", defphone: "phone", address: "address" },
};

interface Read {
  content: ItemContent;
  left: LeftOut[];
}

function itemOf(raw: Raw): Read {
  const overview = obj(raw.overview);
  const details = obj(raw.details);
  const category = str(raw.categoryUuid) ?? "";
  const type = TYPES[category] ?? "note";
  const content: ItemContent = { name: str(overview.title) ?? "", type, fields: {} };
  const custom: CustomField[] = [];
  const left: LeftOut[] = [];
  for (const f of list(details.loginFields)) {
    const value = str(f.value);
    if (!value) continue;
    if (f.designation === "username") content.fields.username = value;
    else if (f.designation === "password") content.fields.password = value;
    else custom.push({ name: str(f.name) ?? "field", value, hidden: f.fieldType === "P" });
  }
  if (category === "005" && str(details.password)) content.fields.password = str(details.password)!;
  let codes = 0;
  const names: string[] = [];
  for (const section of list(details.sections))
    for (const f of list(section.fields)) {
      const { text, concealed, totp } = valueText(obj(f.value));
      if (!text) continue;
      const id = str(f.id) ?? "";
      const own = OWN[type]?.[id];
      if (totp) {
        // One one-time code per item here: the first is the item's, any further one a hidden field, listed.
        codes++;
        if (codes === 1 && type === "login") content.totp = text;
        else {
          const label = `One-time code${codes > 1 ? ` ${codes}` : ""}`;
          custom.push({ name: label, value: text, hidden: true });
          left.push({ part: label, why: "an item here has one one-time code: this one is kept as a hidden custom field" });
        }
      } else if (own && !content.fields[own]) content.fields[own] = text;
      else if (type === "identity" && ["firstname", "initial", "lastname"].includes(id)) names.push(text);
      else if (type === "ssh" && "sshKey" in obj(f.value)) {
        content.fields.privateKey = text;
        const publicKey = str(obj(obj(obj(f.value).sshKey).metadata).publicKey);
        if (publicKey) content.fields.publicKey = publicKey;
      } else custom.push({ name: str(f.title) || id || "field", value: text, hidden: concealed });
    }
  if (names.length > 0) content.fields.fullName = names.join(" ");
  const notes = str(details.notesPlain);
  if (notes) content.fields.notes = notes;
  const urls = [...list(overview.urls).map((u) => str(u.url)), str(overview.url)].filter((u): u is string => !!u);
  if (type === "login" && urls.length > 0) content.urls = [...new Set(urls)].map((url) => ({ url, match: "domain" }));
  if (custom.length > 0) content.custom = custom;
  if (typeof raw.favIndex === "number" && raw.favIndex > 0) content.favorite = true;
  if (raw.state === "archived") content.archived = true;
  const earlier = list(details.passwordHistory).length;
  if (earlier > 0) left.push({ part: `${earlier} earlier password(s)`, why: "1Password's password history is not carried" });
  return { content, left };
}

export function parseOnePux(file: Uint8Array, limits: ImportLimits = importLimits()): Parsed {
  const data = zipEntries(file, (name) => name === "export.data", limits, "the 1Password export's data").get("export.data");
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
  const parsed = parsedOf("1password");
  for (const account of list(doc.accounts))
    for (const vault of list(account.vaults)) {
      const vaultName = str(obj(vault.attrs).name);
      for (const raw of list(vault.items)) {
        const name = str(obj(raw.overview).title) ?? "(no title)";
        if (raw.categoryUuid === "006") {
          parsed.skipped.push({ name, why: "a 1Password document (a file): not imported" });
          continue;
        }
        if (raw.trashed === true || raw.state === "deleted") {
          parsed.skipped.push({ name, why: "it is in 1Password's trash" });
          continue;
        }
        const { content, left } = itemOf(raw);
        // The vault's name first: the item's place, as a folder would be.
        const tags = [vaultName, ...(Array.isArray(obj(raw.overview).tags) ? (obj(raw.overview).tags as unknown[]) : []).map(str)];
        content.tags = tags.filter((t): t is string => !!t);
        addItem(parsed, name, content, { left, ...(vaultName && { place: vaultName }) });
      }
    }
  return parsed;
}
