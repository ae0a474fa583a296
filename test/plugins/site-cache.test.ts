import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { isSecretKeyOf } from '../../src/domain/sites/site-keys.js'
import { createTestSite, type TestSite } from '../helpers/core-flow.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

describe('the site cache', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp()
  })
  afterAll(() => service.close())

  /** Counts the database reads of sites by public key from now on. */
  function countKeyLookups() {
    const query = vi.spyOn(service.app.database, 'query')
    return {
      count: () => query.mock.calls.filter(([sql]) => sql.includes('site_key =')).length,
      stop: () => query.mockRestore(),
    }
  }

  it('does not keep a site it read before a change that was made while the read was under way', async () => {
    const site: TestSite = await createTestSite(service.app)
    // The cache's read of the site returns its row only once the test lets it.
    const query = service.app.database.query.bind(service.app.database)
    let readDone!: () => void
    const read = new Promise<void>((resolve) => (readDone = resolve))
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    const held = vi.spyOn(service.app.database, 'query').mockImplementationOnce(async (sql, params) => {
      const rows = await query(sql, params)
      readDone()
      await released
      return rows
    })
    const inFlight = service.app.siteCache.findBySiteKey(site.siteKey)
    await read
    held.mockRestore()
    // The secret is rotated (and the site invalidated) after the row was read, before the read returned.
    const newSecret = (await service.app.sites.rotateSecret(site.site.id)) ?? ''
    expect(newSecret).toMatch(/^tgs_/)
    await service.app.siteCache.invalidate(site.site)
    release()
    // The read serves its own caller with what it read...
    expect(isSecretKeyOf(site.secretKey, (await inFlight)?.secretKeyHash ?? '')).toBe(true)
    // ...but is not kept: the next lookup sees the new secret.
    const next = await service.app.siteCache.findBySiteKey(site.siteKey)
    expect(isSecretKeyOf(newSecret, next?.secretKeyHash ?? '')).toBe(true)
    expect(isSecretKeyOf(site.secretKey, next?.secretKeyHash ?? '')).toBe(false)
  })

  it('keeps the sites it knows through a flood of unknown keys, and remembers the unknown ones briefly', async () => {
    const site = await createTestSite(service.app)
    await service.app.siteCache.findBySiteKey(site.siteKey)
    for (let index = 0; index < 10_500; index++) expect(await service.app.siteCache.findBySiteKey(`tgk_unknown-${index}`)).toBeUndefined()
    const lookups = countKeyLookups()
    try {
      expect((await service.app.siteCache.findBySiteKey(site.siteKey))?.id).toBe(site.site.id)
      expect(await service.app.siteCache.findBySiteKey('tgk_unknown-10499')).toBeUndefined()
      expect(service.app.siteCache.peekBySiteKey('tgk_unknown-10499')).toBeNull()
      expect(service.app.siteCache.peekBySiteKey(site.siteKey)?.id).toBe(site.site.id)
      expect(lookups.count()).toBe(0)
    } finally {
      lookups.stop()
    }
  })
})
