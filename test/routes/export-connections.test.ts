import http from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { MAX_EXPORTS_PER_ACCOUNT } from '../../src/plugins/log-exports.js'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'

/** 24 batches of 500 rows, of some 2 MB each: far more than the sockets' buffers hold. */
const ROW_COUNT = 12_000
const BATCHES = ROW_COUNT / 500

/** A download under way: its answer's status and headers, and whether its transfer failed, once it ends. */
interface OpenDownload {
  status: number
  headers: http.IncomingHttpHeaders
  /** Settles when the transfer ends: true when it was cut off (the body incomplete). */
  ended: Promise<boolean>
  /** Reads the rest, as a client that catches up would. */
  drain(): void
  abort(): void
}

/** Starts a download and reads only its first bytes: the rest waits on the client, as a slow one's would. */
function startDownload(url: string, headers: Record<string, string>): Promise<OpenDownload> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers }, (response) => {
      const ended = new Promise<boolean>((settle) => {
        response.once('end', () => settle(!response.complete))
        response.once('error', () => settle(true))
        response.once('aborted', () => settle(true))
      })
      response.once('data', () => {
        response.pause()
        resolve({ status: response.statusCode ?? 0, headers: response.headers, ended, drain: () => response.resume(), abort: () => request.destroy() })
      })
    })
    request.once('error', (error) => (request.destroyed ? undefined : reject(error)))
  })
}

/** Long downloads and the server: a client that goes away, how many at once, HEAD, and a shutdown while they run. */
describe.each(deployments)('exports and their connections, on $name', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  let origin: string
  const exportPath = () => `/api/v1/sites/${site.id}/verifications/export`

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
    const download = await startDownload(`${origin}${exportPath()}`, asScript(account))
    expect(download.status).toBe(200)
    download.abort()
    // What was under way when the client went finishes; nothing after it starts.
    await sleep(500)
    const afterDisconnect = batchesRead()
    await sleep(1_000)
    expect(batchesRead()).toBe(afterDisconnect)
    expect(afterDisconnect).toBeGreaterThanOrEqual(1)
    expect(afterDisconnect).toBeLessThan(BATCHES)
    reads.mockRestore()
  })

  it.skipIf(!available)(`runs at most ${MAX_EXPORTS_PER_ACCOUNT} exports of an account at once, and frees a slot when a download ends`, async () => {
    const downloads = []
    for (let index = 0; index < MAX_EXPORTS_PER_ACCOUNT; index++) downloads.push(await startDownload(`${origin}${exportPath()}`, asScript(account)))
    expect(downloads.map((download) => download.status)).toEqual(Array(MAX_EXPORTS_PER_ACCOUNT).fill(200))
    for (const path of [exportPath(), '/api/v1/audit-log/export']) {
      const refused = await service.app.inject({ method: 'GET', url: path, headers: asScript(account) })
      expect(refused.statusCode, refused.body).toBe(429)
      expect(refused.json().error).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('in progress') as string })
      expect(refused.headers['content-disposition']).toBeUndefined()
    }
    // Another account has slots of its own.
    const other = await createTestAccount(service.app)
    expect((await service.app.inject({ method: 'GET', url: '/api/v1/audit-log/export', headers: asScript(other) })).statusCode).toBe(200)

    downloads[0]?.abort()
    await expect
      .poll(async () => (await service.app.inject({ method: 'GET', url: `${exportPath()}?from=${new Date().toISOString()}`, headers: asScript(account) })).statusCode)
      .toBe(200)
    for (const download of downloads) download.abort()
    await sleep(200)
  })

  it.skipIf(!available)('answers HEAD as a route without it, rather than reading the log to send nothing', async () => {
    for (const path of [exportPath(), '/api/v1/audit-log/export']) {
      const response = await service.app.inject({ method: 'HEAD', url: path, headers: asScript(account) })
      expect(response.statusCode).toBe(405)
      expect(response.headers.allow).toBe('GET')
      expect(response.headers['content-disposition']).toBeUndefined()
    }
  })

  it.skipIf(!available)('closes the connection after an export, so that no keep-alive socket holds a shutdown up', async () => {
    const response = await service.app.inject({ method: 'GET', url: `${exportPath()}?from=${new Date().toISOString()}`, headers: asScript(account) })
    expect(response.statusCode).toBe(200)
    expect(response.headers.connection).toBe('close')
  })

  // Last: it closes the app.
  it.skipIf(!available)('cuts a download in progress off when the app closes, rather than waiting for it', async () => {
    const download = await startDownload(`${origin}${exportPath()}`, asScript(account))
    expect(download.status).toBe(200)
    const startedAt = Date.now()
    const closed = await Promise.race([service.close().then(() => 'closed'), sleep(5_000).then(() => 'still open')])
    // The client reads what had reached it: the transfer ends there, failed, not as a complete file.
    download.drain()
    const isCutOff = await Promise.race([download.ended, sleep(2_000).then(() => 'still open')])
    download.abort()
    expect(closed).toBe('closed')
    expect(Date.now() - startedAt).toBeLessThan(5_000)
    expect(isCutOff).toBe(true)
  }, 20_000)
})
