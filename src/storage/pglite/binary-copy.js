// PostgreSQL's binary COPY format (https://www.postgresql.org/docs/current/sql-copy.html, "Binary
// Format"), written for PGlite's COPY ... FROM '/dev/blob' WITH (FORMAT binary): the cheapest way
// into PGlite by far. Parameters of an INSERT arrive as text that PostgreSQL parses value by value
// (uuid_in, timestamptz_in, array_in), which cost a 500-row batch of the verification log more
// than the rows' insertion itself (bench/README.md, "Core flow"); binary values are copied as
// they are.
//
// Plain JavaScript, as the worker that imports it is (pglite-worker.js); binary-copy.d.ts types it.
// A value of the wrong kind for its column is a bug of the caller's, but it must fail as
// PostgreSQL itself would have failed the text form (SQLSTATE class 22, data exception), so that
// the verification log's writer sets the one row aside instead of retrying the batch for ever.

import { Buffer } from 'node:buffer'

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1')
/** PostgreSQL's epoch (2000-01-01T00:00:00Z) in Unix milliseconds. */
const POSTGRES_EPOCH_MS = 946_684_800_000
const TEXT_OID = 25
const TWO_TO_32 = 2 ** 32

/** An error as PostgreSQL reports a value its column's type cannot hold. */
function dataException(code, message) {
  return Object.assign(new Error(message), { code })
}

/** The value of each hexadecimal digit by its character code; -1 for anything else. */
const HEX_VALUES = new Int8Array(128).fill(-1)
for (let digit = 0; digit < 16; digit++) {
  HEX_VALUES['0123456789abcdef'.charCodeAt(digit)] = digit
  HEX_VALUES['0123456789ABCDEF'.charCodeAt(digit)] = digit
}
/** Where the dashes of a UUID's text form are. */
const isUuidDash = (index) => index === 8 || index === 13 || index === 18 || index === 23

/** A growing buffer with a write position; integers are written byte by byte (big-endian). */
class Writer {
  position = 0

  constructor(buffer) {
    this.buffer = buffer
  }

  reserve(bytes) {
    if (this.position + bytes <= this.buffer.length) return
    let size = this.buffer.length * 2
    while (size < this.position + bytes) size *= 2
    const larger = Buffer.allocUnsafe(size)
    this.buffer.copy(larger, 0, 0, this.position)
    this.buffer = larger
  }

  int16(value) {
    this.reserve(2)
    const { buffer, position } = this
    buffer[position] = value >>> 8
    buffer[position + 1] = value
    this.position = position + 2
  }

  int32(value) {
    this.reserve(4)
    const { buffer, position } = this
    buffer[position] = value >>> 24
    buffer[position + 1] = value >>> 16
    buffer[position + 2] = value >>> 8
    buffer[position + 3] = value
    this.position = position + 4
  }

  bytes(source) {
    this.reserve(source.length)
    this.position += source.copy(this.buffer, this.position)
  }

  /** A field's length, then its UTF-8 bytes. */
  text(value) {
    // At most three bytes per UTF-16 code unit (a surrogate pair is four bytes for two units).
    this.reserve(4 + value.length * 3)
    const { buffer } = this
    const start = this.position + 4
    // ASCII, the usual case, is copied here: a call into Buffer's encoder costs more than the
    // loop for strings of this log's lengths.
    let length = 0
    for (; length < value.length; length++) {
      const code = value.charCodeAt(length)
      if (code > 0x7f) break
      buffer[start + length] = code
    }
    if (length < value.length) length = buffer.utf8Write(value, start)
    this.int32(length)
    this.position = start + length
  }

