/** What every importer answers: the items it read, and what it skipped and why. */
import type { ItemContent } from "../item-types";

export interface Parsed {
  /** What the file was read as. */
  format: ImportFormat;
  items: ItemContent[];
  skipped: Array<{ name: string; why: string }>;
}

export const IMPORT_FORMATS = ["bitwarden-json", "bitwarden-csv", "csv", "keepass", "1password", "vault-export"] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** A file an importer cannot read at all (not one bad entry: those are skipped). */
export class ImportError extends Error {
  override readonly name = "ImportError";
}
