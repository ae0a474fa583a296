import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { browserHeaders, obtainToken } from '../helpers/core-flow.js'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

interface SiteverifyStats {
  totals: { allow: number }
  siteverify: { redeemed: number; refused: { errorCode: string; count: number }[] }
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
  const statsOf = async (siteId: string) => {
    const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}/stats`, headers: asScript(account) })
    expect(response.statusCode).toBe(200)
    return response.json<SiteverifyStats>()
  }

  it('counts each of the site\'s tokens by its outcome: redeemed, the wrong secret, spent; and nothing that is no site\'s', async () => {
    expect((await statsOf(site.id)).siteverify).toEqual({ redeemed: 0, refused: [] })
    const headers = browserHeaders(site.siteKey)
    const [first, second, third] = [await obtainToken(service.app, headers), await obtainToken(service.app, headers), await obtainToken(service.app, headers)]

    expect(await redeem(site.secretKey, first)).toMatchObject({ success: true })
    expect(await redeem(site.secretKey, first)).toMatchObject({ 'error-codes': ['timeout-or-duplicate'] })
    // The other site's secret on this site's token: this site's backend with a wrong secret, as far as Tollgate can tell.
    expect(await redeem(other.secretKey, second)).toMatchObject({ 'error-codes': ['invalid-input-secret'] })
    expect(await redeem(site.secretKey, third)).toMatchObject({ success: true })
    // Not the site's: a made-up token, and the documented test secret.
    expect(await redeem(site.secretKey, `${first.slice(0, -4)}AAAA`)).toMatchObject({ 'error-codes': ['invalid-input-response'] })
    expect(await redeem('1x0000000000000000000000000000000AA', second)).toMatchObject({ success: true })
    await service.app.siteverifyCounts.flush()
    await service.app.verificationLog.flush()

    const stats = await statsOf(site.id)
    expect(stats.totals.allow).toBe(3)
    expect(stats.siteverify).toEqual({
      redeemed: 2,
      refused: [
        { errorCode: 'invalid-input-secret', count: 1 },
        { errorCode: 'timeout-or-duplicate', count: 1 },
      ],
    })
    expect((await statsOf(other.id)).siteverify).toEqual({ redeemed: 0, refused: [] })
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
})
