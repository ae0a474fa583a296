import { Readable } from 'node:stream'
import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import type { LogCursor } from '../../domain/analytics/log-cursor.js'
import { resolveExportRange, type ExportRange } from '../../domain/analytics/export-range.js'
import { csvLine, type CsvCell } from '../../domain/export/csv.js'
import { invalidRequest } from '../../errors.js'
import { accountOf } from '../../plugins/authentication.js'
import { RangeTimeQuery } from './dashboard-schemas.js'
import { stringEnum } from './public-schemas.js'

/**
 * Rows an export reads per query. Each batch is one short query by keyset, on its own: no
 * transaction spans the download, and on the embedded database (one connection) the other
 * requests' queries run between batches. 500 rows of the widest log are some 300 kB in memory.
 */
export const EXPORT_BATCH_SIZE = 500

export const exportFormats = ['csv', 'ndjson'] as const
export type ExportFormat = (typeof exportFormats)[number]

const contentTypes: Record<ExportFormat, string> = { csv: 'text/csv; charset=utf-8', ndjson: 'application/x-ndjson' }

/** The query parameters every export takes besides its log's filters. */
export const exportQuery = {
  format: Type.Optional(
    stringEnum(exportFormats, {
      description: "csv (the default: a header row, then one row per entry; RFC 4180) or ndjson (one JSON object per line, as the listing's items)",
    }),
  ),
  from: RangeTimeQuery('Only the entries from this time on (inclusive)'),
  to: RangeTimeQuery('Only the entries before this time (exclusive); not before from'),
}

/** The 200 of an export in the OpenAPI document: a file in either format. */
export const exportResponse = {
  description: 'The file, streamed (Content-Disposition: attachment)',
  content: {
    'text/csv': { schema: Type.String() },
    'application/x-ndjson': { schema: Type.String() },
  },
}

/** The time range of an export's query; 400 validation_error naming the parameter when it is not one. */
export function exportRangeOf(query: { from?: string; to?: string }): ExportRange {
  const resolved = resolveExportRange(query)
  if ('issues' in resolved) throw invalidRequest(resolved.issues)
  return resolved.range
}

/** A column of a CSV export: its header and its cell of an item. */
export type CsvColumn<Item> = readonly [header: string, cell: (item: Item) => CsvCell]

export interface LogExport<Row, Item> {
  format: ExportFormat
  fileName: string
  /** A page of `limit` rows after `after` (the first page without), newest first. */
  readPage: (page: { limit: number; after?: LogCursor }) => Promise<Row[]>
  positionOf: (row: Row) => LogCursor
  /** A row as the listing answers it: an NDJSON line, and what the CSV's cells are taken from. */
  viewOf: (row: Row) => Item
  columns: readonly CsvColumn<Item>[]
}

/**
 * Every row of the log, newest first, one batch at a time by keyset. A consumer that stops (the
 * client went away, and Fastify destroyed the stream) ends the generator at its next yield: no
 * batch is read after that.
 */
export async function* readInBatches<Row>(readPage: LogExport<Row, unknown>['readPage'], positionOf: (row: Row) => LogCursor): AsyncGenerator<Row[]> {
  let after: LogCursor | undefined
  for (;;) {
    const rows = await readPage({ limit: EXPORT_BATCH_SIZE, ...(after === undefined ? {} : { after }) })
    if (rows.length > 0) yield rows
    const last = rows.at(-1)
    if (last === undefined || rows.length < EXPORT_BATCH_SIZE) return
    after = positionOf(last)
  }
}

/** A batch as the export's text: CSV records, or NDJSON lines. */
function textOf<Row, Item>(log: LogExport<Row, Item>, rows: readonly Row[]): string {
  const items = rows.map(log.viewOf)
  return log.format === 'csv'
    ? items.map((item) => csvLine(log.columns.map(([, cell]) => cell(item)))).join('')
    : items.map((item) => `${JSON.stringify(item)}\n`).join('')
}

/**
 * How long an export's client may read nothing (its socket takes no byte) before its connection
 * is dropped, and its slot (MAX_EXPORTS_PER_ACCOUNT) freed with it.
 */
export const EXPORT_IDLE_TIMEOUT_MS = 60_000

/**
 * A stream of `chunks` that reads the next one only when the response has room for it
 * (backpressure), so a slow client holds one batch in memory, not the log. A chunk that fails is
 * handed to `onFailure` and the stream destroyed, which resets the connection.
 */
function streamOf(chunks: AsyncIterator<string>, onFailure: (error: Error) => void): Readable {
  const stream: Readable = new Readable({
    read() {
      chunks.next().then(
        ({ done, value }) => {
          if (!stream.destroyed) stream.push(done === true ? null : value)
        },
        (error: unknown) => {
          onFailure(error instanceof Error ? error : new Error(String(error)))
          stream.destroy()
        },
      )
    },
    destroy(error, callback) {
      // Ends the reads at the batch under way (a pending next() runs first): none after it.
      chunks.return?.().catch(() => {})
      callback(error)
    },
  })
  return stream
}

/**
 * Sends the log as a download, one chunk per batch (the CSV's header first). The first batch is
 * read before anything is sent: a query that fails there takes the path of every failed request
 * (503 service_unavailable for a database away, 500 otherwise; JSON, no attachment). One that
 * fails later is logged (app.logFailure) and cuts the download off: the connection is reset
 * mid-body, so the client sees a failed transfer, not a file that ends at a clean line.
 */
export async function sendLogExport<Row, Item>(reply: FastifyReply, log: LogExport<Row, Item>): Promise<FastifyReply> {
  const { request, server: app } = reply
  const slot = app.logExports.admit(accountOf(request).id)
  const batches = readInBatches(log.readPage, log.positionOf)
  let first: IteratorResult<Row[]>
  try {
    first = await batches.next()
    const stream = streamOf(exportText(log, first, batches), (error) => app.logFailure(request, error, 'export cut off'))
    slot.attach(stream)
    // An export is one answer per connection: a finished one leaves no keep-alive socket behind
    // to hold a shutdown up, and the idle timeout drops a client that stopped reading.
    reply.raw.setTimeout(EXPORT_IDLE_TIMEOUT_MS, () => reply.raw.destroy())
    return reply
      .header('connection', 'close')
      .header('content-type', contentTypes[log.format])
      .header('content-disposition', `attachment; filename="${log.fileName}"`)
      .send(stream)
  } catch (error) {
    slot.release()
    await batches.return(undefined)
    throw error
  }
}

/** The export's text: the CSV's header, the first batch (read already), then the others as they are read. */
async function* exportText<Row, Item>(log: LogExport<Row, Item>, first: IteratorResult<Row[]>, rest: AsyncGenerator<Row[]>): AsyncGenerator<string> {
  if (log.format === 'csv') yield csvLine(log.columns.map(([header]) => header))
  if (first.done === true) return
  yield textOf(log, first.value)
  for await (const rows of rest) yield textOf(log, rows)
}

/** A field of a listing's item as a cell: a list's entries joined by semicolons (anomalies: `datacenter_ip;headless_browser`). */
function cellOf(value: string | number | null | readonly string[]): CsvCell {
  return Array.isArray(value) ? value.join(';') : (value as CsvCell)
}

/** Columns named as the fields of a flat item, in the order given: the CSV reads as the listing's JSON. */
export function fieldColumns<Item extends Record<Field, string | number | null | readonly string[]>, Field extends string>(
  fields: readonly Field[],
): CsvColumn<Item>[] {
  return fields.map((field) => [field, (item: Item) => cellOf(item[field])] as const)
}
