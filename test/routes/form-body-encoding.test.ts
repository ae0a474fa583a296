import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { asScript, createTestSite, type CreatedSite } from '../helpers/dashboard-client.js'
import { browserHeaders, obtainToken } from '../helpers/core-flow.js'
import { useAppWithOwner } from '../helpers/site-sharing.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

const FORM = 'application/x-www-form-urlencoded'
const BOUNDARY = 'tollgate-test-boundary'
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`
/** Siteverify's answer (Turnstile's path) to a body it cannot read. */
const BAD_REQUEST = '{"success":false,"error-codes":["bad-request"],"messages":[]}'

/** Bytes as written, one a character (`'\xff'` is the byte FF, not the UTF-8 of ÿ). */
const bytes = (text: string) => Buffer.from(text, 'latin1')

type Fields = Record<string, string | Buffer>

/** A form-urlencoded body of the fields as given: text as its UTF-8 bytes (escape it yourself), a Buffer as is. */
function formOf(fields: Fields): Buffer {
  return Buffer.concat(Object.entries(fields).flatMap(([name, value], index) => [Buffer.from(`${index === 0 ? '' : '&'}${name}=`), Buffer.from(value)]))
}

/** A multipart body of the fields as given (no part carries a Content-Type), to go with MULTIPART. */
function multipartOf(fields: Fields): Buffer {
  const parts = Object.entries(fields).flatMap(([name, value]) => [
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`),
    Buffer.from(value),
    Buffer.from('\r\n'),
  ])
  return Buffer.concat([...parts, Buffer.from(`--${BOUNDARY}--\r\n`)])
}

/**
 * Form-urlencoded and multipart bodies are read as JSON bodies are (body-encoding.test.ts): their
 * bytes, and the bytes their %-escapes stand for, must be UTF-8, and a charset label must not make
 * them read otherwise. Before, such bytes became U+FFFD (or an escape stayed as written), so two
 * different values were one.
 */
