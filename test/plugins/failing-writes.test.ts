import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { trackFailingWrites } from '../../src/plugins/failing-writes.js'

interface Line {
  level: number
  msg: string
  err?: unknown
  failures?: number
  bufferedRows?: number
  written?: number
}

describe('the log of a buffer whose writes keep failing', () => {
  it('tells the first failure with its error, then one line per 30 s counting failures and rows, then the recovery', () => {
    const lines: Line[] = []
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Line) })
    let now = 0
    const failures = trackFailingWrites(
      log,
      {
        failed: 'could not write the verification log',
        pending: { field: 'bufferedRows', words: 'rows buffered' },
        recovered: (written) => `verification log written again (${written} rows)`,
      },
      () => now,
    )
    const outage = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' })
    // A write a second for 65 s, the buffer growing by 100 rows a second.
    for (let second = 0; second <= 65; second += 1) {
      now = second * 1_000
      failures.failed(outage, (second + 1) * 100)
    }
    now = 66_000
    failures.succeeded(6_700)
    failures.succeeded(20)

    expect(lines.map(({ level, msg }) => [level, msg])).toEqual([
      [40, 'could not write the verification log; will retry (told again once per 30 s while it fails)'],
      [40, 'could not write the verification log: still failing (30 failed writes in the last 30 s, 3100 rows buffered); will retry'],
      [40, 'could not write the verification log: still failing (30 failed writes in the last 30 s, 6100 rows buffered); will retry'],
      [30, 'verification log written again (6700 rows)'],
    ])
    expect(lines[0]).toMatchObject({ err: { message: 'connect ECONNREFUSED 10.0.0.5:5432' }, bufferedRows: 100 })
    // The summaries carry no stack: the first line had it.
    expect(lines[1]).toMatchObject({ failures: 30, bufferedRows: 3100 })
    expect(lines[1]?.err).toBeUndefined()
    expect(lines[3]).toMatchObject({ written: 6_700, failures: 66 })
  })

  it('tells a new outage again in full', () => {
    const lines: Line[] = []
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Line) })
    const failures = trackFailingWrites(log, { failed: 'could not store metric counters', recovered: () => 'metric counters written again' })
    failures.failed(new Error('first'))
    failures.failed(new Error('again'))
    failures.succeeded()
    failures.failed(new Error('second outage'))
    expect(lines.map(({ msg }) => msg)).toEqual([
      'could not store metric counters; will retry (told again once per 30 s while it fails)',
      'metric counters written again',
      'could not store metric counters; will retry (told again once per 30 s while it fails)',
    ])
  })
})
