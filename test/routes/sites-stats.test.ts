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
  topHostnames: { hostname: string; count: number }[]
  topPageActions: { pageAction: string; count: number }[]
  scoreDistribution: { min: number; max: number; count: number }[]
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
      { siteId: site.id, createdAt: at(0, 0), action: 'allow', countryCode: 'NL', riskScore: 0, hostname: 'www.shop.example', pageAction: 'signup' },
      { siteId: site.id, createdAt: at(0, 0), action: 'allow', countryCode: 'NL', anomalies: ['missing_origin'], riskScore: 25, hostname: null },
      { siteId: site.id, createdAt: at(0, 0), action: 'block', countryCode: 'US', anomalies: ['datacenter_ip', 'vpn_detected'], riskScore: 100, hostname: 'shop.example', pageAction: 'login' },
      { siteId: site.id, createdAt: at(2), action: 'challenge', countryCode: 'US', anomalies: ['datacenter_ip'], riskScore: 45, hostname: 'www.shop.example', pageAction: 'login' },
      { siteId: site.id, createdAt: at(2), action: 'rejected', countryCode: null, riskScore: null, hostname: 'www.shop.example', pageAction: 'signup' },
      { siteId: site.id, createdAt: at(30), action: 'block', countryCode: 'DE', anomalies: ['tor_exit'], riskScore: 95, hostname: 'shop.example', pageAction: 'login' },
      { siteId: site.id, createdAt: at(24 * 40), action: 'allow', countryCode: 'FR' },
      // Another site's rows must never be counted.
      { siteId: other.id, createdAt: at(0, 0), action: 'block', countryCode: 'CN', anomalies: ['datacenter_ip'], riskScore: 90, hostname: 'other.example' },
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
    // Hostnames of scored rows only: the rejected row's costs no proof of work to make up.
    expect(body.topHostnames).toEqual([
      { hostname: 'www.shop.example', count: 2 },
      { hostname: 'shop.example', count: 1 },
    ])
    // Page actions likewise: which form is asked most, and which is attacked.
    expect(body.topPageActions).toEqual([
      { pageAction: 'login', count: 2 },
      { pageAction: 'signup', count: 1 },
    ])
    expect(body.scoreDistribution).toEqual([
      { min: 0, max: 9, count: 1 },
      { min: 10, max: 19, count: 0 },
      { min: 20, max: 29, count: 1 },
      { min: 30, max: 39, count: 0 },
      { min: 40, max: 49, count: 1 },
      { min: 50, max: 59, count: 0 },
      { min: 60, max: 69, count: 0 },
      { min: 70, max: 79, count: 0 },
      { min: 80, max: 89, count: 0 },
      { min: 90, max: 100, count: 1 },
    ])
  })

  it('counts the scores and hostnames of a part of an hour from the log as the hours from the rollups', async () => {
    // From inside the hour 30 hours ago (its row at minute 5 is counted from the log) to the start of the current hour.
    const from = new Date(currentHour - 30 * HOUR_MS + 60_000)
    const response = await stats(`?from=${from.toISOString()}&to=${new Date(currentHour).toISOString()}`)
    const body = response.json<StatsAnswer>()
    expect(body.topHostnames).toEqual([
      { hostname: 'shop.example', count: 1 },
      { hostname: 'www.shop.example', count: 1 },
    ])
    expect(body.topPageActions).toEqual([{ pageAction: 'login', count: 2 }])
    expect(body.scoreDistribution.filter(({ count }) => count > 0)).toEqual([
      { min: 40, max: 49, count: 1 },
      { min: 90, max: 100, count: 1 },
    ])
  })

  it("answers a flood's made-up hostnames and page actions beyond an hour's bound as one reserved value, the totals whole", async () => {
    const flooded = await createTestSite(service.app, account)
    const hour = currentHour - 5 * HOUR_MS
    // The site's own form 10 times, then 110 verifications each with its own Origin subdomain and page action.
    await insertVerifications(service.app.database, Array.from({ length: 120 }, (_, index): VerificationRow => ({
      siteId: flooded.id, createdAt: new Date(hour + index * 20_000), action: 'block', riskScore: 90,
      hostname: index < 10 ? 'shop.example' : `f${index}.shop.example`, pageAction: index < 10 ? 'login' : `f${index}`,
    })))
    const response = await service.app.inject({
      method: 'GET', url: `/api/v1/sites/${flooded.id}/stats?from=${new Date(hour).toISOString()}&to=${new Date(hour + HOUR_MS).toISOString()}`, headers: asScript(account),
    })
    const body = response.json<StatsAnswer>()
    expect(body.totals.total).toBe(120)
    // The popular one and 99 made-up ones are counted as themselves, the 11 after under the reserved value.
    expect(body.topHostnames.slice(0, 2)).toEqual([{ hostname: '<other>', count: 11 }, { hostname: 'shop.example', count: 10 }])
    expect(body.topPageActions.slice(0, 2)).toEqual([{ pageAction: '<other>', count: 11 }, { pageAction: 'login', count: 10 }])
    expect(body.topHostnames).toHaveLength(10)
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
      topHostnames: [],
      topPageActions: [],
      scoreDistribution: Array.from({ length: 10 }, (_, index) => ({ min: index * 10, max: index === 9 ? 100 : index * 10 + 9, count: 0 })),
      totals: { allow: 0, challenge: 0, block: 0, rejected: 0, total: 0 },
    })
  })

  it('serves the last range it allows (in the year 9999, rounded to whole hours and days) and refuses one ending later', async () => {
    for (const query of ['?from=9999-12-30T20:30:00Z&to=9999-12-31T00:00:00Z', '?from=9999-12-29T12:00:00Z&to=9999-12-31T00:00:00Z&interval=day']) {
      const response = await stats(query)
      expect(response.statusCode, query).toBe(200)
      expect(response.json().totals, query).toEqual({ allow: 0, challenge: 0, block: 0, rejected: 0, total: 0 })
    }
    const later = await stats('?to=9999-12-31T23:59:59.999Z')
    expect([later.statusCode, later.json().error.details]).toEqual([400, [{ field: 'querystring.to', message: 'must be from 1970-01-01 to 9999-12-31T00:00:00Z' }]])
  })

  it('refuses more than milliseconds, as the exports do, rather than cutting them off', async () => {
    const exportOf = (query: string) =>
      service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications/export${query}`, headers: asScript(account) })
    const tooPrecise: [query: string, field: string][] = [
      ['?from=2026-11-30T07:00:00.123456Z&to=2026-11-30T08:00:00Z', 'querystring.from'],
      ['?from=2026-11-30T07:00:00Z&to=2026-11-30T09:00:00.1234%2B01:00', 'querystring.to'],
      // The date-time format also takes a space for the T.
      ['?from=2026-12-01%2000:00:00.1234567Z&to=2026-12-01T08:00:00Z', 'querystring.from'],
      ['?from=2026-11-30T07:00:00Z&to=2026-12-01%2000:00:00.1234Z', 'querystring.to'],
    ]
    for (const [query, field] of tooPrecise) {
      for (const response of [await stats(query), await exportOf(query)]) {
        expect([response.statusCode, response.json().error.details], query).toEqual([
          400,
          [{ field, message: 'must give at most 3 digits of fractions of a second (milliseconds)' }],
        ])
      }
    }
    const milliseconds = await stats('?from=2026-11-30T07:00:00.123Z&to=2026-11-30T09:00:00.000%2B01:00')
    expect(milliseconds.json<StatsAnswer>()).toMatchObject({ from: '2026-11-30T07:00:00.123Z', to: '2026-11-30T08:00:00.000Z' })
  })

  it('says a leap second is not supported, as the exports do', async () => {
    const exportOf = (query: string) =>
      service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications/export${query}`, headers: asScript(account) })
    const query = '?from=2016-12-31T23:59:60Z&to=2017-01-01T01:00:00Z'
    for (const response of [await stats(query), await exportOf(query)]) {
      expect([response.statusCode, response.json().error.details]).toEqual([
        400,
        [{ field: 'querystring.from', message: 'must not be a leap second (:60), which is not supported: give :59.999 or the next minute' }],
      ])
    }
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
