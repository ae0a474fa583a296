import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { browserHeaders, obtainToken } from '../helpers/core-flow.js'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'
import { createSiteverifyCountRepository } from '../../src/storage/sql/siteverify-count-repository.js'

interface SiteverifyStats {
  totals: { allow: number }
  siteverify: { from: string; to: string; issued: number; redeemed: number; refused: { errorCode: string; count: number }[]; countedSince: string }
}

/**
 * The stats' Siteverify counts (migration 022): how a site's tokens fared at Siteverify, beside the
 * tokens it issued, so that an operator sees a backend that redeems none, or one that sends the
 * secret of before a rotation.
 */
describe.each(deployments.filter(({ available }) => available))('Siteverify counts in the stats on $name', ({ options }) => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  let other: CreatedSite

  beforeAll(async () => {
    service = await buildTestApp(options)
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account, { domains: ['shop.example.com'], settings: { difficulty: 4 } })
    other = await createTestSite(service.app, account, { domains: ['shop.example.com'], settings: { difficulty: 4 } })
  })
  afterAll(() => service.close())

  const redeem = async (secret: string, response: string) => {
    const answer = await service.app.inject({ method: 'POST', url: '/siteverify', payload: { secret, response } })
    return answer.json<{ success: boolean; 'error-codes': string[] }>()
  }
  const statsOf = async (siteId: string, query = '') => {
    const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}/stats${query}`, headers: asScript(account) })
    expect(response.statusCode).toBe(200)
    return response.json<SiteverifyStats>()
  }

  it('counts its backend\'s calls by outcome: redeemed, spent, a secret a rotation replaced; nothing that anyone else could send', async () => {
    expect((await statsOf(site.id)).siteverify).toMatchObject({ issued: 0, redeemed: 0, refused: [] })
    const headers = browserHeaders(site.siteKey)
    const [first, second, third] = [await obtainToken(service.app, headers), await obtainToken(service.app, headers), await obtainToken(service.app, headers)]

    expect(await redeem(site.secretKey, first)).toMatchObject({ success: true })
    expect(await redeem(site.secretKey, first)).toMatchObject({ 'error-codes': ['timeout-or-duplicate'] })
    // A retry with the first call's idempotency key gets the first answer, and is not a second redemption.
    const idempotent = { secret: site.secretKey, response: third, idempotency_key: 'order-17' }
    for (let call = 0; call < 2; call += 1) {
      const answer = await service.app.inject({ method: 'POST', url: '/siteverify', payload: idempotent })
      expect(answer.json()).toMatchObject({ success: true })
    }
    // Anyone holding a token may send a wrong secret, in a loop (it spends nothing): not counted.
    for (let call = 0; call < 5; call += 1) expect(await redeem(other.secretKey, second)).toMatchObject({ 'error-codes': ['invalid-input-secret'] })
    // Not the site's at all: a made-up token, and the documented test secret.
    expect(await redeem(site.secretKey, `${first.slice(0, -4)}AAAA`)).toMatchObject({ 'error-codes': ['invalid-input-response'] })
    expect(await redeem('1x0000000000000000000000000000000AA', second)).toMatchObject({ success: true })

    // A rotation, and its grace period over (two hours later): a backend that still sends the old
    // key is the site's own, not yet updated.
    const rotated = await service.app.inject({ method: 'POST', url: `/api/v1/sites/${site.id}/secret/rotate`, headers: asScript(account), payload: {} })
    expect(rotated.statusCode).toBe(200)
    await service.app.database.query("UPDATE sites SET previous_secret_expires_at = now() - interval '1 minute' WHERE id = $1", [site.id])
    await service.app.siteCache.invalidate({ id: site.id })
    expect(await redeem(site.secretKey, second)).toMatchObject({ 'error-codes': ['invalid-input-secret'] })
    site = { ...site, secretKey: rotated.json<{ secretKey: string }>().secretKey }
    expect(await redeem(site.secretKey, second)).toMatchObject({ success: true })
    await service.app.siteverifyCounts.flush()
    await service.app.verificationLog.flush()

    const stats = await statsOf(site.id)
    expect(stats.totals.allow).toBe(3)
    expect(stats.siteverify).toMatchObject({
      // The whole range is after this schema's counting began.
      issued: 3,
      redeemed: 3,
      refused: [
        { errorCode: 'invalid-input-secret', count: 1 },
        { errorCode: 'timeout-or-duplicate', count: 1 },
      ],
    })
    expect((await statsOf(other.id)).siteverify).toMatchObject({ issued: 0, redeemed: 0, refused: [] })
  })

  it('compares only the tokens issued since counting began (an upgrade\'s first days)', async () => {
    const startedAt = Date.now() - 30 * 60_000
    await service.app.database.query('UPDATE siteverify_counting SET started_at = $1', [new Date(startedAt)])
    try {
      await insertVerifications(service.app.database, [
        { siteId: other.id, createdAt: new Date(startedAt - 60_000), action: 'allow' },
        { siteId: other.id, createdAt: new Date(startedAt + 60_000), action: 'allow' },
        { siteId: other.id, createdAt: new Date(startedAt + 120_000), action: 'allow' },
      ])
      const stats = (await statsOf(other.id)).siteverify
      expect((await statsOf(other.id)).totals.allow).toBe(3)
      expect(stats).toMatchObject({ issued: 2, countedSince: new Date(startedAt).toISOString() })
    } finally {
      await service.app.database.query('UPDATE siteverify_counting SET started_at = now()')
    }
  })

  it('keeps the counts of a write that failed for the next one', async () => {
    const before = (await statsOf(site.id)).siteverify.redeemed
    const token = await obtainToken(service.app, browserHeaders(site.siteKey))
    expect(await redeem(site.secretKey, token)).toMatchObject({ success: true })
    const query = vi.spyOn(service.app.database, 'query').mockRejectedValueOnce(new Error('connection lost'))
    try {
      await expect(service.app.siteverifyCounts.flush()).rejects.toThrow('connection lost')
    } finally {
      query.mockRestore()
    }
    expect((await statsOf(site.id)).siteverify.redeemed).toBe(before)
    await service.app.siteverifyCounts.flush()
    expect((await statsOf(site.id)).siteverify.redeemed).toBe(before + 1)
  })

  it('adds each flush to the counts before it', async () => {
    const before = (await statsOf(site.id)).siteverify.redeemed
    const token = await obtainToken(service.app, browserHeaders(site.siteKey))
    expect(await redeem(site.secretKey, token)).toMatchObject({ success: true })
    await service.app.siteverifyCounts.flush()
    // Nothing new: a flush of nothing changes nothing.
    await service.app.siteverifyCounts.flush()
    expect((await statsOf(site.id)).siteverify.redeemed).toBe(before + 1)
  })

  it('answers the whole UTC hours it counted, which a range inside an hour is narrower than', async () => {
    const quiet = await createTestSite(service.app, account)
    // Two redemptions in the hour from 07:00, none of its tokens issued in the 20 seconds asked for.
    await createSiteverifyCountRepository(service.app.database).add([{ siteId: quiet.id, hourMs: Date.parse('2026-01-01T07:00:00Z'), outcome: 'success', count: 2 }])
    const inside = await statsOf(quiet.id, '?from=2026-01-01T07:00:10Z&to=2026-01-01T07:00:30Z')
    expect(inside.siteverify).toMatchObject({ from: '2026-01-01T07:00:00.000Z', to: '2026-01-01T08:00:00.000Z', issued: 0, redeemed: 2 })
    // Whole hours are counted as asked, in any time zone; the hour after is not the one before.
    const aligned = await statsOf(quiet.id, '?from=2026-01-01T12:30:00%2B05:30&to=2026-01-01T09:00:00Z')
    expect(aligned.siteverify).toMatchObject({ from: '2026-01-01T07:00:00.000Z', to: '2026-01-01T09:00:00.000Z', redeemed: 2 })
    const after = await statsOf(quiet.id, '?from=2026-01-01T08:00:00Z&to=2026-01-01T08:00:01Z')
    expect(after.siteverify).toMatchObject({ from: '2026-01-01T08:00:00.000Z', to: '2026-01-01T09:00:00.000Z', redeemed: 0 })
  })
})
