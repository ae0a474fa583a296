import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { insertVerifications, type VerificationRow } from '../helpers/verification-rows.js'

const HOUR_MS = 3_600_000

interface StatsAnswer {
  from: string
  to: string
  interval: string
  series: { bucket: string; allow: number; challenge: number; block: number; rejected: number }[]
  topAnomalies: { label: string; count: number }[]
  topCountries: { countryCode: string; count: number }[]
  totals: Record<string, number>
}

describe('GET /api/v1/sites/{id}/stats', () => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  const now = Date.now()
  const currentHour = Math.floor(now / HOUR_MS) * HOUR_MS

  beforeAll(async () => {
    service = await buildTestApp()
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account)
    const other = await createTestSite(service.app, account)
    const at = (hoursAgo: number, minute = 5) => new Date(currentHour - hoursAgo * HOUR_MS + minute * 60_000)
    const rows: VerificationRow[] = [
      { siteId: site.id, createdAt: at(0, 0), action: 'allow', countryCode: 'NL' },
      { siteId: site.id, createdAt: at(0, 0), action: 'allow', countryCode: 'NL', anomalies: ['missing_origin'] },
      { siteId: site.id, createdAt: at(0, 0), action: 'block', countryCode: 'US', anomalies: ['datacenter_ip', 'vpn_detected'] },
      { siteId: site.id, createdAt: at(2), action: 'challenge', countryCode: 'US', anomalies: ['datacenter_ip'] },
      { siteId: site.id, createdAt: at(2), action: 'rejected', countryCode: null },
      { siteId: site.id, createdAt: at(30), action: 'block', countryCode: 'DE', anomalies: ['tor_exit'] },
      { siteId: site.id, createdAt: at(24 * 40), action: 'allow', countryCode: 'FR' },
      // Another site's rows must never be counted.
      { siteId: other.id, createdAt: at(0, 0), action: 'block', countryCode: 'CN', anomalies: ['datacenter_ip'] },
    ]
    await insertVerifications(service.app.database, rows)
  })
  afterAll(() => service.close())

  const stats = (query: string) =>
    service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/stats${query}`, headers: asScript(account) })

  it('defaults to the current hour and the 23 before it, by hour, with every bucket present and totals', async () => {
    const response = await stats('')
    expect(response.statusCode).toBe(200)
    const body = response.json<StatsAnswer>()
    expect(body.interval).toBe('hour')
    expect(Date.parse(body.from)).toBe(Math.floor(Date.parse(body.to) / HOUR_MS) * HOUR_MS - 23 * HOUR_MS)
    expect(Math.abs(Date.parse(body.to) - Date.now())).toBeLessThan(60_000)
    expect(body.series).toHaveLength(24)
    for (const point of body.series) expect(Date.parse(point.bucket) % HOUR_MS).toBe(0)
    const current = body.series.find((point) => Date.parse(point.bucket) === currentHour)
    expect(current).toEqual({ bucket: new Date(currentHour).toISOString(), allow: 2, challenge: 0, block: 1, rejected: 0 })
    const twoHoursAgo = body.series.find((point) => Date.parse(point.bucket) === currentHour - 2 * HOUR_MS)
    expect(twoHoursAgo).toMatchObject({ allow: 0, challenge: 1, block: 0, rejected: 1 })
    expect(body.totals).toEqual({ allow: 2, challenge: 1, block: 1, rejected: 1, total: 5 })
    expect(body.topAnomalies).toEqual([
      { label: 'datacenter_ip', count: 2 },
      { label: 'missing_origin', count: 1 },
      { label: 'vpn_detected', count: 1 },
    ])
    expect(body.topCountries).toEqual([
      { countryCode: 'NL', count: 2 },
      { countryCode: 'US', count: 2 },
    ])
  })

  it('counts from <= time < to in daily UTC buckets', async () => {
    const to = new Date(currentHour + HOUR_MS)
    const from = new Date(to.getTime() - 3 * 24 * HOUR_MS)
    const response = await stats(`?from=${from.toISOString()}&to=${to.toISOString()}&interval=day`)
    expect(response.statusCode).toBe(200)
    const body = response.json<StatsAnswer>()
    expect(body.from).toBe(from.toISOString())
    expect(body.interval).toBe('day')
    for (const point of body.series) expect(point.bucket).toMatch(/T00:00:00\.000Z$/)
    expect(body.totals).toEqual({ allow: 2, challenge: 1, block: 2, rejected: 1, total: 6 })
    expect(body.topCountries).toContainEqual({ countryCode: 'DE', count: 1 })
  })

  it('answers zero counts for a range without verifications', async () => {
    const response = await stats('?from=2020-01-01T00:00:00Z&to=2020-01-01T03:00:00Z')
    expect(response.json()).toMatchObject({
      series: [
        { bucket: '2020-01-01T00:00:00.000Z', allow: 0, challenge: 0, block: 0, rejected: 0 },
        { bucket: '2020-01-01T01:00:00.000Z', allow: 0, challenge: 0, block: 0, rejected: 0 },
        { bucket: '2020-01-01T02:00:00.000Z', allow: 0, challenge: 0, block: 0, rejected: 0 },
      ],
      topAnomalies: [],
      topCountries: [],
      totals: { allow: 0, challenge: 0, block: 0, rejected: 0, total: 0 },
    })
  })

  it.each([
    ['?from=2024-01-02T00:00:00Z&to=2024-01-01T00:00:00Z', 'querystring.from'],
    ['?from=2024-01-01T00:00:00Z&to=2024-03-01T00:00:00Z&interval=hour', 'querystring.from'],
    ['?from=2024-01-01T00:00:00Z&to=2024-06-01T00:00:00Z&interval=day', 'querystring.from'],
    ['?from=yesterday', 'querystring.from'],
    ['?interval=week', 'querystring.interval'],
  ])('answers 400 validation_error for %s', async (query, field) => {
    const response = await stats(query)
    expect(response.statusCode).toBe(400)
    expect(response.json().error.code).toBe('validation_error')
    expect(response.json().error.details).toContainEqual(expect.objectContaining({ field }))
  })
})
