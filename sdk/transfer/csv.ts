/**
 * A generic CSV, as password managers and spreadsheets write them: a header row naming the columns
 * in any case and order (name or title; username, user or login; password; url, website or uri,
 * several separated by new lines or commas; totp or otp; notes; favorite), one item per row, every
 * other non-empty column a custom field. Our own CSV export reads back this way too.
 */
import { checkedContent, type ItemContent, type ItemType, ITEM_TYPES } from "../item-types";
import { customLines } from "./bitwarden";
import { fromSpreadsheetSafe } from "./csv-formulas";
import { csvRows } from "./csv-rows";
import { importLimits, type ImportLimits } from "./limits";
import { ImportError, parsedOf, type Parsed } from "./types";

const COLUMNS: Record<string, readonly string[]> = {
  name: ["name", "title"],
  username: ["username", "user", "login", "login_username", "user name"],
  password: ["password", "login_password", "pass"],
  url: ["url", "urls", "website", "uri", "login_uri", "web site"],
  totp: ["totp", "otp", "otpauth", "login_totp", "one-time code"],
  notes: ["notes", "note", "comments", "extra"],
  favorite: ["favorite", "favourite"],
  type: ["type"],
  fields: ["fields"],
  // Where the item was kept (our own CSV's vault, Bitwarden's folder, KeePass's group): not a field of the item.
  place: ["vault", "folder", "group", "grouping"],
};

export function parseCsv(source: string, limits: ImportLimits = importLimits()): Parsed {
  const { rows: data, fields: headers } = csvRows(source, limits, (h) => h.trim().toLowerCase());
  const column = (what: string) => headers.find((h) => COLUMNS[what]!.includes(h));
  const nameColumn = column("name");
  if (!nameColumn) throw new ImportError(`the CSV has no name or title column (its columns: ${headers.join(", ")})`);
  const used = new Set(Object.keys(COLUMNS).map(column).filter(Boolean));
  const parsed = parsedOf("csv");
  for (const row of data) {
    const cell = (h: string): string => {
      const v = Object.hasOwn(row, h) ? row[h] : undefined;
      // A cell an exporter quoted so that a spreadsheet would not run it as a formula: its text (csv-formulas.ts).
      return typeof v === "string" ? fromSpreadsheetSafe(v) : "";
    };
    // A value as written, its spaces its own (a password's, a name's); "" where the file has no such column.
    const get = (what: string) => {
      const c = column(what);
      return c ? cell(c) : "";
    };
    const name = get("name");
    const type = (ITEM_TYPES.includes(get("type").trim() as ItemType) ? get("type").trim() : "login") as ItemType;
    const content: ItemContent = { name, type, fields: {} };
    for (const key of ["username", "password", "notes"]) if (get(key).trim()) content.fields[key] = get(key);
    const urls = get("url")
      .split(/[\n,]/)
      .map((u) => u.trim())
      .filter(Boolean);
    if (urls.length > 0) content.urls = urls.map((url) => ({ url, match: "domain" }));
    if (get("totp").trim()) content.totp = get("totp").trim();
    if (["1", "true", "yes", "x"].includes(get("favorite").trim().toLowerCase())) content.favorite = true;
    const custom = [
      ...customLines(get("fields")),
      ...headers.filter((h) => !used.has(h) && cell(h).trim() !== "").map((h) => ({ name: h, value: cell(h), hidden: false })),
    ];
    if (custom.length > 0) content.custom = custom;
    try {
      parsed.items.push(checkedContent(content));
    } catch (err) {
      parsed.skipped.push({ name: name.trim() || "(no name)", why: (err as Error).message });
    }
  }
  return parsed;
}
