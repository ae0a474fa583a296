import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Challenge } from '../src/domain/challenge/issue-challenge.js'
import { openDatabase } from '../src/storage/open-storage.js'
import { browserHeaders, humanSubmission } from './helpers/core-flow.js'
import { hasRedisServer, startPrivateRedis } from './helpers/private-redis.js'
import { createScratchDatabase } from './helpers/scratch-database.js'
import { killStartedServers, startServerProcess, type StartedServer } from './helpers/server-process.js'
import { hasPostgres } from './helpers/services.js'

/**
 * The promise of the verification log (issue 3, DESIGN section 5): every verification, accepted
 * or not, lands in the log without a database round trip on the response path, and nothing is
 * lost on a graceful shutdown. Here the real process is stopped with SIGTERM while visitors keep
 * submitting, and its database is read afterwards: every answer a visitor got has its row.
 */
afterAll(killStartedServers)

/** Visitors submitting at once: each asks for a challenge and submits, again and again. */
const VISITORS = 12
/** Challenges solved before the load, submitted during it: verifications that pass and get a token. */
const SOLVED = 4
/** Verifications answered before SIGTERM is sent. */
const BEFORE_STOP = 150

interface Answer {
  requestId: string
  status: number
}

interface LoadOutcome {
  answers: Answer[]
  /** Verify requests sent whose answer never came (the connection closed under them). */
  unanswered: number
}

/**
 * Whether an answer is Fastify's to a request that arrived on a kept-alive connection once the
 * close had begun: 503 before any route or hook runs, so no verification (and no request id).
 */
function refusedWhileClosing(status: number, body: string): boolean {
  return status === 503 && body === '{"error":"Service Unavailable","message":"Service Unavailable","statusCode":503}'
}

async function postJson(url: string, headers: Record<string, string>, body?: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
}

/**
 * Runs the visitors until each finds the service gone (its request refused or cut), sending
 * SIGTERM once `beforeStop` verifications have been answered. A visitor submits a wrong nonce
 * (a rejected verification, logged as such) unless a solved challenge is left to submit.
 */
async function loadUntilStopped(started: StartedServer, beforeStop: number): Promise<LoadOutcome> {
  const headers = browserHeaders(started.siteKey, started.baseUrl)
  const solved: unknown[] = []
  for (let index = 0; index < SOLVED; index += 1) {
    const challenge = (await (await postJson(`${started.baseUrl}/api/v1/challenge`, headers)).json()) as Challenge
    solved.push(humanSubmission(challenge))
  }
  const answers: Answer[] = []
  let unanswered = 0
  let stopSent = false
  const visitor = async (): Promise<void> => {
    for (;;) {
      let submission: unknown
      try {
        const issued = await postJson(`${started.baseUrl}/api/v1/challenge`, headers)
        // Anything but a challenge is the service closing (refusedWhileClosing): the visitor is done.
        if (issued.status !== 200) return
        submission = solved.pop() ?? humanSubmission((await issued.json()) as Challenge, 'abc')
      } catch {
        return
      }
      let answer: Response
      let body: string
      try {
        answer = await postJson(`${started.baseUrl}/api/v1/verify`, headers, submission)
        body = await answer.text()
      } catch {
        unanswered += 1
        return
      }
      if (refusedWhileClosing(answer.status, body)) return
      answers.push({ requestId: answer.headers.get('x-request-id') ?? '', status: answer.status })
      if (!stopSent && answers.length >= beforeStop) {
        stopSent = true
        started.process.kill('SIGTERM')
      }
    }
  }
  await Promise.all(Array.from({ length: VISITORS }, visitor))
  return { answers, unanswered }
}

async function expectEveryAnswerLogged(
  started: StartedServer,
  storage: { dataDirectory: string; databaseUrl: string | undefined },
): Promise<LoadOutcome> {
  const { answers, unanswered } = await loadUntilStopped(started, BEFORE_STOP)
  // The log's last lines tell why, should it not.
  expect(await started.exited, started.output().split('\n').slice(-10).join('\n')).toBe(0)
  // The shutdown finished and says so (a kill would not), with nothing left unwritten.
  const lines = started.output().trim().split('\n')
  expect(JSON.parse(lines.at(-1) ?? '{}')).toMatchObject({ msg: 'stopped', written: expect.objectContaining({ 'verification log rows': expect.any(Number) }) })

  expect(answers.length).toBeGreaterThanOrEqual(BEFORE_STOP)
  // Wrong nonces and solved challenges both got their answers: 400 invalid_solution, and 200 verdicts.
  expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([200, 400]))
  expect(answers.filter((answer) => answer.status === 200)).toHaveLength(SOLVED)

  const database = await openDatabase(storage)
  try {
    const rows = await database.query<{ id: string; action: string }>('SELECT id, action FROM verifications')
    const logged = new Map(rows.map((row) => [row.id, row.action]))
    // Every answered verification has its row: the scored ones with their verdict, the wrong nonces as rejected.
    const missing = answers.filter((answer) => !logged.has(answer.requestId))
    expect(missing).toEqual([])
    expect(answers.filter((answer) => answer.status === 400).every((answer) => logged.get(answer.requestId) === 'rejected')).toBe(true)
    expect(answers.filter((answer) => answer.status === 200).every((answer) => logged.get(answer.requestId) !== 'rejected')).toBe(true)
    // A row beyond the answers can only be a request whose answer the closing connection lost.
    expect(rows.length - answers.length).toBeGreaterThanOrEqual(0)
    expect(rows.length - answers.length).toBeLessThanOrEqual(unanswered)
    // The hourly counts the dashboard reads were written with the rows, in the same transactions.
    const [counted] = await database.query<{ total: string }>("SELECT coalesce(sum(count), 0)::text AS total FROM verification_rollups WHERE kind = 'action'")
    expect(Number(counted?.total)).toBe(rows.length)
  } finally {
    await database.close()
  }
  return { answers, unanswered }
}

describe('SIGTERM while visitors submit', () => {
  it('on the embedded stores: exits 0, and every verification a visitor got an answer for is in the log with its hourly count', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tollgate-drain-'))
    const started = await startServerProcess({ DATA_DIR: dataDirectory, RATE_LIMIT_PER_MINUTE: '0' })
    await expectEveryAnswerLogged(started, { dataDirectory, databaseUrl: undefined })
  }, 120_000)

  it('with SHUTDOWN_DELAY on the embedded stores: serves on through the drain, then the same', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tollgate-drain-'))
    const started = await startServerProcess({ DATA_DIR: dataDirectory, RATE_LIMIT_PER_MINUTE: '0', SHUTDOWN_DELAY: '1000' })
    const { answers } = await expectEveryAnswerLogged(started, { dataDirectory, databaseUrl: undefined })
    // The visitors were answered through the drain's second, not only up to the signal.
    expect(answers.length).toBeGreaterThan(BEFORE_STOP + VISITORS)
  }, 120_000)

  it.skipIf(!hasPostgres || !hasRedisServer)('on PostgreSQL and Redis: the same', async () => {
    const database = await createScratchDatabase('tollgate_drain')
    const redis = await startPrivateRedis()
    try {
      const dataDirectory = mkdtempSync(join(tmpdir(), 'tollgate-drain-'))
      const started = await startServerProcess({ DATA_DIR: dataDirectory, DATABASE_URL: database.url, REDIS_URL: redis.url, RATE_LIMIT_PER_MINUTE: '0' })
      await expectEveryAnswerLogged(started, { dataDirectory, databaseUrl: database.url })
    } finally {
      await redis.stop()
      await database.drop()
    }
  }, 120_000)
})
