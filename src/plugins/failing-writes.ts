import type { FastifyBaseLogger } from 'fastify'

/** How often a write that keeps failing is told again, as one line counting the failures. */
export const FAILING_WRITE_SUMMARY_MS = 30_000

export interface FailingWriteLines {
  /** The first failure's line (with the error): 'could not write the verification log'. */
  failed: string
  /** What waits meanwhile: the log field and the words the summary line counts it in ('bufferedRows', 'rows buffered'). */
  pending?: { field: string; words: string }
  /** The line once a write lands again, given what that write wrote. */
  recovered: (written: number) => string
}

export interface FailingWrites {
  /** A background write failed; `pending` is what waits for the next one. */
  failed(error: unknown, pending?: number): void
  /** A background write landed, having written `written`. */
  succeeded(written?: number): void
}

/**
 * The log of a buffer's background writes while its store is away (they are tried every second or
 * few): the first failure in full, then at most one line per FAILING_WRITE_SUMMARY_MS counting the
 * failures since and what waits, and one line when a write lands again. A stack per attempt would
 * bury the outage's start and end (the Redis connection's lost/back pair does the same).
 */
export function trackFailingWrites(log: FastifyBaseLogger, lines: FailingWriteLines, now: () => number = Date.now): FailingWrites {
  let failingSince: number | undefined
  let toldAt = 0
  let failuresSinceTold = 0
  let failures = 0
  return {
    failed(error, pending) {
      const at = now()
      const counted = lines.pending === undefined || pending === undefined ? {} : { [lines.pending.field]: pending }
      failures += 1
      if (failingSince === undefined) {
        failingSince = at
        toldAt = at
        failuresSinceTold = 0
        log.warn({ err: error, ...counted }, `${lines.failed}; will retry (told again once per ${FAILING_WRITE_SUMMARY_MS / 1000} s while it fails)`)
        return
      }
      failuresSinceTold += 1
      if (at - toldAt < FAILING_WRITE_SUMMARY_MS) return
      const message = error instanceof Error ? error.message : String(error)
      log.warn(
        { failures: failuresSinceTold, failingForSeconds: Math.round((at - failingSince) / 1000), error: message, ...counted },
        `${lines.failed}: still failing (${failuresSinceTold} failed writes in the last ${Math.round((at - toldAt) / 1000)} s${
          lines.pending === undefined || pending === undefined ? '' : `, ${pending} ${lines.pending.words}`
        }); will retry`,
      )
      toldAt = at
      failuresSinceTold = 0
    },
    succeeded(written) {
      if (failingSince === undefined) return
      log.info({ failures, failingForSeconds: Math.round((now() - failingSince) / 1000), ...(written === undefined ? {} : { written }) }, lines.recovered(written ?? 0))
      failingSince = undefined
      failures = 0
    },
  }
}
