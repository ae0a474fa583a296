import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { insertVerifications, type VerificationRow } from '../helpers/verification-rows.js'

const actions = ['allow', 'challenge', 'block', 'rejected'] as const

interface LogPage {
  items: { id: string; action: string }[]
  nextCursor: string | null
}

describe('GET /api/v1/sites/{id}/verifications', () => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  let otherSiteRowId: string
  const rows: (VerificationRow & { id: string })[] = []

  beforeAll(async () => {
    service = await buildTestApp()
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account)
    const other = await createTestSite(service.app, account)
    const base = Date.now() - 3_600_000
    for (let index = 0; index < 23; index++) {
      // Groups of three share a millisecond: pages must neither skip nor repeat them.
      rows.push({ id: randomUUID(), siteId: site.id, createdAt: new Date(base + Math.floor(index / 3) * 1000), action: actions[index % 4] ?? 'allow' })
    }
    await insertVerifications(service.app.database, rows)
    otherSiteRowId = (await insertVerifications(service.app.database, [{ siteId: other.id, createdAt: new Date(), action: 'allow' }]))[0] ?? ''
  })
  afterAll(() => service.close())

  const list = (query: string) =>
    service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications${query}`, headers: asScript(account) })

  /** The rows newest first, as the log must list them (ties broken by id, descending). */
  const newestFirst = (selected: typeof rows) =>
    [...selected].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).map((row) => row.id)

  it('lists the log newest first with every field', async () => {
    const response = await list('')
    expect(response.statusCode).toBe(200)
    const body = response.json<LogPage>()
    expect(body.nextCursor).toBeNull()
    expect(body.items.map((item) => item.id)).toEqual(newestFirst(rows))
    expect(body.items.map((item) => item.id)).not.toContain(otherSiteRowId)
    expect(body.items[0]).toEqual({
      id: expect.any(String),
      siteId: site.id,
      createdAt: expect.any(String),
      action: expect.any(String),
      errorCode: expect.toBeOneOf([null, expect.any(String)]),
      riskScore: expect.toBeOneOf([null, expect.any(Number)]),
      anomalies: [],
      countryCode: null,
      clientIp: null,
      hostname: null,
      pageAction: null,
      userAgent: null,
      difficulty: null,
      solveTimeMs: null,
      device: null,
      verificationId: null,
      label: null,
      labelReason: null,
      labelNote: null,
      labeledAt: null,
      labelSource: null,
      decidedBy: null,
    })
  })

  it('pages with an opaque cursor: every row exactly once, in order', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const response = await list(`?limit=5${cursor === null ? '' : `&cursor=${cursor}`}`)
      expect(response.statusCode).toBe(200)
      const body = response.json<LogPage>()
      expect(body.items.length).toBeLessThanOrEqual(5)
      seen.push(...body.items.map((item) => item.id))
      cursor = body.nextCursor
      pages++
    } while (cursor !== null && pages < 10)
    expect(pages).toBe(5)
    expect(seen).toEqual(newestFirst(rows))
  })

  it('filters by action, also across pages', async () => {
    const blocked = rows.filter((row) => row.action === 'block')
    const first = (await list('?action=block&limit=3')).json<LogPage>()
    expect(first.items.every((item) => item.action === 'block')).toBe(true)
    const second = (await list(`?action=block&limit=3&cursor=${first.nextCursor ?? ''}`)).json<LogPage>()
    expect([...first.items, ...second.items].map((item) => item.id)).toEqual(newestFirst(blocked))
    expect(second.nextCursor).toBeNull()
  })

  it.each([
    ['?cursor=garbage', 'querystring.cursor'],
    [`?cursor=${Buffer.from('1.not-a-uuid').toString('base64url')}`, 'querystring.cursor'],
    ['?limit=0', 'querystring.limit'],
    ['?limit=201', 'querystring.limit'],
    // Converted from text to numbers that passed the integer type and its bounds (a 500 from SQL).
    ['?limit=Infinity', 'querystring.limit'],
    ['?limit=-Infinity', 'querystring.limit'],
    ['?limit=1e400', 'querystring.limit'],
    ['?action=maybe', 'querystring.action'],
  ])('answers 400 validation_error for %s', async (query, field) => {
    const response = await list(query)
    expect(response.statusCode).toBe(400)
    expect(response.json().error.code).toBe('validation_error')
    expect(response.json().error.details).toContainEqual(expect.objectContaining({ field }))
  })
})
