import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REFERENCE_LENGTH } from '../../src/domain/analytics/verification-reference.js'
import { browserHeaders, fetchChallenge, humanSubmission, submitSolution } from '../helpers/core-flow.js'
import { asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

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
    site = await createTestSite(service.app, account, { settings: { difficulty: 4 } })
    otherSite = await createTestSite(service.app, account, { settings: { difficulty: 4 } })
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
    const response = await submitSolution(service.app, headers, humanSubmission(challenge, '1'))
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
