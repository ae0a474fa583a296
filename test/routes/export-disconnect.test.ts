import http from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'

/** 24 batches of 500 rows, of some 2 MB each: far more than the sockets' buffers hold. */
const ROW_COUNT = 12_000
const BATCHES = ROW_COUNT / 500

/** A client that goes away after the first bytes of a long download must not leave the server reading the rest. */
describe.each(deployments)('an export whose client disconnects, on $name', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  let origin: string

  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp(options)
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account)
    const base = Date.now() - 3_600_000
    const userAgent = `Mozilla/5.0 ${'x'.repeat(4_000)}`
    await insertVerifications(
      service.app.database,
      Array.from({ length: ROW_COUNT }, (_, index) => ({ siteId: site.id, createdAt: new Date(base + index), action: 'allow' as const, userAgent })),
    )
    origin = await service.app.listen({ port: 0, host: '127.0.0.1' })
  }, 60_000)
  afterAll(async () => {
    if (available) await service.close()
  })

  it.skipIf(!available)('stops reading batches once the client has gone', async () => {
    const reads = vi.spyOn(service.app.database, 'query')
    const batchesRead = () => reads.mock.calls.filter(([sql]) => sql.includes('FROM verifications')).length
    await new Promise<void>((resolve, reject) => {
      const request = http.get(`${origin}/api/v1/sites/${site.id}/verifications/export`, { headers: asScript(account) }, (response) => {
        expect(response.statusCode).toBe(200)
        response.once('data', () => {
          request.destroy()
          resolve()
        })
      })
      request.once('error', (error) => (request.destroyed ? undefined : reject(error)))
    })
    // What was under way when the client went finishes; nothing after it starts.
    await sleep(500)
    const afterDisconnect = batchesRead()
    await sleep(1_000)
    expect(batchesRead()).toBe(afterDisconnect)
    expect(afterDisconnect).toBeGreaterThanOrEqual(1)
    expect(afterDisconnect).toBeLessThan(BATCHES)
    reads.mockRestore()
  })
})
