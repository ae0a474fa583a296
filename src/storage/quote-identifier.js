// Plain JavaScript so that PGlite's worker (pglite-worker.js) can import it as it is, as the
// PostgreSQL adapter does through quote-identifier.d.ts.

/** An SQL identifier (a table's or column's name) quoted, whatever characters it holds. */
export function quoteIdentifier(name) {
  return `"${name.replaceAll('"', '""')}"`
}
