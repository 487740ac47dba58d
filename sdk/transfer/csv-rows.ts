/** A CSV's rows, as papaparse reads them with a header row, within the import's entry cap (sdk/transfer/limits.ts). */
import Papa from "papaparse";
import { checkEntries, type ImportLimits } from "./limits";
import { ImportError } from "./types";

export interface CsvRows {
  rows: Array<Record<string, string>>;
  /** The header row's names (after `transformHeader`). */
  fields: string[];
}

/**
 * Every non-empty row of `source` by the header's names. Read row by row: past `limits.entries`
 * rows the file is refused before the next one is read, and a file that parses to no row at all is
 * refused with papaparse's first complaint.
 */
export function csvRows(source: string, limits: ImportLimits, transformHeader?: (header: string) => string): CsvRows {
  const rows: Array<Record<string, string>> = [];
  let firstError: string | undefined;
  let fields: string[] = [];
  let over = false;
  Papa.parse<Record<string, string>>(source, {
    header: true,
    skipEmptyLines: "greedy",
    ...(transformHeader ? { transformHeader } : {}),
    step: (row, parser) => {
      if (rows.length >= limits.entries) {
        over = true;
        return parser.abort();
      }
      rows.push(row.data);
      fields = row.meta.fields ?? fields;
      firstError ??= row.errors[0]?.message;
    },
  });
  if (over) checkEntries(rows.length + 1, limits);
  if (rows.length === 0 && firstError !== undefined) throw new ImportError(`the CSV does not parse: ${firstError}`);
  // A header without a row: its names, read alone.
  if (rows.length === 0)
    fields = Papa.parse(source, { header: true, preview: 1, ...(transformHeader ? { transformHeader } : {}) }).meta.fields ?? [];
  return { rows, fields };
}
