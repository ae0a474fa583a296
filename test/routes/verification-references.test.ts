import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { REFERENCE_LENGTH } from '../../src/domain/analytics/verification-reference.js'
import { browserHeaders, fetchChallenge, humanSubmission, submitSolution, wrongNonce } from '../helpers/core-flow.js'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'

interface LogPage {
  items: { id: string; action: string; errorCode: string | null; riskScore: number | null }[]
  nextCursor: string | null
}

describe.each(deployments)('the reference of a turned-away visitor finds its verification ($name)', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  let otherSite: CreatedSite

  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp(options)
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account, { name: 'Shop', settings: { difficulty: 4 } })
    otherSite = await createTestSite(service.app, account, { name: 'Forum', settings: { difficulty: 4 } })
  })
  afterAll(() => service?.close())

  const findByReference = async (siteId: string, reference: string) => {
    await service.app.verificationLog.flush()
    return service.app.inject({
      method: 'GET',
      url: `/api/v1/sites/${siteId}/verifications?reference=${encodeURIComponent(reference)}`,
      headers: asScript(account),
    })
  }

  /** A scripted client's submission: blocked, with its request's id in X-Request-Id. */
  const blockedRequestId = async (siteKey: string) => {
    const headers = { 'x-site-key': siteKey, 'user-agent': 'python-requests/2.31.0' }
    const challenge = await fetchChallenge(service.app, headers)
    const response = await submitSolution(service.app, headers, { ...humanSubmission(challenge), fingerprint: {}, behaviorData: {} })
    expect(response.json()).toEqual({ success: false, riskScore: 100, action: 'block' })
    return String(response.headers['x-request-id'])
  }

  it.runIf(available)("finds a blocked verification by the first 13 characters of its answer's X-Request-Id, the whole id, or its digits without dashes", async () => {
    const requestId = await blockedRequestId(site.siteKey)
    const reference = requestId.slice(0, REFERENCE_LENGTH)
    expect(reference).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}$/)
    for (const wanted of [reference, requestId, requestId.toUpperCase(), requestId.replaceAll('-', '').slice(0, 12)]) {
      const response = await findByReference(site.id, wanted)
      expect(response.statusCode).toBe(200)
      const page = response.json<LogPage>()
      expect(page.items).toEqual([expect.objectContaining({ id: requestId, action: 'block', riskScore: 100 })])
      expect(page.nextCursor).toBeNull()
    }
  })

  it.runIf(available)('finds a refused submission by the requestId of its error body', async () => {
    const headers = browserHeaders(site.siteKey)
    const challenge = await fetchChallenge(service.app, headers)
    const response = await submitSolution(service.app, headers, humanSubmission(challenge, wrongNonce(challenge)))
    expect(response.statusCode).toBe(400)
    const { requestId, code } = response.json<{ error: { requestId: string; code: string } }>().error
    expect(code).toBe('solution_invalid')
    expect(response.headers['x-request-id']).toBe(requestId)
    const page = (await findByReference(site.id, requestId.slice(0, REFERENCE_LENGTH))).json<LogPage>()
    expect(page.items).toEqual([expect.objectContaining({ id: requestId, action: 'rejected', errorCode: 'solution_invalid' })])
  })

  it.runIf(available)("does not find another site's verification, nor one of a reference nobody was shown", async () => {
    const requestId = await blockedRequestId(otherSite.siteKey)
    expect((await findByReference(site.id, requestId.slice(0, REFERENCE_LENGTH))).json<LogPage>().items).toEqual([])
    expect((await findByReference(otherSite.id, requestId.slice(0, REFERENCE_LENGTH))).json<LogPage>().items).toHaveLength(1)
    // The other site's log holds that one row: a reference that differs in its last digit finds none.
    const last = requestId.charAt(REFERENCE_LENGTH - 1)
    const near = `${requestId.slice(0, REFERENCE_LENGTH - 1)}${last === '0' ? '1' : '0'}`
    expect((await findByReference(otherSite.id, near)).json<LogPage>().items).toEqual([])
  })

  it.runIf(available)('lists every row a short reference matches, newest first and page by page, and with an action filter only those of the action', async () => {
    // Six rows whose ids share their first 8 digits, and one whose id is the next one up.
    const shared = '5ab0c0de'
    const ids = ['0000-4000-8000-000000000001', '0000-4000-8000-000000000002', '1111-4000-8000-000000000003', 'ffff-4fff-bfff-ffffffffffff', '8000-4000-8000-000000000005', '9000-4000-8000-000000000006']
      .map((rest) => `${shared}-${rest}`)
    const base = Date.now() - 60_000
    await insertVerifications(service.app.database, [
      ...ids.map((id, index) => ({ id, siteId: site.id, createdAt: new Date(base + index * 1_000), action: index % 2 === 0 ? ('block' as const) : ('allow' as const) })),
      { id: '5ab0c0df-0000-4000-8000-000000000000', siteId: site.id, createdAt: new Date(base), action: 'block' as const },
    ])
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const url = `/api/v1/sites/${site.id}/verifications?reference=${shared}&limit=4${cursor === null ? '' : `&cursor=${cursor}`}`
      const page: LogPage = (await service.app.inject({ method: 'GET', url, headers: asScript(account) })).json<LogPage>()
      seen.push(...page.items.map((item) => item.id))
      cursor = page.nextCursor
    } while (cursor !== null && seen.length < 20)
    expect(seen).toEqual([...ids].reverse())
    const blocked = (await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications?reference=${shared}&action=block`, headers: asScript(account) })).json<LogPage>()
    expect(blocked.items.map((item) => item.id)).toEqual(ids.filter((_id, index) => index % 2 === 0).reverse())
    // The longer the reference, the fewer it matches: the last id's first 13 characters, its own.
    expect((await findByReference(site.id, `${shared}-9000`)).json<LogPage>().items.map((item) => item.id)).toEqual([ids[5]])
  })

  const findInAccount = async (who: Pick<TestAccount, 'apiKey'>, reference: string) => {
    await service.app.verificationLog.flush()
    return service.app.inject({ method: 'GET', url: `/api/v1/verifications?reference=${encodeURIComponent(reference)}`, headers: asScript(who) })
  }

  it.runIf(available)("finds a reference among all the account's sites, with the site it was shown on, and not among another account's", async () => {
    const requestId = await blockedRequestId(otherSite.siteKey)
    const reference = requestId.slice(0, REFERENCE_LENGTH)
    const response = await findInAccount(account, reference)
    expect(response.statusCode).toBe(200)
    const page = response.json<{ items: { id: string; siteId: string; siteName: string; action: string }[]; nextCursor: string | null }>()
    expect(page.items).toEqual([expect.objectContaining({ id: requestId, siteId: otherSite.id, siteName: otherSite.name, action: 'block' })])
    expect(page.nextCursor).toBeNull()
    // The site's own log says which site a row is of too.
    expect((await findByReference(otherSite.id, reference)).json<LogPage>().items).toEqual([expect.objectContaining({ id: requestId, siteId: otherSite.id })])

    const stranger = await createTestAccount(service.app)
    await createTestSite(service.app, stranger)
    const theirs = await findInAccount(stranger, reference)
    expect(theirs.statusCode).toBe(200)
    expect(theirs.json().items).toEqual([])
  })

  it.runIf(available)("pages through the account's matches newest first, across its sites, and leaves out a deleted site's rows", async () => {
    const shared = '6bc1d1ef'
    const goneSite = await createTestSite(service.app, account)
    const base = Date.now() - 60_000
    const rows = [
      { id: `${shared}-0000-4000-8000-000000000001`, siteId: site.id },
      { id: `${shared}-0000-4000-8000-000000000002`, siteId: otherSite.id },
      { id: `${shared}-0000-4000-8000-000000000003`, siteId: goneSite.id },
      { id: `${shared}-0000-4000-8000-000000000004`, siteId: site.id },
    ]
    await insertVerifications(
      service.app.database,
      rows.map((row, index) => ({ ...row, createdAt: new Date(base + index * 1_000), action: 'block' as const })),
    )
    const deleted = await service.app.inject({ method: 'DELETE', url: `/api/v1/sites/${goneSite.id}`, headers: asScript(account) })
    expect(deleted.statusCode).toBe(204)
    const seen: { id: string; siteName: string }[] = []
    let cursor: string | null = null
    do {
      const url = `/api/v1/verifications?reference=${shared}&limit=2${cursor === null ? '' : `&cursor=${cursor}`}`
      const page: { items: { id: string; siteName: string }[]; nextCursor: string | null } = (
        await service.app.inject({ method: 'GET', url, headers: asScript(account) })
      ).json()
      seen.push(...page.items.map(({ id, siteName }) => ({ id, siteName })))
      cursor = page.nextCursor
    } while (cursor !== null && seen.length < 10)
    expect(seen).toEqual([
      { id: rows[3]?.id, siteName: site.name },
      { id: rows[1]?.id, siteName: otherSite.name },
      { id: rows[0]?.id, siteName: site.name },
    ])
  })

  it.runIf(available)('asks for a reference, and for an account', async () => {
    const missing = await service.app.inject({ method: 'GET', url: '/api/v1/verifications', headers: asScript(account) })
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error).toMatchObject({ code: 'validation_error', details: [expect.objectContaining({ field: 'querystring.reference' })] })
    const short = await findInAccount(account, '1a2b3c4')
    expect(short.statusCode).toBe(400)
    expect(short.json().error).toMatchObject({ code: 'validation_error', details: [expect.objectContaining({ field: 'querystring.reference' })] })
    const anonymous = await service.app.inject({ method: 'GET', url: '/api/v1/verifications?reference=1a2b3c4d' })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
  })

  it.runIf(available).each([
    ['seven digits', '1a2b3c4'],
    ['letters past f', '1a2b3c4g-5e6f'],
    ['two dashes in a row', '1a2b3c4d--5e6f'],
    ['a leading dash', '-1a2b3c4d'],
    ['more digits than an id has', 'a'.repeat(33)],
    ['a space', '1a2b3c4d 5e6f'],
  ])('answers 400 validation_error on querystring.reference for %s', async (_case, reference) => {
    const response = await findByReference(site.id, reference)
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({ code: 'validation_error', details: [expect.objectContaining({ field: 'querystring.reference' })] })
  })
})

describe('a verification whose answer fails after its verdict was logged', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp({
      beforeReady: (app) => {
        // The answer cannot be sent (a failure forced after the handler logged the verdict).
        app.addHook('onSend', async (request) => {
          if (request.url === '/api/v1/verify' && request.headers['x-fail-the-answer'] === 'yes') throw new Error('forced failure in sending the answer')
        })
      },
    })
  })
  afterAll(() => service?.close())

  it('keeps the one row of its verdict, under the request id, and adds no rejected row beside it (which would fail its batch)', async () => {
    const loads = vi.spyOn(service.app.database, 'loadRows')
    const account = await createTestAccount(service.app)
    const site = await createTestSite(service.app, account, { settings: { difficulty: 4 } })
    const headers = { 'x-site-key': site.siteKey, 'user-agent': 'python-requests/2.31.0' }
    const challenge = await fetchChallenge(service.app, headers)
    const response = await submitSolution(service.app, { ...headers, 'x-fail-the-answer': 'yes' }, { ...humanSubmission(challenge), fingerprint: {}, behaviorData: {} })
    expect(response.statusCode).toBe(500)
    const requestId = String(response.headers['x-request-id'])
    await service.app.verificationLog.flush()
    const rows = await service.app.database.query<{ id: string; action: string }>('SELECT id, action FROM verifications WHERE site_id = $1', [site.id])
    expect(rows).toEqual([{ id: requestId, action: 'block' }])
    // One bulk load: a second row under the same id would have failed it, and the rows would
    // have been written again one by one.
    expect(loads).toHaveBeenCalledTimes(1)
    loads.mockRestore()
  })
})
