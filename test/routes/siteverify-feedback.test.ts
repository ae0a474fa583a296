import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Challenge } from '../../src/domain/challenge/issue-challenge.js'
import { browserHeaders, humanSubmission } from '../helpers/core-flow.js'
import { asBrowser, asScript, createTestAccount, createTestSite, type CreatedSite, type TestAccount } from '../helpers/dashboard-client.js'
import { shareSite } from '../helpers/site-sharing.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'
import { insertVerifications } from '../helpers/verification-rows.js'
import { createVerificationLabelRepository } from '../../src/storage/sql/verification-label-repository.js'

const PROXY = '127.0.0.1'
const BASE_DIFFICULTY = 4
const FEEDBACK = '/api/v1/siteverify/feedback'

interface LogItem {
  id: string
  verificationId: string | null
  riskScore: number | null
  label: string | null
  labelReason: string | null
  labelNote: string | null
  labeledAt: string | null
  labelSource: string | null
}

function sampleOf(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

/**
 * Feedback on verifications: the site's backend (Siteverify's secret) or its operator (the
 * dashboard) says what a visitor turned out to be; the log, its export, the stats and the risk
 * model take it in.
 */
describe.each(deployments)('feedback on verifications ($name)', ({ available, options }) => {
  let service: TestApp
  let account: TestAccount
  let site: CreatedSite
  let otherSite: CreatedSite

  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, env: { TRUST_PROXY: PROXY }, config: { rateLimitPerMinute: 0 } })
    account = await createTestAccount(service.app)
    site = await createTestSite(service.app, account, { settings: { difficulty: BASE_DIFFICULTY } })
    otherSite = await createTestSite(service.app, account, { settings: { difficulty: BASE_DIFFICULTY } })
  })
  afterAll(() => service?.close())

  let addressCount = 0
  const nextAddress = () => `80.187.${Math.floor(Math.random() * 200) + 1}.${++addressCount}`
  const headersFor = (siteKey: string, clientIp: string) => ({ ...browserHeaders(siteKey), 'x-forwarded-for': clientIp })

  async function challengeFor(siteKey: string, clientIp: string) {
    const response = await service.app.inject({ method: 'POST', url: '/api/v1/challenge', remoteAddress: PROXY, headers: headersFor(siteKey, clientIp) })
    expect(response.statusCode).toBe(200)
    return response.json<Challenge>()
  }

  /** A person's verification from the address, redeemed: its token and Siteverify's answer. */
  async function verify(target: CreatedSite = site, clientIp = nextAddress()) {
    const challenge = await challengeFor(target.siteKey, clientIp)
    const verified = await service.app.inject({
      method: 'POST', url: '/api/v1/verify', remoteAddress: PROXY, headers: headersFor(target.siteKey, clientIp), payload: humanSubmission(challenge),
    })
    const token = verified.json<{ token: string }>().token
    const answer = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: target.secretKey, response: token } })
    await service.app.verificationLog.flush()
    return { token, clientIp, challenge, answer: answer.json<{ success: boolean; metadata: { verification_id: string } }>() }
  }

  const feedback = (payload: Record<string, string | null>) => service.app.inject({ method: 'POST', url: FEEDBACK, payload })
  const feedbackForm = (fields: Record<string, string>) =>
    service.app.inject({ method: 'POST', url: FEEDBACK, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString() })
  const logItems = async (query = '') => {
    const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications${query}`, headers: asScript(account) })
    expect(response.statusCode, response.body).toBe(200)
    return response.json<{ items: LogItem[] }>().items
  }

  it.runIf(available)("answers Siteverify's id of the verification, the log row's verificationId", async () => {
    const { answer, challenge } = await verify()
    expect(answer.success).toBe(true)
    expect(answer.metadata.verification_id).toBe(challenge.challengeId)
    expect((await logItems()).find((item) => item.verificationId === challenge.challengeId)).toMatchObject({ label: null })
  })

  it.runIf(available)('labels by token (JSON) and by id (form), the last label winning, shown in the log', async () => {
    const { token, answer } = await verify()
    const id = answer.metadata.verification_id
    const byToken = await feedback({ secret: site.secretKey, response: token, label: 'fraudulent', reason: 'chargeback', note: 'order 1234' })
    expect(byToken.statusCode, byToken.body).toBe(200)
    expect(byToken.json()).toEqual({ success: true, verification_id: id, label: 'fraudulent' })
    expect((await logItems()).find((item) => item.verificationId === id)).toMatchObject({
      label: 'fraudulent', labelReason: 'chargeback', labelNote: 'order 1234', labelSource: 'siteverify', labeledAt: expect.any(String),
    })

    const byId = await feedbackForm({ secret: site.secretKey, verification_id: id, label: 'legitimate', reason: 'passed_two_factor' })
    expect(byId.statusCode, byId.body).toBe(200)
    expect(byId.json()).toEqual({ success: true, verification_id: id, label: 'legitimate' })
    expect((await logItems()).find((item) => item.verificationId === id)).toMatchObject({ label: 'legitimate', labelReason: 'passed_two_factor', labelNote: null })
  })

  it.runIf(available)('takes a token long past its 300 s and already redeemed', async () => {
    const { token, answer } = await verify()
    const realNow = Date.now
    Date.now = () => realNow() + 3 * 86_400_000
    try {
      const response = await feedback({ secret: site.secretKey, response: token, label: 'fraudulent' })
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json()).toMatchObject({ verification_id: answer.metadata.verification_id })
    } finally {
      Date.now = realNow
    }
  })

  it.runIf(available)("answers another site's verification as not-found, as an unknown one, and a wrong secret as Siteverify does", async () => {
    const { token, answer } = await verify(otherSite)
    const id = answer.metadata.verification_id
    const foreign = await feedback({ secret: site.secretKey, verification_id: id, label: 'fraudulent' })
    const unknown = await feedback({ secret: site.secretKey, verification_id: '2b1f0e0a-1111-4222-8333-444455556666', label: 'fraudulent' })
    for (const response of [foreign, unknown]) {
      expect(response.statusCode).toBe(404)
      expect(response.json()).toMatchObject({ success: false, 'error-codes': ['not-found'], error: { code: 'not_found' } })
    }
    // With the token, the other site's secret is not the token's: as Siteverify answers it.
    const wrongByToken = await feedback({ secret: site.secretKey, response: token, label: 'fraudulent' })
    const wrongById = await feedback({ secret: 'tgs_not-a-secret', verification_id: id, label: 'fraudulent' })
    for (const response of [wrongByToken, wrongById]) {
      expect(response.statusCode).toBe(401)
      expect(response.json()).toMatchObject({ success: false, 'error-codes': ['invalid-input-secret'], error: { code: 'unauthorized' } })
    }
    expect((await feedback({ secret: otherSite.secretKey, verification_id: id, label: 'fraudulent' })).statusCode).toBe(200)
  })

  it.runIf(available).each([
    [{ label: 'fraudulent' }, 400, ['missing-input-secret', 'missing-input-response']],
    [{ secret: 'SECRET', verification_id: 'ID' }, 400, ['missing-input-label']],
    [{ secret: 'SECRET', verification_id: 'ID', label: 'spam' }, 400, ['invalid-input-label']],
    [{ secret: 'SECRET', verification_id: 'ID', label: 'fraudulent', reason: 'because' }, 400, ['invalid-input-reason']],
    [{ secret: 'SECRET', verification_id: 'ID', label: 'fraudulent', note: 'x'.repeat(201) }, 400, ['invalid-input-note']],
    [{ secret: 'SECRET', verification_id: 'ID', label: 'fraudulent', note: 'a\u0000b' }, 400, ['invalid-input-note']],
    [{ secret: 'SECRET', response: 'v1.forged.token', label: 'fraudulent' }, 400, ['invalid-input-response']],
    ...['\u001b[2J', 'line\r\nInjected: yes', '\u202Egnp.exe', 'a\u2066b\u2069'].map((note): [Record<string, string>, number, string[]] => [
      { secret: 'SECRET', verification_id: 'ID', label: 'fraudulent', note }, 400, ['invalid-input-note'],
    ]),
    [{ secret: 'SECRET', verification_id: 'not-a-uuid', label: 'fraudulent' }, 400, ['invalid-input-verification-id']],
  ])('refuses %j with %i %j', async (fields, status, codes) => {
    const { answer } = await verify()
    const payload = Object.fromEntries(
      Object.entries(fields).map(([name, value]) => [name, value === 'SECRET' ? site.secretKey : value === 'ID' ? answer.metadata.verification_id : value]),
    )
    const response = await feedback(payload)
    expect(response.statusCode).toBe(status)
    expect(response.json()).toEqual({ success: false, 'error-codes': codes, error: { code: 'validation_error', message: expect.any(String), requestId: expect.any(String) } })
  })

  it.runIf(available)('labels from the dashboard, audited, and clears; the log filters by label and the export has the columns', async () => {
    const { answer } = await verify()
    const row = (await logItems()).find((item) => item.verificationId === answer.metadata.verification_id)!
    const url = `/api/v1/sites/${site.id}/verifications/${row.id}/label`
    // A note that would show other than it reads (a right-to-left override, an escape) is refused, and nothing is labeled.
    for (const note of ['order \u202E4321', 'line\u001b[31m']) {
      const refused = await service.app.inject({ method: 'PUT', url, headers: asScript(account), payload: { label: 'fraudulent', note } })
      expect(refused.statusCode, refused.body).toBe(400)
      expect(refused.json().error).toMatchObject({ code: 'validation_error', details: [{ field: 'note' }] })
    }
    expect((await logItems()).find((item) => item.id === row.id)).toMatchObject({ label: null })
    const put = await service.app.inject({ method: 'PUT', url, headers: asScript(account), payload: { label: 'fraudulent', reason: 'account_takeover', note: 'seen by support' } })
    expect(put.statusCode, put.body).toBe(200)
    expect(put.json()).toMatchObject({ verificationId: row.verificationId, label: 'fraudulent', labelReason: 'account_takeover', labelSource: 'dashboard' })
    expect((await logItems('?label=fraudulent')).map((item) => item.id)).toContain(row.id)
    expect((await logItems('?label=none')).map((item) => item.id)).not.toContain(row.id)

    const csv = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications/export?label=fraudulent`, headers: asScript(account) })
    expect(csv.statusCode).toBe(200)
    const [header, ...lines] = csv.body.trim().split('\r\n')
    expect(header).toContain('verificationId,label,labelReason,labelNote,labeledAt,labelSource')
    expect(lines.some((line) => line.startsWith(row.id) && line.includes(',fraudulent,account_takeover,seen by support,'))).toBe(true)
    const ndjson = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications/export?format=ndjson&label=fraudulent`, headers: asScript(account) })
    expect(ndjson.body.trim().split('\n').map((line) => JSON.parse(line) as LogItem).find((item) => item.id === row.id)).toMatchObject({ label: 'fraudulent', labelSource: 'dashboard' })

    const removed = await service.app.inject({ method: 'DELETE', url, headers: asScript(account) })
    expect(removed.statusCode).toBe(204)
    expect((await logItems('?label=none')).map((item) => item.id)).toContain(row.id)

    const audit = await service.app.inject({ method: 'GET', url: '/api/v1/audit-log', headers: asScript(account) })
    const actions = audit.json<{ items: { action: string; details: Record<string, unknown> }[] }>().items.map((event) => [event.action, event.details.rowId])
    expect(actions).toEqual(expect.arrayContaining([['verification.labeled', row.id], ['verification.label_removed', row.id]]))

    // Another site's row, another account, no credentials: the row is as absent as an unknown one.
    const foreign = await service.app.inject({ method: 'PUT', url: `/api/v1/sites/${otherSite.id}/verifications/${row.id}/label`, headers: asScript(account), payload: { label: 'legitimate' } })
    expect(foreign.statusCode).toBe(404)
    expect(foreign.json().error.code).toBe('not_found')
    const stranger = await createTestAccount(service.app)
    for (const method of ['PUT', 'DELETE'] as const) {
      const payload = method === 'PUT' ? { payload: { label: 'legitimate' } } : {}
      expect((await service.app.inject({ method, url, headers: asScript(stranger), ...payload })).statusCode).toBe(404)
      expect((await service.app.inject({ method, url, ...payload })).statusCode).toBe(401)
    }
  })

  it.runIf(available)("lets an admin label and clear, in the owner's log with a copy in the admin's, and refuses a viewer (403)", async () => {
    const { answer } = await verify()
    const row = (await logItems()).find((item) => item.verificationId === answer.metadata.verification_id)!
    const url = `/api/v1/sites/${site.id}/verifications/${row.id}/label`
    const [admin, viewer] = [await createTestAccount(service.app), await createTestAccount(service.app)]
    await shareSite(service.app, account, admin, site.id, 'admin')
    await shareSite(service.app, account, viewer, site.id, 'viewer')

    for (const method of ['PUT', 'DELETE'] as const) {
      const refused = await service.app.inject({ method, url, headers: asBrowser(viewer), ...(method === 'PUT' ? { payload: { label: 'legitimate' } } : {}) })
      expect(refused.statusCode, refused.body).toBe(403)
      expect(refused.json().error.code).toBe('forbidden')
    }
    expect((await logItems()).find((item) => item.id === row.id)).toMatchObject({ label: null })

    const put = await service.app.inject({ method: 'PUT', url, headers: asBrowser(admin), payload: { label: 'legitimate', reason: 'passed_two_factor' } })
    expect(put.statusCode, put.body).toBe(200)
    expect((await logItems()).find((item) => item.id === row.id)).toMatchObject({ label: 'legitimate', labelSource: 'dashboard' })
    expect((await service.app.inject({ method: 'DELETE', url, headers: asScript(admin) })).statusCode).toBe(204)

    const auditOf = async (reader: TestAccount) =>
      (await service.app.inject({ method: 'GET', url: `/api/v1/audit-log?siteId=${site.id}`, headers: asScript(reader) })).json<{
        items: { action: string; actor: { name: string | null }; details: Record<string, unknown> }[]
      }>().items.filter((event) => event.details.rowId === row.id)
    const expected = [
      { action: 'verification.label_removed', actor: { name: 'test key' } },
      { action: 'verification.labeled', actor: { name: admin.email }, details: { label: 'legitimate', reason: 'passed_two_factor' } },
    ]
    expect(await auditOf(account)).toMatchObject(expected)
    expect(await auditOf(admin)).toMatchObject(expected)
  })

  it.runIf(available)("counts the labels in the stats against the actions logged, and in tollgate_feedback_total", async () => {
    const series = 'tollgate_feedback_total{label="fraudulent",source="siteverify"}'
    const before = sampleOf((await service.app.inject({ method: 'GET', url: '/metrics' })).body, series)
    const fresh = await createTestSite(service.app, account, { settings: { difficulty: BASE_DIFFICULTY, challengeThreshold: 30, blockThreshold: 70 } })
    const first = await verify(fresh)
    const second = await verify(fresh)
    const secondScore = (await service.app.inject({ method: 'GET', url: `/api/v1/sites/${fresh.id}/verifications`, headers: asScript(account) }))
      .json<{ items: LogItem[] }>().items.find((item) => item.verificationId === second.answer.metadata.verification_id)!.riskScore!
    expect(secondScore).toBeLessThan(30)
    await feedback({ secret: fresh.secretKey, response: first.token, label: 'fraudulent', reason: 'chargeback' })
    await feedback({ secret: fresh.secretKey, response: second.token, label: 'legitimate' })
    const stats = async () => {
      const response = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${fresh.id}/stats`, headers: asScript(account) })
      expect(response.statusCode, response.body).toBe(200)
      return response.json<{
      feedback: {
        legitimate: number
        fraudulent: number
        missed: number
        falseAlarms: number
        byList: Record<'allowlist' | 'blocklist', { legitimate: number; fraudulent: number }>
        buckets: { min: number; legitimate: number; fraudulent: number }[]
      }
      }>().feedback
    }
    // Both were allowed: the fraudulent one was missed, the legitimate one no false alarm.
    expect(await stats()).toMatchObject({ legitimate: 1, fraudulent: 1, missed: 1, falseAlarms: 0 })
    const bucket = (await stats()).buckets.find((entry) => entry.min === Math.floor(secondScore / 10) * 10)!
    expect(bucket.legitimate).toBeGreaterThanOrEqual(1)
    // What happened counts, not the thresholds of now: lowering them changes neither figure.
    const lowered = await service.app.inject({ method: 'PUT', url: `/api/v1/sites/${fresh.id}`, headers: asScript(account), payload: { settings: { challengeThreshold: 0, blockThreshold: 70 } } })
    expect(lowered.statusCode, lowered.body).toBe(200)
    expect(await stats()).toMatchObject({ missed: 1, falseAlarms: 0 })
    // A fraud let through after its step-ups (score inside the challenge band), one nothing
    // flagged (score 0), a challenged person and a blocklisted one logged before migration 030
    // (no decided_by: known by its anomaly). test/routes/list-decisions.test.ts has today's rows.
    const at = new Date(Date.now() - 60_000)
    const rows = await insertVerifications(service.app.database, [
      { siteId: fresh.id, createdAt: at, action: 'allow', riskScore: 45, anomalies: ['headless_browser'] },
      { siteId: fresh.id, createdAt: at, action: 'allow', riskScore: 0, anomalies: [] },
      { siteId: fresh.id, createdAt: at, action: 'challenge', riskScore: 40, anomalies: ['headless_browser'] },
      { siteId: fresh.id, createdAt: at, action: 'block', riskScore: 100, anomalies: ['address_blocked'] },
    ])
    const labels = createVerificationLabelRepository(service.app.database)
    const labelsOf = ['fraudulent', 'fraudulent', 'legitimate', 'legitimate'] as const
    for (const [index, id] of rows.entries()) await labels.setLabel(fresh.id, id, { label: labelsOf[index]!, reason: null, note: null, source: 'dashboard' }, new Date())
    expect(await stats()).toMatchObject({ legitimate: 3, fraudulent: 3, missed: 3, falseAlarms: 1, byList: { blocklist: { legitimate: 1 } } })
    const after = sampleOf((await service.app.inject({ method: 'GET', url: '/metrics' })).body, series)
    expect(after - before).toBe(1)
  })

  it.runIf(available)("makes the next challenge of a client labeled fraudulent harder, and only that client's", async () => {
    const fraudster = nextAddress()
    const { token } = await verify(site, fraudster)
    expect((await challengeFor(site.siteKey, fraudster)).difficulty).toBe(BASE_DIFFICULTY)
    expect((await feedback({ secret: site.secretKey, response: token, label: 'fraudulent' })).statusCode).toBe(200)
    expect((await challengeFor(site.siteKey, fraudster)).difficulty).toBeGreaterThan(BASE_DIFFICULTY)
    expect((await challengeFor(site.siteKey, nextAddress())).difficulty).toBe(BASE_DIFFICULTY)
    // A legitimate label lowers nothing.
    const person = nextAddress()
    const verified = await verify(site, person)
    await feedback({ secret: site.secretKey, response: verified.token, label: 'legitimate' })
    expect((await challengeFor(site.siteKey, person)).difficulty).toBe(BASE_DIFFICULTY)
  })

  it.runIf(available)("leaves an old verification's client alone: its address may be someone else's now", async () => {
    const holder = nextAddress()
    const [rowId] = await insertVerifications(service.app.database, [
      { siteId: site.id, createdAt: new Date(Date.now() - 31 * 60_000), action: 'allow', riskScore: 10, clientIp: holder, challengeId: randomUUID() },
    ])
    const url = `/api/v1/sites/${site.id}/verifications/${rowId}/label`
    const put = await service.app.inject({ method: 'PUT', url, headers: asScript(account), payload: { label: 'fraudulent', reason: 'chargeback' } })
    expect(put.statusCode, put.body).toBe(200)
    expect((await challengeFor(site.siteKey, holder)).difficulty).toBe(BASE_DIFFICULTY)
    // The label itself is kept and shown.
    expect((await logItems(`?label=fraudulent`)).map((item) => item.id)).toContain(rowId)
  })

  it.runIf(available)('refuses a reason that does not go with the label, saying which do', async () => {
    const { answer } = await verify()
    const id = answer.metadata.verification_id
    const refused = await feedback({ secret: site.secretKey, verification_id: id, label: 'legitimate', reason: 'chargeback' })
    expect(refused.statusCode).toBe(400)
    expect(refused.json()).toMatchObject({ 'error-codes': ['invalid-input-reason'], error: { message: expect.stringContaining('passed_two_factor') } })
    const row = (await logItems()).find((item) => item.verificationId === id)!
    const url = `/api/v1/sites/${site.id}/verifications/${row.id}/label`
    const put = await service.app.inject({ method: 'PUT', url, headers: asScript(account), payload: { label: 'legitimate', reason: 'account_takeover' } })
    expect(put.statusCode, put.body).toBe(400)
    expect(put.json().error).toMatchObject({ code: 'validation_error', details: [{ field: 'reason' }] })
    expect((await logItems()).find((item) => item.id === row.id)).toMatchObject({ label: null })
    // `other` and a neutral reason go with both.
    for (const [label, reason] of [['legitimate', 'other'], ['fraudulent', 'initiated_two_factor']] as const) {
      expect((await feedback({ secret: site.secretKey, verification_id: id, label, reason })).statusCode).toBe(200)
    }
  })

  it.runIf(available)("finds a row by Siteverify's verification_id in the log and its export, exactly", async () => {
    const { answer } = await verify()
    await verify()
    const id = answer.metadata.verification_id
    const found = await logItems(`?verificationId=${id.toUpperCase()}`)
    expect(found.map((item) => item.verificationId)).toEqual([id])
    const csv = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications/export?verificationId=${id}`, headers: asScript(account) })
    expect(csv.statusCode, csv.body).toBe(200)
    expect(csv.body.trim().split('\r\n')).toHaveLength(2)
    expect(csv.body).toContain(id)
    // Not a prefix search, and another site's id finds nothing here.
    const other = await verify(otherSite)
    expect(await logItems(`?verificationId=${other.answer.metadata.verification_id}`)).toEqual([])
    const malformed = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications?verificationId=${id.slice(0, 13)}`, headers: asScript(account) })
    expect(malformed.statusCode).toBe(400)
  })

  it.runIf(available)('keeps a note with a tab, and says what is wrong with a note it refuses', async () => {
    const { answer } = await verify()
    const kept = await feedback({ secret: site.secretKey, verification_id: answer.metadata.verification_id, label: 'legitimate', note: 'order\t1234 ✓' })
    expect(kept.statusCode, kept.body).toBe(200)
    const refused = await feedback({ secret: site.secretKey, verification_id: answer.metadata.verification_id, label: 'legitimate', note: 'a\u001bb' })
    expect(refused.json<{ error: { message: string } }>().error.message).toContain('control character')
  })

  it.runIf(available)('counts a repeated label once, in the metric and against the client', async () => {
    const fraudulentSeries = 'tollgate_feedback_total{label="fraudulent",source="siteverify"}'
    const legitimateSeries = 'tollgate_feedback_total{label="legitimate",source="siteverify"}'
    const samples = async () => {
      const text = (await service.app.inject({ method: 'GET', url: '/metrics' })).body
      return [sampleOf(text, fraudulentSeries), sampleOf(text, legitimateSeries)]
    }
    const { token } = await verify()
    const before = await samples()
    const increments = vi.spyOn(service.app.keyValue, 'increment')
    try {
      for (const label of ['fraudulent', 'fraudulent', 'legitimate', 'legitimate', 'fraudulent']) {
        expect((await feedback({ secret: site.secretKey, response: token, label })).statusCode).toBe(200)
      }
      // Two changes to fraudulent (the first, and back from legitimate), each once against the client.
      expect(increments).toHaveBeenCalledTimes(2)
    } finally {
      increments.mockRestore()
    }
    const after = await samples()
    expect([after[0]! - before[0]!, after[1]! - before[1]!]).toEqual([2, 1])
  })

  it.runIf(available)("saves the label and answers 200 when the client's history cannot be written", async () => {
    const { token, answer } = await verify()
    const increments = vi.spyOn(service.app.keyValue, 'increment').mockRejectedValueOnce(new Error('history store away'))
    try {
      const response = await feedback({ secret: site.secretKey, response: token, label: 'fraudulent' })
      expect(response.statusCode, response.body).toBe(200)
      expect(increments).toHaveBeenCalledTimes(1)
    } finally {
      increments.mockRestore()
    }
    expect((await logItems()).find((item) => item.verificationId === answer.metadata.verification_id)).toMatchObject({ label: 'fraudulent' })
  })

  it.runIf(available)('answers an empty body 400, multipart 415, and reads no fields from the query string', async () => {
    const empty = await service.app.inject({ method: 'POST', url: FEEDBACK })
    expect(empty.statusCode).toBe(400)
    const multipart = await service.app.inject({
      method: 'POST', url: FEEDBACK, headers: { 'content-type': 'multipart/form-data; boundary=x' }, payload: '--x\r\nContent-Disposition: form-data; name="label"\r\n\r\nfraudulent\r\n--x--\r\n',
    })
    expect(multipart.statusCode).toBe(415)
    const { answer } = await verify()
    const query = new URLSearchParams({ secret: site.secretKey, verification_id: answer.metadata.verification_id, label: 'fraudulent' })
    const fromQuery = await service.app.inject({ method: 'POST', url: `${FEEDBACK}?${query.toString()}`, payload: {} })
    expect(fromQuery.statusCode).toBe(400)
  })
})
