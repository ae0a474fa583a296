/**
 * Reads CSV text as RFC 4180 writes it (quoted cells with doubled quotes, CRLF between records),
 * for tests that check an export cell by cell. Refuses what RFC 4180 does not allow, so that a
 * malformed export fails the test rather than being read leniently.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = []
  let record: string[] = []
  let position = 0
  while (position < text.length) {
    let cell = ''
    if (text[position] === '"') {
      position++
      for (;;) {
        const quote = text.indexOf('"', position)
        if (quote === -1) throw new Error('an unterminated quoted cell')
        cell += text.slice(position, quote)
        position = quote + 1
        if (text[position] !== '"') break
        cell += '"'
        position++
      }
    } else {
      const end = text.slice(position).search(/[,\r"\n]/)
      cell = end === -1 ? text.slice(position) : text.slice(position, position + end)
      position += cell.length
      if (text[position] === '"' || text[position] === '\n') throw new Error(`a bare quote or line feed at ${position}`)
    }
    record.push(cell)
    if (text[position] === ',') {
      position++
    } else if (text.startsWith('\r\n', position)) {
      records.push(record)
      record = []
      position += 2
    } else if (position < text.length) {
      throw new Error(`unexpected ${JSON.stringify(text[position])} at ${position}`)
    }
  }
  if (record.length > 0) throw new Error('the last record does not end with CRLF')
  return records
}