  /** A UUID's 16 bytes from its text form; false when the text is not one. */
  uuid(value) {
    if (value.length !== 36) return false
    this.reserve(16)
    const { buffer } = this
    let position = this.position
    for (let index = 0; index < 36; index += 2) {
      if (isUuidDash(index)) index += 1
      const high = HEX_VALUES[value.charCodeAt(index)] ?? -1
      const low = HEX_VALUES[value.charCodeAt(index + 1)] ?? -1
      if (high < 0 || low < 0) return false
      buffer[position++] = (high << 4) | low
    }
    if (value[8] !== '-' || value[13] !== '-' || value[18] !== '-' || value[23] !== '-') return false
    this.position = position
    return true
  }
}

function checkInteger(value, bits, name) {
  const limit = 2 ** (bits - 1)
  if (!Number.isInteger(value) || value < -limit || value >= limit) {
    throw dataException('22003', `value ${String(value)} is out of range for type ${name}`)
  }
}

const writers = {
  uuid(writer, value) {
    writer.int32(16)
    if (typeof value !== 'string' || !writer.uuid(value)) throw dataException('22P02', `invalid input syntax for type uuid: "${String(value)}"`)
  },
  text(writer, value) {
    if (typeof value !== 'string') throw dataException('22P02', `invalid input for type text: ${typeof value}`)
    writer.text(value)
  },
  int2(writer, value) {
    checkInteger(value, 16, 'smallint')
    writer.int32(2)
    writer.int16(value)
  },
  int4(writer, value) {
    checkInteger(value, 32, 'integer')
    writer.int32(4)
    writer.int32(value)
  },
  /** Unix milliseconds, as microseconds since PostgreSQL's epoch (an int64, written as two halves). */
  timestamptz(writer, value) {
    if (!Number.isSafeInteger(value)) throw dataException('22008', `timestamp out of range: ${String(value)}`)
    const micros = (value - POSTGRES_EPOCH_MS) * 1000
    const high = Math.floor(micros / TWO_TO_32)
    writer.int32(8)
    writer.int32(high)
    writer.int32(micros - high * TWO_TO_32)
  },
  /** A one-dimensional array of text without nulls (an empty one has no dimensions). */
  'text[]'(writer, value) {
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
      throw dataException('22P02', 'invalid input for type text[]: expected an array of strings')
    }
    const lengthAt = writer.position
    writer.int32(0)
    const start = writer.position
    writer.int32(value.length === 0 ? 0 : 1)
    writer.int32(0)
    writer.int32(TEXT_OID)
    if (value.length > 0) {
      writer.int32(value.length)
      writer.int32(1)
      for (const item of value) writer.text(item)
    }
    writer.buffer.writeInt32BE(writer.position - start, lengthAt)
  },
}

/** The buffer of the last encoding, used again by the next (a batch's grows it once). */
let scratch = Buffer.allocUnsafe(64 * 1024)

/**
 * The rows of `values` (one array per column, all of one length; null is SQL NULL) in binary COPY
 * format, for `COPY table (columns...) FROM '/dev/blob' WITH (FORMAT binary)`. The bytes are a
 * view of a buffer the next call writes over: copy them (a Blob does) before encoding again.
 */
export function encodeBinaryCopy(columns, values) {
  if (values.length !== columns.length) throw new Error(`${values.length} value arrays for ${columns.length} columns`)
  const rowCount = values[0]?.length ?? 0
  if (values.some((column) => column.length !== rowCount)) throw new Error('the value arrays differ in length')
  const columnWriters = columns.map((column) => {
    const write = writers[column.type]
    if (write === undefined) throw new Error(`no binary COPY form for type ${column.type}`)
    return write
  })
  const writer = new Writer(scratch)
  writer.bytes(SIGNATURE)
  writer.int32(0) // flags: no OIDs
  writer.int32(0) // header extension length
  for (let row = 0; row < rowCount; row++) {
    writer.int16(columns.length)
    for (let column = 0; column < columns.length; column++) {
      const value = values[column][row]
      if (value === null || value === undefined) writer.int32(-1)
      else columnWriters[column](writer, value)
    }
  }
  writer.int16(-1) // trailer
  scratch = writer.buffer
  return writer.buffer.subarray(0, writer.position)
}
