/**
 * What every importer answers: the items it read, what it could not carry of an item it did
 * read (`partial`), and what it skipped whole and why.
 */
import { checkedContent, type ItemContent } from "../item-types";

/** An item read from a file, with what the writer needs beyond its content. */
export interface ImportItem extends ItemContent {
  /**
   * Earlier versions of the item, oldest first (a KeePass entry's history): the import writes the
   * oldest first and each later one as an edit, ending at this content, so the item's history in
   * the vault shows them.
   */
  history?: ItemContent[];
  /**
   * Where the item was kept at the top in the file: its 1Password vault, its Bitwarden folder's
   * first part, its KeePass top-level group. `splitByTopLevel` groups items by it.
   */
  place?: string;
  /**
   * Files the item held in the file (a KeePass entry's attachments, a Bitwarden zip's, an encrypted
   * export's): the import adds the item first, then uploads each as a new attachment of it.
   */
  files?: ImportFile[];
}

/** A file of an item read from a file to import: its name and bytes (its key and id are made when it is uploaded). */
export interface ImportFile {
  name: string;
  data: Uint8Array;
}

/** One part of an item that the import could not carry, and why. */
export interface LeftOut {
  part: string;
  why: string;
}

export interface Parsed {
  /** What the file was read as. */
  format: ImportFormat;
  items: ImportItem[];
  /** Items that were read, with the parts of each that were left out (an attachment, a Steam code). */
  partial: Array<{ name: string; left: LeftOut[] }>;
  /** Entries not imported at all. */
  skipped: Array<{ name: string; why: string }>;
}

export const IMPORT_FORMATS = [
  "bitwarden-json",
  "bitwarden-zip",
  "bitwarden-csv",
  "lastpass-csv",
  "csv",
  "keepass",
  "1password",
  "vault-export",
] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** A file an importer cannot read at all (not one bad entry: those are skipped). */
export class ImportError extends Error {
  override readonly name = "ImportError";
}

/** A new, empty answer for `format`. */
export const parsedOf = (format: ImportFormat): Parsed => ({ format, items: [], partial: [], skipped: [] });

/**
 * Adds `content` to `parsed` as an item (checked as items are; an Error skips it with its reason),
 * with its earlier versions, its place in the file, its files and what was left out of it.
 */
export function addItem(
  parsed: Parsed,
  name: string,
  content: ItemContent,
  extra: { history?: ItemContent[]; place?: string; left?: LeftOut[]; files?: ImportFile[] } = {},
): void {
  let item: ImportItem;
  try {
    item = checkedContent(content);
  } catch (err) {
    parsed.skipped.push({ name, why: (err as Error).message });
    return;
  }
  const history = (extra.history ?? []).flatMap((h) => {
    try {
      return [checkedContent(h)];
    } catch {
      return [];
    }
  });
  if (history.length > 0) item.history = history;
  if (extra.place) item.place = extra.place;
  if (extra.files && extra.files.length > 0) item.files = extra.files;
  parsed.items.push(item);
  if (extra.left && extra.left.length > 0) parsed.partial.push({ name, left: extra.left });
}
