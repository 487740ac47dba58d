/**
 * Cells a spreadsheet would run as a formula, and the quote that keeps it from running them: our
 * CSV export writes such a cell with a leading `'` (a spreadsheet shows the text, the quote
 * hidden), and our CSV import takes that `'` off again, so that every value reads back as it was.
 *
 * A cell runs as a formula when it starts with `=`, `+`, `-` or `@` (`=cmd|' /C calc'!A0`, a DDE
 * call; `@SUM(A1:A9)`; `=HYPERLINK(...)`), their full-width forms (`＝ ＋ － ＠`, which a
 * spreadsheet with an East Asian input may read as the others), or any of them after leading
 * white space (a spreadsheet may trim it first), or when it starts with a tab, a carriage
 * return or a line feed. What follows, line breaks included, does not matter: only the start is
 * looked at.
 *
 * The rule, both ways: a cell is quoted when, without the `'`s it starts with, it looks like a
 * formula; the import takes one `'` off a cell that would have been quoted without it. So a value
 * that already starts with `'` before a formula (`'=1`) is written with one more (`''=1`) and comes
 * back as it was, and a `'` before anything else is left alone both ways.
 */

const FORMULA_START = /^(?:[\t\r\n]|\s*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20])/;

/** Whether `value`, without the quotes it starts with, would run as a formula. */
export function looksLikeFormula(value: string): boolean {
  return FORMULA_START.test(value.replace(/^'+/, ""));
}

/** The cell to write for `value`: quoted with a leading `'` when it looks like a formula. */
export function spreadsheetSafe(value: string): string {
  return looksLikeFormula(value) ? `'${value}` : value;
}

/** The value a cell of ours holds: `spreadsheetSafe` undone. */
export function fromSpreadsheetSafe(cell: string): string {
  return cell.startsWith("'") && looksLikeFormula(cell.slice(1)) ? cell.slice(1) : cell;
}
