import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { browserHeaders, humanSubmission } from '../helpers/core-flow.js'
import { parseCsv } from '../helpers/csv.js'
import { asBrowser, asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'

/** The service sits behind a proxy on 127.0.0.1 (app.inject's default peer), which TRUST_PROXY names. */
const PROXY = '127.0.0.1'
const OFFICE = '5.9.10.20'
const BLOCKED = '198.51.100.7'

interface LogItem {
  id: string
  verificationId: string | null
  action: string
  riskScore: number | null
  decidedBy: string | null
}

interface Feedback {
  legitimate: number
  fraudulent: number
  missed: number
  falseAlarms: number
  byList: { allowlist: { legitimate: number; fraudulent: number }; blocklist: { legitimate: number; fraudulent: number } }
}

/**
 * A verification a site's own list decided (its address allowlist, its blocklist) says so in the
 * log (decidedBy), and a label on it counts apart in the stats' feedback: the operator's list let a
 * fraud in or turned a person away, not the risk model, so it is neither missed nor a false alarm.
 */
describe.each(deployments)("the lists' decisions in the log and the feedback figures ($name)", ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  /** The log's rows of the three verifications, by who decided them. */
  const rows: Record<'allowlist' | 'blocklist' | 'model', LogItem> = {} as never
  let officeToken: string

  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, env: { TRUST_PROXY: PROXY }, config: { rateLimitPerMinute: 0 } })
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account, {
      settings: { difficulty: 4, allowedAddresses: ['5.9.10.0/24'], blockedAddresses: ['198.51.100.0/24'] },
    })
    const verify = async (clientIp: string) => {
      const headers = { ...browserHeaders(site.siteKey), 'x-forwarded-for': clientIp }
      const issued = await service.app.inject({ method: 'POST', url: '/api/v1/challenge', remoteAddress: PROXY, headers })
      const challenge = issued.json<Challenge>()
      const verified = await service.app.inject({ method: 'POST', url: '/api/v1/verify', remoteAddress: PROXY, headers, payload: humanSubmission(challenge) })
      expect(verified.statusCode, verified.body).toBe(200)
      return { challengeId: challenge.challengeId, result: verified.json<{ action: string; token?: string }>() }
    }
    const office = await verify(OFFICE)
    const blocked = await verify(BLOCKED)
    const stranger = await verify('80.187.20.31')
    expect([office.result.action, blocked.result.action, stranger.result.action]).toEqual(['allow', 'block', 'allow'])
    officeToken = office.result.token!
    await service.app.verificationLog.flush()
    const items = await logItems()
    const rowOf = (challengeId: string) => items.find((item) => item.verificationId === challengeId)!
    Object.assign(rows, { allowlist: rowOf(office.challengeId), blocklist: rowOf(blocked.challengeId), model: rowOf(stranger.challengeId) })
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  async function logItems(query = '', siteId = site.id): Promise<LogItem[]> {
    const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}/verifications${query}`, headers: asScript(account) })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<{ items: LogItem[] }>().items
  }

  async function feedbackFigures(siteId = site.id): Promise<Feedback> {
    const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${siteId}/stats`, headers: asScript(account) })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<{ feedback: Feedback }>().feedback
  }

  it.skipIf(!available)('marks each row with the list that decided it, and the model\'s with none', () => {
    expect(rows.allowlist).toMatchObject({ action: 'allow', riskScore: 0, decidedBy: 'allowlist' })
    expect(rows.blocklist).toMatchObject({ action: 'block', riskScore: 100, decidedBy: 'blocklist' })
    expect(rows.model).toMatchObject({ action: 'allow', decidedBy: null })
  })

  it.skipIf(!available)('counts a fraud the allowlist let in apart, not as missed; nor a person the blocklist stopped as a false alarm', async () => {
    // The site's backend says the office's visitor was a fraud (Siteverify feedback, by token);
    // the operator says the blocked one was a person and the stranger a fraud (the dashboard).
    const byBackend = await service.app.inject({
      method: 'POST', url: '/api/v1/siteverify/feedback', payload: { secret: site.secretKey, response: officeToken, label: 'fraudulent' },
    })
    expect(byBackend.statusCode, byBackend.body).toBe(200)
    for (const [row, label] of [[rows.blocklist, 'legitimate'], [rows.model, 'fraudulent']] as const) {
      const labeled = await service.app.inject({
        method: 'PUT', url: `/api/v1/sites/${site.id}/verifications/${row.id}/label`, headers: asBrowser(account), payload: { label },
      })
      expect(labeled.statusCode, labeled.body).toBe(200)
    }
    expect(await feedbackFigures()).toMatchObject({
      legitimate: 1,
      fraudulent: 2,
      missed: 1,
      falseAlarms: 0,
      byList: { allowlist: { legitimate: 0, fraudulent: 1 }, blocklist: { legitimate: 1, fraudulent: 0 } },
    })
  })

  it.skipIf(!available)('filters the log and its export by the list that decided, and exports the column', async () => {
    expect((await logItems('?decidedBy=allowlist')).map((item) => item.id)).toEqual([rows.allowlist.id])
    expect((await logItems('?decidedBy=blocklist&action=block')).map((item) => item.id)).toEqual([rows.blocklist.id])
    const csv = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications/export`, headers: asScript(account) })
    expect(csv.statusCode, csv.body).toBe(200)
    const [header = [], ...records] = parseCsv(csv.body)
    const decidedOf = Object.fromEntries(records.map((record) => [record[header.indexOf('id')], record[header.indexOf('decidedBy')]]))
    expect(decidedOf).toEqual({ [rows.allowlist.id]: 'allowlist', [rows.blocklist.id]: 'blocklist', [rows.model.id]: '' })
    const ndjson = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications/export?format=ndjson&decidedBy=allowlist`, headers: asScript(account) })
    expect(ndjson.body.trim().split('\n').map((line) => JSON.parse(line) as LogItem)).toMatchObject([{ id: rows.allowlist.id, decidedBy: 'allowlist' }])
  })

  it.skipIf(!available)('refuses a filter that names no list with a validation error', async () => {
    for (const url of [`/api/v1/sites/${site.id}/verifications?decidedBy=model`, `/api/v1/sites/${site.id}/verifications/export?decidedBy=`]) {
      const response = await service.app.inject({ method: 'GET', url, headers: asScript(account) })
      expect(response.statusCode, url).toBe(400)
      expect(response.json<{ error: { code: string } }>().error.code).toBe('validation_error')
    }
  })

  it.skipIf(!available)("knows a row blocklisted before migration 030 by its anomalies: in the row, the filter and byList alike", async () => {
    // Rows as a release before 030 wrote them (no decided_by): a block with address_blocked, an
    // allowlisted allow at 0 (no anomaly: not told from the model's) and a block of the model's.
    const older = await createTestSite(service.app, account, { name: 'Older rows' })
    const at = new Date(Date.now() - 60_000)
    const [blocklisted, allowed, modelBlock] = await insertVerifications(service.app.database, [
      { siteId: older.id, createdAt: at, action: 'block', riskScore: 100, anomalies: ['address_blocked'], challengeId: randomUUID() },
      { siteId: older.id, createdAt: new Date(at.getTime() + 1), action: 'allow', riskScore: 0, challengeId: randomUUID() },
      { siteId: older.id, createdAt: new Date(at.getTime() + 2), action: 'block', riskScore: 95, anomalies: ['headless_user_agent'], challengeId: randomUUID() },
    ])
    const decidedOf = Object.fromEntries((await logItems('', older.id)).map((item) => [item.id, item.decidedBy]))
    expect(decidedOf).toEqual({ [blocklisted!]: 'blocklist', [allowed!]: null, [modelBlock!]: null })
    expect((await logItems('?decidedBy=blocklist', older.id)).map((item) => item.id)).toEqual([blocklisted])
    expect(await logItems('?decidedBy=allowlist', older.id)).toEqual([])
    const ndjson = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${older.id}/verifications/export?format=ndjson&decidedBy=blocklist`, headers: asScript(account) })
    expect(ndjson.body.trim().split('\n').map((line) => JSON.parse(line) as LogItem)).toMatchObject([{ id: blocklisted, decidedBy: 'blocklist' }])
    for (const row of [blocklisted, modelBlock]) {
      const labeled = await service.app.inject({
        method: 'PUT', url: `/api/v1/sites/${older.id}/verifications/${row}/label`, headers: asBrowser(account), payload: { label: 'legitimate' },
      })
      expect(labeled.statusCode, labeled.body).toBe(200)
    }
    expect(await feedbackFigures(older.id)).toMatchObject({ legitimate: 2, falseAlarms: 1, byList: { blocklist: { legitimate: 1, fraudulent: 0 } } })
  })
})
