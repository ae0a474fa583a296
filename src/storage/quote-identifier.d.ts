/** An SQL identifier (a table's or column's name) quoted, whatever characters it holds. */
export function quoteIdentifier(name: string): string
