import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSiteRepository } from '../../src/storage/sql/site-repository.js'
import {
  createWebhookDeliveryRepository,
  type WebhookDelivery,
  type WebhookDeliveryRepository,
} from '../../src/storage/sql/webhook-delivery-repository.js'
import { databaseKinds, openTestDatabase, type TestDatabase } from '../helpers/storage.js'

function delivery(siteId: string, createdAt: Date, overrides: Partial<WebhookDelivery> = {}): WebhookDelivery {
  return {
    id: randomUUID(),
    siteId,
    event: 'verification.blocked',
    url: 'https://hooks.example.com/',
    isTest: false,
    verificationId: randomUUID(),
    redeliveryOf: null,
    outcome: 'delivered',
    statusCode: 200,
    latencyMs: 12,
    error: null,
    createdAt,
    ...overrides,
  }
}

describe.each(databaseKinds.filter(({ available }) => available))('webhook delivery repository on $kind', ({ kind }) => {
  let testDatabase: TestDatabase
  let deliveries: WebhookDeliveryRepository
  let createSite: () => Promise<string>
  beforeAll(async () => {
    testDatabase = await openTestDatabase(kind)
    deliveries = createWebhookDeliveryRepository(testDatabase.database)
    const sites = createSiteRepository(testDatabase.database)
    createSite = async () => (await sites.create({ accountId: null, name: 'Deliveries' })).site.id
  })
  afterAll(async () => {
    await testDatabase.database.close()
    await testDatabase.dispose()
  })

  it('records and lists a site’s deliveries newest first, with every field', async () => {
    const siteId = await createSite()
    const otherSiteId = await createSite()
    const older = delivery(siteId, new Date(Date.now() - 60_000), { outcome: 'timeout', statusCode: null, latencyMs: 10_000, error: 'no answer within 10 s' })
    const newer = delivery(siteId, new Date(), { isTest: true, verificationId: null })
    await deliveries.record(older)
    await deliveries.record(newer)
    await deliveries.record(delivery(otherSiteId, new Date()))

    expect(await deliveries.listRecent(siteId, 10)).toEqual([newer, older])
    expect(await deliveries.listRecent(siteId, 1)).toEqual([newer])
    expect(await deliveries.findById(older.id)).toEqual(older)
  })

  it('lists the deliveries of one outcome or event kind, keeps a resend\'s first delivery, and finds a listed row of the site alone', async () => {
    const siteId = await createSite()
    const otherSiteId = await createSite()
    const failed = delivery(siteId, new Date(Date.now() - 3_000), { outcome: 'failed', statusCode: 500 })
    const surge = delivery(siteId, new Date(Date.now() - 2_000), { event: 'surge.started', verificationId: null, outcome: 'failed', statusCode: 500 })
    const resent = delivery(siteId, new Date(Date.now() - 1_000), { verificationId: failed.verificationId, redeliveryOf: failed.id })
    const expired = delivery(siteId, new Date(Date.now() - 40 * 86_400_000), { outcome: 'failed' })
    for (const row of [failed, surge, resent, expired]) await deliveries.record(row)

    const listed = async (page: Omit<Parameters<WebhookDeliveryRepository['listPage']>[1], 'limit'>) =>
      (await deliveries.listPage(siteId, { limit: 10, ...page })).map((entry) => entry.delivery)
    expect(await listed({ outcome: 'failed' })).toEqual([surge, failed])
    expect(await listed({ outcome: 'failed', event: 'verification.blocked' })).toEqual([failed])
    expect(await listed({ event: 'verification.blocked' })).toEqual([resent, failed])
    expect(await listed({ outcome: 'timeout' })).toEqual([])
    expect(await deliveries.findListed(siteId, resent.id)).toEqual(resent)
    expect(await deliveries.findListed(otherSiteId, resent.id)).toBeUndefined()
    expect(await deliveries.findListed(siteId, expired.id)).toBeUndefined()
  })

  it('prunes beyond the newest rows kept and older than the maximum age', async () => {
    const siteId = await createSite()
    const now = Date.now()
    const recent = Array.from({ length: 5 }, (_, index) => delivery(siteId, new Date(now - index * 1_000)))
    const ancient = delivery(siteId, new Date(now - 31 * 86_400_000))
    for (const row of [...recent, ancient]) await deliveries.record(row)

    expect(await deliveries.prune(siteId, { keep: 3, maxAgeDays: 30 })).toBe(3)
    expect((await deliveries.listRecent(siteId, 10)).map((row) => row.id)).toEqual(recent.slice(0, 3).map((row) => row.id))
    expect(await deliveries.prune(siteId, { keep: 3, maxAgeDays: 30 })).toBe(0)
  })

  it('lists no row older than the maximum age, and deletes such rows of every site at once', async () => {
    const quiet = await createSite()
    const other = await createSite()
    const now = Date.now()
    const kept = delivery(quiet, new Date(now - 29 * 86_400_000))
    const expired = [delivery(quiet, new Date(now - 40 * 86_400_000)), delivery(other, new Date(now - 40 * 86_400_000))]
    for (const row of [kept, ...expired]) await deliveries.record(row)

    expect(await deliveries.listRecent(quiet, 10)).toEqual([kept])
    expect(await deliveries.listRecent(other, 10)).toEqual([])
    expect(await deliveries.pruneExpired()).toBeGreaterThanOrEqual(2)
    for (const row of expired) expect(await deliveries.findById(row.id)).toBeUndefined()
    expect(await deliveries.findById(kept.id)).toEqual(kept)
  })

  it('deletes a site’s deliveries with the site', async () => {
    const siteId = await createSite()
    await deliveries.record(delivery(siteId, new Date()))
    await createSiteRepository(testDatabase.database).delete(siteId)
    expect(await deliveries.listRecent(siteId, 10)).toEqual([])
  })
})
