import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  browserHeaders,
  createTestSite,
  fetchChallenge,
  humanSubmission,
  requestChallenge,
  submitSolution,
  type TestSite,
} from '../helpers/core-flow.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'

interface SiteverifyAnswer {
  success: boolean
  hostname: string | null
  anomalies: string[]
  'error-codes': string[]
}

/**
 * The Origin headers that apps' web views send when their page calls the service (docs/apps.md,
 * "What Siteverify reports"), and the hostname Siteverify then answers.
 */
const appOrigins: [app: string, origin: string, hostname: string | null][] = [
  ['Capacitor and Ionic on iOS', 'capacitor://localhost', 'localhost'],
  ['the Ionic web view of before Capacitor on iOS', 'ionic://localhost', 'localhost'],
  ['Cordova iOS 6 and later', 'app://localhost', 'localhost'],
  ['Capacitor 6 and Cordova Android 10 on Android', 'https://localhost', 'localhost'],
  ['Capacitor before 6 on Android', 'http://localhost', 'localhost'],
  ["Android's WebViewAssetLoader", 'https://appassets.androidplatform.net', 'appassets.androidplatform.net'],
  ['a WKURLSchemeHandler scheme of the app', 'shopapp://app.shop.example', 'app.shop.example'],
  ['a scheme of the app written with capitals', 'capacitor://LocalHost', 'localhost'],
  ['a sandboxed iframe, a file: page, Cordova with file: pages', 'null', null],
  ['an old Android WebView on a file: page', 'file://', null],
  ['a WKWebView page loaded from a string without a base URL', 'null', null],
]

/** The headers an iPhone's WKWebView (the engine of Capacitor, Ionic and Cordova on iOS) sends to the service. */
function iosWebViewHeaders(siteKey: string, origin: string): Record<string, string> {
  return {
    'x-site-key': siteKey,
    origin,
    // A WKWebView's User-Agent is Safari's without "Version/…" and "Safari/…".
    'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
    'accept-language': 'en-GB,en;q=0.9',
    'sec-fetch-mode': 'cors',
    'sec-fetch-site': 'cross-site',
    'sec-fetch-dest': 'empty',
  }
}

/** What the SDK collects in that web view: WebKit has no client hints and lists no plugins on a phone. */
const iosWebViewFingerprint = {
  canvas: '7e2a90c1d4b35f86a0e2',
  webgl: 'Apple GPU',
  webglSoftware: false,
  webdriver: false,
  headlessUserAgent: false,
  automationMarkers: 0,
  patchedNatives: 0,
  pluginsLength: 0,
  languagesLength: 1,
  language: 'en-GB',
  hardwareConcurrency: 6,
  screenWidth: 390,
  screenHeight: 844,
  outerWidth: 390,
  outerHeight: 844,
  timezone: 'Europe/London',
  platform: 'iPhone',
  userAgentBrands: '',
}