describe.each(deployments)('the encoding of form and multipart bodies on $name', (deployment) => {
  const { available } = deployment
  const suite = useAppWithOwner(deployment, { rateLimitPerMinute: 0 })
  let site: CreatedSite
  beforeAll(async () => {
    if (available) site = await createTestSite(suite.service.app, suite.owner)
  })

  const token = () => obtainToken(suite.service.app, browserHeaders(site.siteKey))
  const siteverify = (contentType: string, payload: Buffer) =>
    suite.service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', headers: { 'content-type': contentType }, payload })
  const redeemAsJson = (response: string) =>
    suite.service.app.inject({ method: 'POST', url: '/turnstile/v0/siteverify', payload: { secret: site.secretKey, response } })

  describe('Siteverify', () => {
    it.skipIf(!available)('answers bytes that are not UTF-8, raw or %-escaped, with its 200 bad-request and spends no token', async () => {
      const response = await token()
      const fields = (idempotencyKey: string | Buffer) => ({ secret: site.secretKey, response, idempotency_key: idempotencyKey })
      for (const [contentType, payload] of [
        [FORM, formOf(fields(bytes('\xff')))],
        [FORM, formOf(fields(bytes('caf\xe9')))],
        [FORM, formOf(fields('%FF'))],
        [FORM, formOf(fields('%FE'))],
        // A sequence cut short, an encoded surrogate, an overlong slash, one beside a % that begins no escape.
        [FORM, formOf(fields('a%E2%82'))],
        [FORM, formOf(fields('%ED%A0%80'))],
        [FORM, formOf(fields('%C0%AF'))],
        [FORM, formOf(fields('100%%FF'))],
        // In a name (an unknown field's, ignored otherwise) as in a value.
        [FORM, Buffer.concat([formOf(fields('key')), bytes('&x\xff=1')])],
        [MULTIPART, multipartOf(fields(bytes('\xff')))],
        [MULTIPART, multipartOf(fields(bytes('a\xe2\x82')))],
      ] as const) {
        const answer = await siteverify(contentType, payload)
        expect(answer.statusCode).toBe(200)
        expect(answer.body, payload.toString('latin1')).toBe(BAD_REQUEST)
      }
      expect((await redeemAsJson(response)).json()).toMatchObject({ success: true })
    })

    it.skipIf(!available)('does not give a second, different invalid idempotency key the first answer', async () => {
      for (const bodyOf of [formOf, multipartOf]) {
        const response = await token()
        const contentType = bodyOf === formOf ? FORM : MULTIPART
        for (const key of ['\xff', '\xfe']) {
          const answer = await siteverify(contentType, bodyOf({ secret: site.secretKey, response, idempotency_key: bytes(key) }))
          expect(answer.body, `${contentType} ${key}`).toBe(BAD_REQUEST)
        }
      }
      // %FF is no key; %25FF is the key "%FF", which a retry with %FF does not share.
      const response = await token()
      const withKey = (key: string) => siteverify(FORM, formOf({ secret: site.secretKey, response, idempotency_key: key }))
      expect((await withKey('%FF')).body).toBe(BAD_REQUEST)
      expect((await withKey('%25FF')).json()).toMatchObject({ success: true })
      expect((await withKey('%FF')).body).toBe(BAD_REQUEST)
      expect((await withKey('%25FF')).json()).toMatchObject({ success: true })
    })

    it.skipIf(!available)('refuses a Latin-1 body labelled iso-8859-1, and takes ASCII bodies labelled us-ascii or iso-8859-1', async () => {
      const response = await token()
      for (const [contentType, payload] of [
        [`${FORM}; charset=iso-8859-1`, formOf({ secret: site.secretKey, response, idempotency_key: bytes('caf\xe9') })],
        // UTF-8's é is two bytes that Latin-1 would read as Ã©: refused as JSON is (415).
        [`${FORM}; charset=iso-8859-1`, formOf({ secret: site.secretKey, response, idempotency_key: 'café' })],
        [`${FORM}; charset=utf-16le`, formOf({ secret: site.secretKey, response })],
        [`${MULTIPART}; charset=iso-8859-1`, multipartOf({ secret: site.secretKey, response, idempotency_key: bytes('caf\xe9') })],
      ] as const) {
        expect((await siteverify(contentType, payload)).body, contentType).toBe(BAD_REQUEST)
      }
      expect((await redeemAsJson(response)).json()).toMatchObject({ success: true })

      for (const charset of ['us-ascii', 'iso-8859-1', '"ISO-8859-1"']) {
        for (const [type, bodyOf] of [[FORM, formOf], [MULTIPART, multipartOf]] as const) {
          const answer = await siteverify(`${type}; charset=${charset}`, bodyOf({ secret: site.secretKey, response: await token(), idempotency_key: 'plain-ascii' }))
          expect(answer.json(), `${type} ${charset}`).toMatchObject({ success: true, 'error-codes': [] })
        }
      }
    })

    it.skipIf(!available)('takes UTF-8 text, %-encoded or raw, form or multipart, unchanged: the same idempotency key', async () => {
      const response = await token()
      const key = 'café😀 naïve'
      const first = await siteverify(FORM, formOf({ secret: site.secretKey, response, idempotency_key: encodeURIComponent(key) }))
      expect(first.json()).toMatchObject({ success: true })
      // Each retry replays the first answer only if it reads the very same key.
      for (const [contentType, payload] of [
        [FORM, formOf({ secret: site.secretKey, response, idempotency_key: key.replace(' ', '+') })],
        [`${FORM}; charset=UTF-8`, formOf({ secret: site.secretKey, response, idempotency_key: 'caf%C3%A9%F0%9F%98%80%20na%C3%AFve' })],
        [MULTIPART, multipartOf({ secret: site.secretKey, response, idempotency_key: key })],
        ['application/json', Buffer.from(JSON.stringify({ secret: site.secretKey, response, idempotency_key: key }))],
      ] as const) {
        expect((await siteverify(contentType, payload)).json(), payload.toString()).toMatchObject({ success: true, 'error-codes': [] })
      }
      const other = await siteverify(FORM, formOf({ secret: site.secretKey, response, idempotency_key: encodeURIComponent('cafe😀 naïve') }))
      expect(other.json()).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })
    })
  })

  describe('Siteverify feedback', () => {
    const FEEDBACK = '/api/v1/siteverify/feedback'
    const feedback = (contentType: string, payload: Buffer) =>
      suite.service.app.inject({ method: 'POST', url: FEEDBACK, headers: { 'content-type': contentType }, payload })

    /** A verification redeemed, its id, and how the log now shows its label. */
    async function verification() {
      const answer = await redeemAsJson(await token())
      const id = answer.json<{ metadata: { verification_id: string } }>().metadata.verification_id
      await suite.service.app.verificationLog.flush()
      const labelOf = async () => {
        const log = await suite.service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications`, headers: asScript(suite.owner) })
        const item = log.json<{ items: { verificationId: string; label: string | null; labelNote: string | null }[] }>().items.find((row) => row.verificationId === id)
        return { label: item?.label, note: item?.labelNote }
      }
      return { id, labelOf }
    }

    it.skipIf(!available)('refuses bytes that are not UTF-8, raw or %-escaped (400), or a Latin-1 body labelled so (415), labeling nothing', async () => {
      const { id, labelOf } = await verification()
      const fields = (note: string | Buffer) => ({ secret: site.secretKey, verification_id: id, label: 'fraudulent', reason: 'chargeback', note })
      for (const [contentType, payload, status, code] of [
        [FORM, formOf(fields(bytes('caf\xe9'))), 400, 'validation_error'],
        [FORM, formOf(fields('%FF')), 400, 'validation_error'],
        [FORM, formOf(fields('%FE')), 400, 'validation_error'],
        [FORM, formOf(fields('caf%E9')), 400, 'validation_error'],
        [`${FORM}; charset=iso-8859-1`, formOf(fields(bytes('caf\xe9'))), 415, 'unsupported_media_type'],
      ] as const) {
        const refused = await feedback(contentType, payload)
        expect(refused.statusCode, payload.toString('latin1')).toBe(status)
        expect(refused.json()).toMatchObject({ success: false, 'error-codes': ['bad-request'], error: { code } })
      }
      expect(await labelOf()).toEqual({ label: null, note: null })
    })

    it.skipIf(!available)('takes UTF-8 notes, %-encoded or raw, unchanged, and ASCII labelled us-ascii or iso-8859-1', async () => {
      const { id, labelOf } = await verification()
      const note = 'café 😀'
      for (const [contentType, payload, expected] of [
        [FORM, formOf({ secret: site.secretKey, verification_id: id, label: 'fraudulent', reason: 'chargeback', note: encodeURIComponent(note) }), note],
        [FORM, formOf({ secret: site.secretKey, verification_id: id, label: 'fraudulent', reason: 'chargeback', note: 'naïve+🙂' }), 'naïve 🙂'],
        [`${FORM}; charset=us-ascii`, formOf({ secret: site.secretKey, verification_id: id, label: 'fraudulent', reason: 'chargeback', note: 'order+1' }), 'order 1'],
        [`${FORM}; charset=iso-8859-1`, formOf({ secret: site.secretKey, verification_id: id, label: 'fraudulent', reason: 'chargeback', note: 'order+2' }), 'order 2'],
      ] as const) {
        const accepted = await feedback(contentType, payload)
        expect(accepted.statusCode, accepted.body).toBe(200)
        await suite.service.app.verificationLog.flush()
        expect(await labelOf()).toEqual({ label: 'fraudulent', note: expected })
      }
    })
  })
})

describe('the encoding of the demo form', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp({ env: { NODE_ENV: 'development' } })
  })
  afterAll(() => service.close())

  const post = (contentType: string, payload: Buffer) => service.app.inject({ method: 'POST', url: '/demo', headers: { 'content-type': contentType }, payload })

  it('refuses bytes that are not UTF-8, raw or %-escaped (400), or a Latin-1 body labelled so (415)', async () => {
    for (const [contentType, payload, status, code] of [
      [FORM, formOf({ form: bytes('caf\xe9'), 'tollgate-token': 'v1.forged' }), 400, 'validation_error'],
      [FORM, formOf({ form: '%FF', 'tollgate-token': 'v1.forged' }), 400, 'validation_error'],
      [FORM, formOf({ form: '%FE', 'tollgate-token': 'v1.forged' }), 400, 'validation_error'],
      [`${FORM}; charset=iso-8859-1`, formOf({ form: bytes('caf\xe9'), 'tollgate-token': 'v1.forged' }), 415, 'unsupported_media_type'],
    ] as const) {
      const refused = await post(contentType, payload)
      expect(refused.statusCode, payload.toString('latin1')).toBe(status)
      expect(refused.json().error.code).toBe(code)
    }
  })

  it('takes UTF-8, %-encoded or raw, unchanged, and ASCII labelled us-ascii or iso-8859-1', async () => {
    for (const [contentType, form, shown] of [
      [FORM, encodeURIComponent('café 😀'), 'café 😀'],
      [FORM, 'naïve+🙂', 'naïve 🙂'],
      [`${FORM}; charset=us-ascii`, 'signup', 'signup'],
      [`${FORM}; charset=iso-8859-1`, 'contact', 'contact'],
    ] as const) {
      const page = await post(contentType, formOf({ form, 'tollgate-token': 'v1.forged' }))
      expect(page.statusCode, page.body).toBe(200)
      expect(page.body).toContain(`<td data-field="Form">${shown}</td>`)
    }
  })
})
