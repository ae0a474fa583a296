import http from 'node:http'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { createAuditLogRepository } from '../../src/storage/sql/audit-log-repository.js'
import { asScript, createTestAccount, createTestSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'

/** More rows than one batch (500): the second batch is read after the headers are sent. */
const ROW_COUNT = 600

interface LogLine {
  level: number
  msg: string
  err?: { message?: string }
}

/** What a client of a download gets when the server's database fails: an error answer, or a transfer that fails. */
describe.each(deployments)('an export whose database fails, on $name', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  let origin: string
  const lines: LogLine[] = []
  /** The two logs' export paths, each with the table its batches read. */
  const logs: { name: string; path: () => string; table: string }[] = []

  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, logStream: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) } })
    account = await createTestAccount(service.app)
    const site = await createTestSite(service.app, account)
    const base = Date.now() - 3_600_000
    await insertVerifications(
      service.app.database,
      Array.from({ length: ROW_COUNT }, (_, index) => ({ siteId: site.id, createdAt: new Date(base + index), action: 'allow' as const })),
    )
    const auditLog = createAuditLogRepository(service.app.database)
    const actor = { type: 'api-key' as const, id: null, name: 'script', keyPrefix: null, clientIp: null, userAgent: null }
    for (let index = 0; index < ROW_COUNT; index++) await auditLog.record({ accountId: account.id, action: 'site.updated', actor, site, details: { index } })
    logs.push(
      { name: 'verification log', path: () => `/api/v1/sites/${site.id}/verifications/export`, table: 'verifications' },
      { name: 'audit log', path: () => '/api/v1/audit-log/export', table: 'audit_events' },
    )
    origin = await service.app.listen({ port: 0, host: '127.0.0.1' })
  }, 120_000)
  afterAll(async () => {
    if (available) await service.close()
  })
  afterEach(() => {
    vi.restoreAllMocks()
  })

  /** Fails the export's `nth` batch read (1 is the first) with `error`; other queries run. */
  const failBatch = (table: string, nth: number, error: Error) => {
    const query = service.app.database.query.bind(service.app.database)
    let batches = 0
    vi.spyOn(service.app.database, 'query').mockImplementation(async (sql, params) => {
      if (/^\s*SELECT id, /.test(sql) && sql.includes(`FROM ${table}`)) {
        batches += 1
        if (batches === nth) throw error
      }
      return query(sql, params)
    })
  }

  describe.each(['csv', 'ndjson'])('as %s', (format) => {
    it.skipIf(!available)('answers 503 service_unavailable as JSON, not as an attachment, when the first batch cannot be read', async () => {
      for (const log of logs) {
        failBatch(log.table, 1, Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))
        const response = await service.app.inject({ method: 'GET', url: `${log.path()}?format=${format}`, headers: asScript(account) })
        expect(response.statusCode, `${log.name}: ${response.body}`).toBe(503)
        expect(response.headers['content-type']).toMatch(/^application\/json/)
        expect(response.headers['content-disposition']).toBeUndefined()
        expect(response.json().error.code).toBe('service_unavailable')
        vi.restoreAllMocks()
      }
    })

    it.skipIf(!available)('logs a later batch that fails and resets the connection, so that the transfer fails', async () => {
      for (const log of logs) {
        const failure = new Error(`batch 2 of the ${log.name} failed (${format})`)
        failBatch(log.table, 2, failure)
        const outcome = await new Promise<{ status: number; received: string; failed: boolean }>((resolve, reject) => {
          const request = http.get(`${origin}${log.path()}?format=${format}`, { headers: asScript(account) }, (response) => {
            let received = ''
            response.setEncoding('utf8')
            response.on('data', (chunk: string) => (received += chunk))
            response.once('end', () => resolve({ status: response.statusCode ?? 0, received, failed: !response.complete }))
            response.once('error', () => resolve({ status: response.statusCode ?? 0, received, failed: true }))
          })
          request.once('error', reject)
        })
        expect(outcome.status).toBe(200)
        expect(outcome.failed, log.name).toBe(true)
        expect(outcome.received.length).toBeGreaterThan(0)
        await expect
          .poll(() => lines.find((line) => line.err?.message === failure.message), { timeout: 2_000 })
          .toMatchObject({ level: 50, msg: 'export cut off' })
        vi.restoreAllMocks()
      }
    })
  })
})