describe('the SDK in apps and web views: challenge, verify and Siteverify by the Origin an app sends', () => {
  let service: TestApp
  let open: TestSite
  beforeAll(async () => {
    service = await buildTestApp({ config: { rateLimitPerMinute: 0 } })
    open = await createTestSite(service.app)
  })
  afterAll(() => service.close())

  /** Challenge, solve, submit and redeem with these headers; the verify answer's status and body, and Siteverify's answer. */
  async function verifyAndRedeem(site: TestSite, headers: Record<string, string>, fingerprint?: object) {
    const challenge = await fetchChallenge(service.app, headers)
    const submission = { ...humanSubmission(challenge), ...fingerprint === undefined ? {} : { fingerprint } }
    const verified = await submitSolution(service.app, headers, submission)
    const result = verified.json<{ success: boolean; token?: string; riskScore: number; action: string }>()
    expect(verified.statusCode, verified.body).toBe(200)
    expect(result.token, verified.body).toEqual(expect.any(String))
    const redeemed = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response: result.token } })
    return { result, answer: redeemed.json<SiteverifyAnswer>() }
  }

  describe('on a site that lists no domains', () => {
    it.each(appOrigins)('%s (Origin: %s): Siteverify answers hostname %j', async (_app, origin, hostname) => {
      const { result, answer } = await verifyAndRedeem(open, browserHeaders(open.siteKey, origin))
      expect(answer).toMatchObject({ success: true, hostname, 'error-codes': [] })
      // An origin that names no host costs missing_origin, as a request without one does; one that names a host costs nothing.
      if (hostname === null) {
        expect(answer.anomalies).toEqual(['missing_origin'])
        expect(result).toMatchObject({ riskScore: 10, action: 'allow' })
      } else {
        expect(answer.anomalies).toEqual([])
        expect(result).toMatchObject({ riskScore: 0, action: 'allow' })
      }
    })

    it('scores an iPhone web view at capacitor://localhost as any visitor, and Siteverify answers localhost', async () => {
      const { result, answer } = await verifyAndRedeem(open, iosWebViewHeaders(open.siteKey, 'capacitor://localhost'), iosWebViewFingerprint)
      expect(result).toMatchObject({ success: true, riskScore: 0, action: 'allow' })
      expect(answer).toMatchObject({ success: true, hostname: 'localhost', anomalies: [] })
    })

    it('answers a native client that sends neither Origin nor Referer with hostname null', async () => {
      const { origin: _origin, ...headers } = browserHeaders(open.siteKey)
      const { answer } = await verifyAndRedeem(open, headers)
      expect(answer).toMatchObject({ success: true, hostname: null, anomalies: ['missing_origin'] })
    })

    it('answers CORS for an app\'s origin and for an opaque one: the preflight and the request echo the Origin as sent', async () => {
      for (const origin of ['capacitor://localhost', 'https://appassets.androidplatform.net', 'null']) {
        const preflight = await service.app.inject({
          method: 'OPTIONS',
          url: '/api/v1/challenge',
          headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-site-key' },
        })
        expect(preflight.statusCode, origin).toBe(204)
        expect(preflight.headers['access-control-allow-origin'], origin).toBe(origin)
        expect(preflight.headers['access-control-allow-headers']).toMatch(/X-Site-Key/i)
        const response = await requestChallenge(service.app, browserHeaders(open.siteKey, origin))
        expect(response.statusCode, origin).toBe(200)
        expect(response.headers['access-control-allow-origin'], origin).toBe(origin)
        expect(response.headers['access-control-allow-credentials']).toBeUndefined()
      }
    })
  })

  describe('on a site that lists its domains', () => {
    it('lets capacitor://localhost in when localhost is listed, and refuses it when only the web domain is', async () => {
      const withApp = await createTestSite(service.app, { domains: ['shop.example', 'localhost'] })
      const { answer } = await verifyAndRedeem(withApp, browserHeaders(withApp.siteKey, 'capacitor://localhost'))
      expect(answer).toMatchObject({ success: true, hostname: 'localhost' })

      const webOnly = await createTestSite(service.app, { domains: ['shop.example'] })
      const refused = await requestChallenge(service.app, browserHeaders(webOnly.siteKey, 'capacitor://localhost'))
      expect(refused.statusCode).toBe(403)
      expect(refused.json().error).toMatchObject({ code: 'origin_not_allowed', message: 'This site key is not allowed on localhost.' })
      // The refusal is readable by the app's page: CORS headers come with errors too.
      expect(refused.headers['access-control-allow-origin']).toBe('capacitor://localhost')
    })

    it('admits every page on localhost once localhost is listed for the app: a local dev server\'s too', async () => {
      const withApp = await createTestSite(service.app, { domains: ['shop.example', 'localhost'] })
      for (const origin of ['http://localhost:8080', 'ionic://localhost', 'app://localhost']) {
        const { answer } = await verifyAndRedeem(withApp, browserHeaders(withApp.siteKey, origin))
        expect(answer, origin).toMatchObject({ success: true, hostname: 'localhost' })
      }
    })

    it('lets an Android app at appassets.androidplatform.net in when that host is listed', async () => {
      const android = await createTestSite(service.app, { domains: ['shop.example', 'appassets.androidplatform.net'] })
      const { answer } = await verifyAndRedeem(android, browserHeaders(android.siteKey, 'https://appassets.androidplatform.net'))
      expect(answer).toMatchObject({ success: true, hostname: 'appassets.androidplatform.net' })
      const other = await requestChallenge(service.app, browserHeaders(android.siteKey, 'capacitor://localhost'))
      expect(other.json().error.code).toBe('origin_not_allowed')
    })

    it('refuses an opaque origin (Origin: null, file://) whatever is listed, a Referer on a listed domain and a domain named null included', async () => {
      const site = await createTestSite(service.app, { domains: ['shop.example', 'localhost', 'null'] })
      for (const headers of [
        browserHeaders(site.siteKey, 'null'),
        { ...browserHeaders(site.siteKey, 'null'), referer: 'https://shop.example/checkout' },
        browserHeaders(site.siteKey, 'file://'),
      ]) {
        const refused = await requestChallenge(service.app, headers)
        expect(refused.statusCode, JSON.stringify(headers)).toBe(403)
        expect(refused.json().error).toMatchObject({ code: 'origin_not_allowed', message: 'This site key is not allowed on an origin without a host.' })
        expect(refused.headers['access-control-allow-origin']).toBe(headers.origin)
      }
    })

    it('serves a native client that sends neither Origin nor Referer, and Siteverify answers hostname null', async () => {
      const site = await createTestSite(service.app, { domains: ['shop.example'] })
      const { origin: _origin, ...headers } = browserHeaders(site.siteKey)
      const { result, answer } = await verifyAndRedeem(site, headers)
      expect(result).toMatchObject({ riskScore: 10, action: 'allow' })
      expect(answer).toMatchObject({ success: true, hostname: null, anomalies: ['missing_origin'] })
    })
  })
})
