import type { BulkColumn } from '../ports.js'

/**
 * The rows of `values` (one array per column, all of one length; null is SQL NULL) in binary COPY
 * format, for `COPY table (columns...) FROM '/dev/blob' WITH (FORMAT binary)`. A value its column
 * cannot hold throws as PostgreSQL would (SQLSTATE class 22). The bytes are a view of a buffer the
 * next call writes over: copy them (a Blob does) before encoding again.
 */
export function encodeBinaryCopy(columns: readonly BulkColumn[], values: readonly (readonly unknown[])[]): Buffer
