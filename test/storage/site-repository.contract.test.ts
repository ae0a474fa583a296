import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defaultSiteSettings } from '../../src/domain/sites/site.js'
import { isSecretKeyOf } from '../../src/domain/sites/site-keys.js'
import { createSiteRepository, type SiteRepository } from '../../src/storage/sql/site-repository.js'
import { databaseKinds, openTestDatabase, type TestDatabase } from '../helpers/storage.js'

describe.each(databaseKinds)('site repository on $kind', ({ kind, available }) => {
  let subject: TestDatabase
  let sites: SiteRepository

  beforeAll(async () => {
    if (!available) return
    subject = await openTestDatabase(kind)
    sites = createSiteRepository(subject.database)
  })
  afterAll(async () => {
    if (!available) return
    await subject.database.close()
    await subject.dispose()
  })

  it.skipIf(!available)('creates a site with default settings and a secret that is stored only as a hash', async () => {
    const { site, secretKey } = await sites.create({ accountId: null, name: 'Shop', domains: ['shop.example'] })
    expect(site).toMatchObject({ name: 'Shop', domains: ['shop.example'], settings: defaultSiteSettings, accountId: null })
    expect(site.siteKey).toMatch(/^tgk_[\w-]{22}$/)
    expect(secretKey).toMatch(/^tgs_[\w-]{43}$/)
    expect(isSecretKeyOf(secretKey, site.secretKeyHash)).toBe(true)
    expect(isSecretKeyOf(`${secretKey}x`, site.secretKeyHash)).toBe(false)
    const stored = await subject.database.query('SELECT * FROM sites WHERE id = $1', [site.id])
    expect(JSON.stringify(stored)).not.toContain(secretKey)
  })

  it.skipIf(!available)('finds a site by id and by site key; unknown ones are undefined', async () => {
    const { site } = await sites.create({ accountId: null, name: 'Blog' })
    expect(await sites.findById(site.id)).toEqual(site)
    expect(await sites.findBySiteKey(site.siteKey)).toEqual(site)
    expect(await sites.findById(randomUUID())).toBeUndefined()
    expect(await sites.findBySiteKey('tgk_unknown')).toBeUndefined()
  })

  it.skipIf(!available)('merges settings key by key; null removes a key back to its default', async () => {
    const { site } = await sites.create({ accountId: null, name: 'Forum', settings: { difficulty: 20 } })
    const updated = await sites.update(site.id, { settings: { webhookUrl: 'https://hooks.example/in', blockThreshold: 80 } })
    expect(updated?.settings).toEqual({ ...defaultSiteSettings, difficulty: 20, webhookUrl: 'https://hooks.example/in', blockThreshold: 80 })
    const cleared = await sites.update(site.id, { settings: { webhookUrl: null, difficulty: null } })
    expect(cleared?.settings).toEqual({ ...defaultSiteSettings, blockThreshold: 80 })
    expect(cleared?.updatedAt.getTime()).toBeGreaterThanOrEqual(site.updatedAt.getTime())
  })

  it.skipIf(!available)('counts every change in the revision, and updates only a site still at an expected revision', async () => {
    const { site } = await sites.create({ accountId: null, name: 'Shop' })
    const renamed = await sites.update(site.id, { name: 'Shop 2' }, [site.revision])
    expect(renamed?.name).toBe('Shop 2')
    expect(renamed?.revision).not.toBe(site.revision)
    expect(await sites.update(site.id, { name: 'Stale' }, [site.revision])).toBeUndefined()
    expect(await sites.update(site.id, { name: 'None listed' }, [])).toBeUndefined()
    await sites.rotateSecret(site.id)
    const rotated = await sites.findById(site.id)
    expect(rotated?.revision).not.toBe(renamed?.revision)
    await sites.endPreviousSecret(site.id)
    const ended = await sites.findById(site.id)
    expect(ended?.revision).not.toBe(rotated?.revision)
    expect(await sites.update(site.id, { name: 'Stale again' }, [renamed?.revision ?? ''])).toBeUndefined()
    expect((await sites.update(site.id, { name: 'Current' }, ['0', ended?.revision ?? '']))?.name).toBe('Current')
    expect((await sites.findById(site.id))?.name).toBe('Current')
  })

  it.skipIf(!available)('writes nothing for changes that leave the site as it is: same revision and updatedAt', async () => {
    const { site } = await sites.create({ accountId: null, name: 'Same', domains: ['same.example'], settings: { difficulty: 16 }, webhookSecretCiphertext: 'sealed-1' })
    for (const changes of [
      {},
      { name: 'Same', domains: ['same.example'], settings: { difficulty: 16 } },
      { settings: { blockThreshold: null } },
      { previousWebhookSecretExpiresAt: null },
    ]) {
      const unchanged = await sites.update(site.id, changes, [site.revision])
      expect(unchanged, JSON.stringify(changes)).toEqual(site)
    }
    expect(await sites.update(site.id, {}, ['0'])).toBeUndefined()
    expect(await sites.update(randomUUID(), {})).toBeUndefined()
    const changed = await sites.update(site.id, { settings: { difficulty: 17 } }, [site.revision])
    expect(changed?.revision).not.toBe(site.revision)
    expect(await sites.update(site.id, { settings: { difficulty: 17 } }, [site.revision])).toBeUndefined()
    expect(await sites.update(site.id, { webhookSecretCiphertext: 'sealed-1' })).toEqual(changed)
    expect((await sites.update(site.id, { webhookSecretCiphertext: 'sealed-2' }))?.revision).not.toBe(changed?.revision)
  })

  it.skipIf(!available)('keeps the webhook secret unless told to change or clear it', async () => {
    const { site } = await sites.create({ accountId: null, name: 'Wiki', webhookSecretCiphertext: 'sealed-1' })
    expect((await sites.update(site.id, { name: 'Wiki 2' }))?.webhookSecretCiphertext).toBe('sealed-1')
    expect((await sites.update(site.id, { webhookSecretCiphertext: 'sealed-2' }))?.webhookSecretCiphertext).toBe('sealed-2')
    expect((await sites.update(site.id, { webhookSecretCiphertext: null }))?.webhookSecretCiphertext).toBeNull()
  })

  it.skipIf(!available)('rotates the secret: the old one stops matching at once, or keeps working until a given time', async () => {
    const { site, secretKey } = await sites.create({ accountId: null, name: 'Docs' })
    expect(site.previousSecrets).toEqual([])
    const rotated = await sites.rotateSecret(site.id)
    const reread = await sites.findById(site.id)
    expect(rotated).toBeDefined()
    expect(reread?.previousSecrets).toEqual([])
    expect(isSecretKeyOf(secretKey, reread?.secretKeyHash ?? '')).toBe(false)
    expect(isSecretKeyOf(rotated ?? '', reread?.secretKeyHash ?? '')).toBe(true)
    expect(await sites.rotateSecret(randomUUID())).toBeUndefined()

    const until = new Date('2030-01-02T03:04:05.678Z')
    const again = await sites.rotateSecret(site.id, until)
    const withPrevious = await sites.findBySiteKey(site.siteKey)
    expect(withPrevious?.previousSecrets.map((previous) => previous.expiresAt)).toEqual([until])
    expect(isSecretKeyOf(rotated ?? '', withPrevious?.previousSecrets[0]?.keyHash ?? '')).toBe(true)
    expect(isSecretKeyOf(again ?? '', withPrevious?.secretKeyHash ?? '')).toBe(true)

    expect(await sites.endPreviousSecret(site.id)).toBe(true)
    expect((await sites.findById(site.id))?.previousSecrets).toEqual([])
    expect(await sites.endPreviousSecret(randomUUID())).toBe(false)
  })

  it.skipIf(!available)('a rotation within the grace period keeps the key from before it working too; one from before that, or an ended grace, does not come back', async () => {
    const { site, secretKey: first } = await sites.create({ accountId: null, name: 'Shop' })
    const firstUntil = new Date(Date.now() + 60_000)
    const second = await sites.rotateSecret(site.id, firstUntil)
    const secondUntil = new Date(Date.now() + 120_000)
    const third = await sites.rotateSecret(site.id, secondUntil)
    const after = await sites.findById(site.id)
    // Newest first: the key just replaced, then the one deployed before it, each with its own end.
    expect(after?.previousSecrets.map((previous) => previous.expiresAt)).toEqual([secondUntil, firstUntil])
    expect(isSecretKeyOf(second ?? '', after?.previousSecrets[0]?.keyHash ?? '')).toBe(true)
    expect(isSecretKeyOf(first, after?.previousSecrets[1]?.keyHash ?? '')).toBe(true)

    // A third rotation keeps two replaced keys: the first one stops.
    await sites.rotateSecret(site.id, new Date(Date.now() + 180_000))
    const hashes = (await sites.findById(site.id))?.previousSecrets.map((previous) => previous.keyHash) ?? []
    expect(hashes).toHaveLength(2)
    expect(hashes.some((hash) => isSecretKeyOf(first, hash))).toBe(false)
    expect(isSecretKeyOf(third ?? '', hashes[0] ?? '')).toBe(true)

    // A rotation that stops the current key at once stops every replaced key too.
    await sites.rotateSecret(site.id, null)
    expect((await sites.findById(site.id))?.previousSecrets).toEqual([])

    // A replaced key whose grace period is over is not carried into the next rotation.
    await sites.rotateSecret(site.id, new Date(Date.now() - 1_000))
    await sites.rotateSecret(site.id, new Date(Date.now() + 60_000))
    expect((await sites.findById(site.id))?.previousSecrets).toHaveLength(1)
  })

  it.skipIf(!available)('creates a site within a per-account limit, and none beyond it', async () => {
    const accountId = randomUUID()
    await subject.database.query("INSERT INTO accounts (id, email, password_hash) VALUES ($1, $2, 'hash')", [accountId, `${accountId}@example.com`])
    const first = await sites.createWithinLimit({ accountId, name: 'One', domains: ['shop.example'], settings: { difficulty: 20 } }, 2)
    expect(first?.site).toMatchObject({ accountId, name: 'One', domains: ['shop.example'], settings: expect.objectContaining({ difficulty: 20 }) })
    expect(await sites.createWithinLimit({ accountId, name: 'Two' }, 2)).toBeDefined()
    expect(await sites.createWithinLimit({ accountId, name: 'Three' }, 2)).toBeUndefined()
    expect((await sites.listByAccount(accountId)).map((site) => site.name)).toEqual(['One', 'Two'])
  })

  it.skipIf(!available)('deletes a site once', async () => {
    const { site } = await sites.create({ accountId: null, name: 'Gone' })
    expect(await sites.delete(site.id)).toBe(true)
    expect(await sites.delete(site.id)).toBe(false)
    expect(await sites.findById(site.id)).toBeUndefined()
  })
})
