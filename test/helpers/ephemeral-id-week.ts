import type { TestContext } from 'vitest'
import { EPHEMERAL_ID_PERIOD_MS } from '../../src/domain/token/ephemeral-id.js'
import { startWithinOneWindow } from './rate-limit-window.js'

/** Monday 1970-01-05 00:00 UTC: ephemeral ids change at this time of every week. */
const FIRST_MONDAY = Date.UTC(1970, 0, 5)

/**
 * A device's ephemeral id changes every Monday at 00:00 UTC (src/domain/token/ephemeral-id.ts),
 * so a test that expects one device to get one id from two verifications must make both in one
 * week: a run across that midnight gets another id the second time. As a beforeEach hook (whose
 * timeout, 60 s, is longer than a test's, 30 s), this waits for the next week when the current
 * one ends within the test's timeout: a test that does not time out is then over within a week.
 */
export async function startWithinOneEphemeralIdWeek({ task }: Pick<TestContext, 'task'>): Promise<void> {
  await startWithinOneWindow(EPHEMERAL_ID_PERIOD_MS, task.timeout, FIRST_MONDAY)
}
