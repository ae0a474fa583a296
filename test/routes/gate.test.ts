import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { CLEARANCE_COOKIE, CLEARANCE_RENEWAL_CAP_LIFETIMES, MAX_CLEARANCES_TRIED } from '../../src/domain/gate/clearance.js'
import { browserHeaders, createTestSite, obtainToken, type TestSite } from '../helpers/core-flow.js'
import { buildTestApp, deployments, type TestApp } from '../helpers/test-app.js'

const PAGE_ORIGIN = 'https://shop.example.com'
const VISITOR = '198.51.100.23'
const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
const NAVIGATION_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
const TEST_KEY_ALLOW = '1x00000000000000000000AA'

/** The clearance cookie an answer sets, with its attributes. */
function clearanceCookieOf(response: LightMyRequestResponse): { value: string; attributes: string[] } {
  const header = [response.headers['set-cookie'] ?? []].flat().find((line) => line.startsWith(`${CLEARANCE_COOKIE}=`))
  if (header === undefined) throw new Error(`no clearance cookie: ${response.statusCode} ${response.body}`)
  const [pair = '', ...attributes] = header.split(/;\s*/)
  return { value: pair.slice(CLEARANCE_COOKIE.length + 1), attributes }
}

describe.each(deployments)('the gate for whole sites on $name', ({ available, options }) => {
  let service: TestApp
  let site: TestSite
  beforeAll(async () => {
    if (!available) return
    service = await buildTestApp({ ...options, config: { rateLimitPerMinute: 0 } })
    site = await createTestSite(service.app, { domains: ['shop.example.com'] })
  })
  afterAll(async () => {
    if (available) await service.close()
  })

  /** What a reverse proxy sends for a visitor's request of the protected host. */
  const check = (init: { siteKey?: string; cookie?: string; userAgent?: string; ip?: string; accept?: string; method?: 'GET' | 'HEAD'; url?: string; headers?: Record<string, string> } = {}) =>
    service.app.inject({
      method: init.method ?? 'GET',
      url: init.url ?? `/gate/v1/check?sitekey=${init.siteKey ?? site.siteKey}`,
      remoteAddress: init.ip ?? VISITOR,
      headers: {
        'user-agent': init.userAgent ?? USER_AGENT,
        accept: init.accept ?? NAVIGATION_ACCEPT,
        ...(init.cookie === undefined ? {} : { cookie: `theme=dark; ${CLEARANCE_COOKIE}=${init.cookie}` }),
        ...init.headers,
      },
    })

  /** What the gate's page sends, through the protected host, to trade its token. */
  const clear = (token: string, init: { siteKey?: string; origin?: string | null; ip?: string } = {}) =>
    service.app.inject({
      method: 'POST',
      url: '/gate/v1/clearance',
      remoteAddress: init.ip ?? VISITOR,
      headers: { 'user-agent': USER_AGENT, ...(init.origin === null ? {} : { origin: init.origin ?? PAGE_ORIGIN }) },
      payload: { siteKey: init.siteKey ?? site.siteKey, token },
    })

  const pageToken = (siteKey = site.siteKey, origin = PAGE_ORIGIN) => obtainToken(service.app, browserHeaders(siteKey, origin))

  it.skipIf(!available)("answers a browser without a clearance with the gate's page, which loads the SDK under the prefix", async () => {
    const response = await check()
    expect(response.statusCode).toBe(403)
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.headers['content-security-policy']).toContain("script-src 'self' 'wasm-unsafe-eval'")
    expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'")
    expect(response.body).toContain(`<script src="/.tollgate/sdk/v1/gate.js" data-site-key="${site.siteKey}" data-prefix="/.tollgate" async></script>`)
    expect(response.body).toContain('<noscript>')

    const elsewhere = await check({ url: `/gate/v1/check?sitekey=${site.siteKey}&prefix=/_gate/tollgate` })
    expect(elsewhere.body).toContain('<script src="/_gate/tollgate/sdk/v1/gate.js" data-site-key')
    expect(elsewhere.body).toContain('data-prefix="/_gate/tollgate"')
    // nginx's error_page asks for the page itself, which is not a second check.
    const page = await check({ url: `/gate/v1/page?sitekey=${site.siteKey}` })
    expect(page.statusCode).toBe(403)
    expect(page.headers['content-security-policy']).toBe(response.headers['content-security-policy'])
    expect(page.body).toBe(response.body)
  })

  it.skipIf(!available)("speaks the visitor's language, and hands its script the rest of its texts", async () => {
    const response = await check({ headers: { 'accept-language': 'fr-FR,fr;q=0.9,en;q=0.8' } })
    expect(response.headers['content-language']).toBe('fr')
    expect(response.body).toContain('<html lang="fr" dir="ltr">')
    expect(response.body).toContain('<title>Un instant</title>')
    expect(response.body).toContain('Nous vérifions que vous êtes une personne.')
    const json = /<script type="application\/json" id="tollgate-gate-strings">(.*?)<\/script>/.exec(response.body)?.[1]
    expect(JSON.parse(json ?? 'null')).toMatchObject({ deniedTitle: 'Accès refusé' })
    const english = await check({ headers: { 'accept-language': 'fi-FI' } })
    expect(english.body).toContain('<html lang="en" dir="ltr">')
  })

  it.skipIf(!available)("offers the site's help link for blocked visitors, hidden until gate.js turns the visitor away, with a place for the reference", async () => {
    expect((await check()).body).not.toContain('<a id="tollgate-gate-help"')
    const helped = await createTestSite(service.app, { domains: ['shop.example.com'], settings: { blockedHelpUrl: 'https://help.example.com/contact?topic=gate%20help#form' } })
    const response = await check({ siteKey: helped.siteKey, headers: { 'accept-language': 'fr-FR,fr;q=0.9' } })
    expect(response.statusCode).toBe(403)
    const link = /<a id="tollgate-gate-help" href="([^"]*)" data-reference-href="([^"]*)" hidden>([^<]*)<\/a>/.exec(response.body)
    expect(link?.[1]).toBe('https://help.example.com/contact?topic=gate%20help#form')
    expect(link?.[3]).toBe('Contacter le propriétaire du site')
    // What gate.js does with a denied verification's reference: the site's own query is kept as it was.
    const withReference = (template: string, reference: string) => template.replaceAll('&#38;', '&').replace('{reference}', encodeURIComponent(reference))
    expect(withReference(link?.[2] ?? '', 'vr_ABC123')).toBe('https://help.example.com/contact?topic=gate%20help&ref=vr_ABC123#form')
    // After the status region and the noscript text, inside main: gate.js moves it into the status.
    expect(response.body.indexOf('id="tollgate-gate-help"')).toBeGreaterThan(response.body.indexOf('id="tollgate-gate-status"'))
    expect(response.body.indexOf('id="tollgate-gate-help"')).toBeLessThan(response.body.indexOf('</main>'))

    const mailed = await createTestSite(service.app, { domains: ['shop.example.com'], settings: { blockedHelpUrl: 'mailto:help@example.com?subject=Blocked' } })
    const mailPage = await check({ siteKey: mailed.siteKey })
    const mailLink = /<a id="tollgate-gate-help" href="([^"]*)" data-reference-href="([^"]*)" hidden>([^<]*)<\/a>/.exec(mailPage.body)
    expect(mailLink?.[3]).toBe('Contact the site&#39;s owner')
    expect(withReference(mailLink?.[2] ?? '', 'vr_ABC123')).toBe('mailto:help@example.com?subject=Blocked&body=Reference:%20vr_ABC123')
  })

  // Each language the SDK speaks besides the gate's first seven, as a browser set to it asks, and Portuguese as Brazil writes it.
  it.skipIf(!available).each([
    { acceptLanguage: 'pt-BR,pt;q=0.9,en;q=0.8', language: 'pt', title: 'Um momento', text: 'Estamos verificando se você é uma pessoa.' },
    { acceptLanguage: 'pl-PL,pl;q=0.9,en;q=0.8', language: 'pl', title: 'Chwileczkę', text: 'Sprawdzamy, czy jesteś człowiekiem.' },
    { acceptLanguage: 'sv-SE,sv;q=0.9,en;q=0.8', language: 'sv', title: 'Ett ögonblick', text: 'Vi kontrollerar att du är en människa.' },
    { acceptLanguage: 'ja,en-US;q=0.9,en;q=0.8', language: 'ja', title: 'しばらくお待ちください', text: '人によるアクセスかどうかを確認しています。' },
    { acceptLanguage: 'zh-CN,zh;q=0.9,en;q=0.8', language: 'zh', title: '请稍候', text: '正在确认您是真人。' },
    { acceptLanguage: 'ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7', language: 'ko', title: '잠시만 기다려 주세요', text: '사람인지 확인하고 있습니다.' },
    { acceptLanguage: 'tr-TR,tr;q=0.9,en;q=0.8', language: 'tr', title: 'Lütfen bekleyin', text: 'İnsan olduğunuzu kontrol ediyoruz.' },
    { acceptLanguage: 'ru-RU,ru;q=0.9,en;q=0.8', language: 'ru', title: 'Одну минуту', text: 'Проверяем, что вы человек.' },
    { acceptLanguage: 'uk-UA,uk;q=0.9,ru;q=0.8,en;q=0.7', language: 'uk', title: 'Хвилинку', text: 'Перевіряємо, що ви людина.' },
    { acceptLanguage: 'cs-CZ,cs;q=0.9,en;q=0.8', language: 'cs', title: 'Okamžik, prosím', text: 'Ověřujeme, že jste člověk.' },
    // The right-to-left languages: the page is written right to left from its <html> down.
    { acceptLanguage: 'ar-EG,ar;q=0.9,en;q=0.8', language: 'ar', title: 'لحظة من فضلك', text: 'نتحقق من أنك إنسان.', dir: 'rtl' },
    { acceptLanguage: 'he-IL,he;q=0.9,en-US;q=0.8,en;q=0.7', language: 'he', title: 'רק רגע', text: 'בודקים שמדובר באדם.', dir: 'rtl' },
    { acceptLanguage: 'fa-IR,fa;q=0.9,en;q=0.8', language: 'fa', title: 'لحظه\u200cای صبر کنید', text: 'در حال بررسی اینکه شما انسان هستید.', dir: 'rtl' },
  ])('answers Accept-Language $acceptLanguage with its page in $language', async ({ acceptLanguage, language, title, text, dir = 'ltr' }) => {
    const response = await check({ headers: { 'accept-language': acceptLanguage } })
    expect(response.headers['content-language']).toBe(language)
    expect(response.body).toContain(`<html lang="${language}" dir="${dir}">`)
    expect(response.body).toContain(`<title>${title}</title>`)
    expect(response.body).toContain(text)
  })

  it.skipIf(!available)('answers Traditional Chinese in the next language it speaks, never in Simplified, and Simplified Chinese in Simplified', async () => {
    // Chrome in Taiwan asks for zh-TW, zh, en-US, en: its bare zh is the same visitor's Traditional Chinese.
    for (const acceptLanguage of ['zh-TW,zh;q=0.9,en-US;q=0.8,en;q=0.7', 'zh-Hant', 'zh-HK,zh;q=0.9', 'zh-Hant-TW, ja;q=0.5']) {
      const response = await check({ headers: { 'accept-language': acceptLanguage } })
      expect(response.headers['content-language'], acceptLanguage).toBe(acceptLanguage.includes('ja') ? 'ja' : 'en')
      expect(response.body, acceptLanguage).not.toContain('请稍候')
    }
    for (const acceptLanguage of ['zh-CN,zh;q=0.9', 'zh-Hans-HK', 'zh-TW;q=0.5, zh-CN']) {
      const response = await check({ headers: { 'accept-language': acceptLanguage } })
      expect(response.body, acceptLanguage).toContain('<html lang="zh" dir="ltr">')
      expect(response.body, acceptLanguage).toContain('<title>请稍候</title>')
    }
  })

  it.skipIf(!available)("tells the page's script the method the visitor came with, when the proxy says", async () => {
    const posted = await check({ headers: { 'x-forwarded-method': 'POST' } })
    expect(posted.body).toContain('data-prefix="/.tollgate" data-method="POST" async>')
    expect((await check()).body).toContain('data-prefix="/.tollgate" async>')
    expect((await check({ headers: { 'x-forwarded-method': 'P"OST' } })).body).toContain('data-prefix="/.tollgate" async>')
  })

  it.skipIf(!available)("takes the site key and the prefix from the proxy's address only, never from a visitor's headers or a second value", async () => {
    // Caddy and Traefik pass every header of the visitor's request on to the check.
    const { value } = clearanceCookieOf(await clear(await pageToken(TEST_KEY_ALLOW), { siteKey: TEST_KEY_ALLOW }))
    const forged = await check({ cookie: value, headers: { 'x-tollgate-site-key': TEST_KEY_ALLOW, 'x-tollgate-prefix': '/uploads' } })
    expect(forged.statusCode).toBe(403)
    expect(forged.body).toContain(`data-site-key="${site.siteKey}" data-prefix="/.tollgate"`)
    expect((await check({ cookie: value, url: '/gate/v1/check', headers: { 'x-tollgate-site-key': TEST_KEY_ALLOW } })).statusCode).toBe(400)
    // A proxy that appends the visitor's query string to the configured one.
    for (const query of [`sitekey=${site.siteKey}&sitekey=${TEST_KEY_ALLOW}`, `sitekey=${site.siteKey}&prefix=/.tollgate&prefix=/uploads`]) {
      const response = await check({ cookie: value, url: `/gate/v1/check?${query}` })
      expect(response.statusCode, query).toBe(400)
      expect(response.json()).toMatchObject({ error: { code: 'validation_error' } })
    }
  })

  it.skipIf(!available)('answers an API client without a clearance with clearance_required', async () => {
    const response = await check({ accept: 'application/json' })
    expect(response.statusCode).toBe(403)
    expect(response.json()).toMatchObject({ error: { code: 'clearance_required' } })
    const any = await check({ accept: '*/*' })
    expect(any.statusCode).toBe(403)
    expect(any.json()).toMatchObject({ error: { code: 'clearance_required' } })
    const head = await check({ method: 'HEAD' })
    expect(head.statusCode).toBe(403)
    expect(head.body).toBe('')
  })

  it.skipIf(!available)('refuses a missing or unknown site key and a prefix that is not a path, with their codes', async () => {
    const missing = await check({ url: '/gate/v1/check' })
    expect(missing.statusCode).toBe(400)
    expect(missing.json()).toMatchObject({ error: { code: 'validation_error', details: [{ field: 'querystring.sitekey' }] } })
    const unknown = await check({ siteKey: 'tgk_unknown' })
    expect(unknown.statusCode).toBe(401)
    expect(unknown.json()).toMatchObject({ error: { code: 'invalid_site_key' } })
    for (const prefix of ['/.tollgate/', 'tollgate', '/a b', '//evil.example', '/"><script>', '/..', '/../uploads', '/x/./y', '/x/...', '']) {
      const response = await check({ url: `/gate/v1/check?sitekey=${site.siteKey}&prefix=${encodeURIComponent(prefix)}` })
      expect(response.statusCode, prefix).toBe(400)
      expect(response.json()).toMatchObject({ error: { code: 'validation_error' } })
    }
  })

  it.skipIf(!available)('answers a site key no site can have (a NUL, a space, a quote) as an unknown one, on the check, the page and the clearance', async () => {
    for (const siteKey of ['\u0000', 'a\u0000', `${site.siteKey}\u0000`, 'tgk_a b', 'tgk_"x', 'tgk_é']) {
      for (const url of [`/gate/v1/check?sitekey=${encodeURIComponent(siteKey)}`, `/gate/v1/page?sitekey=${encodeURIComponent(siteKey)}`]) {
        const response = await check({ url })
        expect(response.statusCode, url).toBe(401)
        expect(response.json()).toMatchObject({ error: { code: 'invalid_site_key' } })
      }
      const clearance = await clear('x', { siteKey })
      expect(clearance.statusCode, JSON.stringify(siteKey)).toBe(401)
      expect(clearance.json()).toMatchObject({ error: { code: 'invalid_site_key' } })
    }
    const halfPair = await clear('x', { siteKey: '\uD800' })
    expect(halfPair.json()).toMatchObject({ error: { code: 'invalid_site_key' } })
    // The test site keys and the vendors' ones they alias still pass the pattern.
    for (const siteKey of [TEST_KEY_ALLOW, '6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI', '10000000-ffff-ffff-ffff-000000000001']) {
      expect((await check({ siteKey })).statusCode, siteKey).toBe(403)
    }
    // Nor can any other caller of the lookup reach the database with a key it cannot hold.
    await expect(service.app.siteCache.findBySiteKey('a\u0000')).resolves.toBeUndefined()
    await expect(service.app.siteCache.findBySiteKey('\uD800')).resolves.toBeUndefined()
  })

  it.skipIf(!available)("trades a token of the host's page for a cookie that lets that browser through", async () => {
    const response = await clear(await pageToken())
    expect(response.statusCode).toBe(204)
    const cookie = clearanceCookieOf(response)
    // SameSite=None on https: a cleared visitor's cross-site POST (a sign-in provider's return) keeps it.
    expect(cookie.attributes).toEqual(expect.arrayContaining(['Max-Age=3600', 'Path=/', 'HttpOnly', 'Secure', 'SameSite=None']))

    expect((await check({ cookie: cookie.value })).statusCode).toBe(204)
    expect((await check({ cookie: cookie.value, method: 'HEAD' })).statusCode).toBe(204)
  })

  it.skipIf(!available)('lets no other browser, address, site or changed cookie through with it', async () => {
    const { value } = clearanceCookieOf(await clear(await pageToken()))
    const other = await createTestSite(service.app, { name: 'Another site behind the gate' })
    expect((await check({ cookie: value, userAgent: `${USER_AGENT} Edg/131.0.0.0` })).statusCode).toBe(403)
    expect((await check({ cookie: value, ip: '198.51.100.24' })).statusCode).toBe(403)
    expect((await check({ cookie: value, siteKey: other.siteKey })).statusCode).toBe(403)
    const changed = `${value.slice(0, -1)}${value.endsWith('A') ? 'B' : 'A'}`
    expect((await check({ cookie: changed })).statusCode).toBe(403)
    expect((await check({ cookie: value })).statusCode).toBe(204)
  })

  it.skipIf(!available)('lets a browser through that holds a stale clearance cookie beside its valid one, trying a few at most', async () => {
    const { value } = clearanceCookieOf(await clear(await pageToken()))
    const stale = `${value.slice(0, -1)}${value.endsWith('A') ? 'B' : 'A'}`
    // The header the browser sends: `theme=dark; tollgate_clearance=<stale>; tollgate_clearance=<valid>`.
    expect((await check({ cookie: `junk; ${CLEARANCE_COOKIE}=${value}` })).statusCode).toBe(204)
    expect((await check({ cookie: `${stale}; ${CLEARANCE_COOKIE}=${value}` })).statusCode).toBe(204)
    expect((await check({ cookie: `${stale}; ${CLEARANCE_COOKIE}=junk` })).statusCode).toBe(403)
    // A valid one after MAX_CLEARANCES_TRIED others is not looked at.
    const many = Array.from({ length: MAX_CLEARANCES_TRIED }, () => stale).join(`; ${CLEARANCE_COOKIE}=`)
    expect((await check({ cookie: `${many}; ${CLEARANCE_COOKIE}=${value}` })).statusCode).toBe(403)
  })

  it.skipIf(!available)('spends the token once, for the gate and Siteverify alike', async () => {
    const token = await pageToken()
    expect((await clear(token)).statusCode).toBe(204)
    const again = await clear(token)
    expect(again.statusCode).toBe(409)
    expect(again.json()).toMatchObject({ error: { code: 'token_spent' } })
    const siteverify = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response: token } })
    expect(siteverify.json()).toMatchObject({ success: false, 'error-codes': ['timeout-or-duplicate'] })

    const redeemed = await pageToken()
    const first = await service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: site.secretKey, response: redeemed } })
    expect(first.json()).toMatchObject({ success: true })
    expect((await clear(redeemed)).json()).toMatchObject({ error: { code: 'token_spent' } })
  })

  it.skipIf(!available)("refuses a token of another host's page, of another site, a changed one, and a call without Origin", async () => {
    const elsewhere = await createTestSite(service.app, { name: 'Another site' })
    const cases: [string, Promise<LightMyRequestResponse>][] = [
      ['another host', pageToken().then((token) => clear(token, { origin: 'https://evil.example' }))],
      ["another site's token", pageToken(elsewhere.siteKey).then((token) => clear(token))],
      ['another site key', pageToken().then((token) => clear(token, { siteKey: elsewhere.siteKey }))],
      ['a changed token', pageToken().then((token) => clear(`${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`))],
      ['no Origin', pageToken().then((token) => clear(token, { origin: null }))],
    ]
    for (const [name, answer] of cases) {
      const response = await answer
      expect(response.statusCode, name).toBe(403)
      expect(response.json(), name).toMatchObject({ error: { code: 'token_invalid' } })
      expect(response.headers['set-cookie'], name).toBeUndefined()
    }
    const unknown = await clear(await pageToken(), { siteKey: 'tgk_unknown' })
    expect(unknown.statusCode).toBe(401)
    const malformed = await service.app.inject({ method: 'POST', url: '/gate/v1/clearance', headers: { origin: PAGE_ORIGIN }, payload: { siteKey: site.siteKey } })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json()).toMatchObject({ error: { code: 'validation_error' } })
  })

  it.skipIf(!available)("refuses a token earned at another address when the site refuses those (tokenAddressCheck), without spending it", async () => {
    // The page's SDK earned the token from 127.0.0.1 (obtainToken's peer); the default site took it from VISITOR.
    const bound = await createTestSite(service.app, { name: 'Bound site', domains: ['shop.example.com'], settings: { tokenAddressCheck: 'refuse' } })
    const token = await pageToken(bound.siteKey)
    const elsewhere = await clear(token, { siteKey: bound.siteKey })
    expect(elsewhere.statusCode).toBe(403)
    expect(elsewhere.json()).toMatchObject({ error: { code: 'token_invalid', message: expect.stringContaining('another address') } })
    expect(elsewhere.headers['set-cookie']).toBeUndefined()
    expect(clearanceCookieOf(await clear(token, { siteKey: bound.siteKey, ip: '127.0.0.1' })).value).not.toBe('')
    // Under report, the gate does not refuse.
    const reporting = await createTestSite(service.app, { name: 'Reporting site', domains: ['shop.example.com'], settings: { tokenAddressCheck: 'report' } })
    expect((await clear(await pageToken(reporting.siteKey), { siteKey: reporting.siteKey })).statusCode).toBe(204)
  })

  it.skipIf(!available)('clears pages on an IPv6 address or a fully qualified name with its trailing dot', async () => {
    for (const origin of ['http://[::1]:8080', 'https://shop.example.com.']) {
      const local = await createTestSite(service.app, { name: `Site at ${origin}` })
      const response = await clear(await pageToken(local.siteKey, origin), { siteKey: local.siteKey, origin })
      expect(response.statusCode, origin).toBe(204)
      expect((await check({ siteKey: local.siteKey, cookie: clearanceCookieOf(response).value })).statusCode, origin).toBe(204)
    }
  })

  it.skipIf(!available)('sets a cookie without Secure for a page on http, and clears the test site keys as their tokens say', async () => {
    const site2 = await createTestSite(service.app, { name: 'Local site' })
    const plain = await clear(await pageToken(site2.siteKey, 'http://localhost:8080'), { siteKey: site2.siteKey, origin: 'http://localhost:8080' })
    expect(plain.statusCode).toBe(204)
    expect(clearanceCookieOf(plain).attributes).not.toContain('Secure')
    expect(clearanceCookieOf(plain).attributes).toContain('SameSite=Lax')

    const test = await clear(await pageToken(TEST_KEY_ALLOW), { siteKey: TEST_KEY_ALLOW })
    expect(test.statusCode).toBe(204)
    expect((await check({ siteKey: TEST_KEY_ALLOW, cookie: clearanceCookieOf(test).value })).statusCode).toBe(204)
  })

  it.skipIf(!available)("lets the site's allowlisted addresses through without a clearance, and no one else", async () => {
    const office = await createTestSite(service.app, { name: 'Site with an office', settings: { allowedAddresses: ['203.0.113.0/24'] } })
    expect((await check({ siteKey: office.siteKey, ip: '203.0.113.9' })).statusCode).toBe(204)
    expect((await check({ siteKey: office.siteKey, ip: '203.0.114.9' })).statusCode).toBe(403)
    expect((await check({ ip: '203.0.113.9' })).statusCode).toBe(403)
  })

  it.skipIf(!available)("denies the site's blocked addresses and countries, even with a clearance, and no one else", async () => {
    const guarded = await createTestSite(service.app, { name: 'Site with a blocklist', domains: ['shop.example.com'], settings: { blockedAddresses: ['198.51.100.0/24'], blockedCountries: ['DE'] } })
    const metrics = async () => (await service.app.inject({ method: 'GET', url: '/metrics' })).body
    const blockedChecks = (text: string) => Number(/^tollgate_gate_checks_total\{result="blocked"\} (\d+)$/m.exec(text)?.[1] ?? 0)
    const before = blockedChecks(await metrics())
    // A clearance the visitor got before its address was blocked (the token is a page's, from elsewhere).
    const { value } = clearanceCookieOf(await clear(await pageToken(guarded.siteKey), { siteKey: guarded.siteKey }))
    const denied = await check({ siteKey: guarded.siteKey, cookie: value })
    expect(denied.statusCode).toBe(403)
    expect(denied.body).toContain(`data-site-key="${guarded.siteKey}"`)
    const deniedToScripts = await check({ siteKey: guarded.siteKey, cookie: value, accept: 'application/json' })
    expect(deniedToScripts.json<{ error: { code: string } }>().error.code).toBe('clearance_required')
    // Deutsche Telekom's address is in Germany.
    expect((await check({ siteKey: guarded.siteKey, ip: '80.187.100.1' })).statusCode).toBe(403)
    expect(blockedChecks(await metrics()) - before).toBe(3)
    // A visitor the site does not block clears and passes (a new cookie: a clearance is bound to
    // its address group), and the other site's visitor is not blocked.
    const elsewhere = clearanceCookieOf(await clear(await pageToken(guarded.siteKey), { siteKey: guarded.siteKey, ip: '203.0.113.9' })).value
    expect((await check({ siteKey: guarded.siteKey, cookie: elsewhere, ip: '203.0.113.9' })).statusCode).toBe(204)
    const cleared = clearanceCookieOf(await clear(await pageToken())).value
    expect((await check({ cookie: cleared })).statusCode).toBe(204)
    // A dual-stack listener's form of a blocked IPv4 peer is that peer; a blocked IPv6 range is matched too.
    expect((await check({ siteKey: guarded.siteKey, ip: '::ffff:198.51.100.50' })).statusCode).toBe(403)
    await service.app.sites.update(guarded.site.id, { settings: { blockedAddresses: ['198.51.100.0/24', '2001:db8::/32'] } })
    await service.app.siteCache.invalidate(guarded.site)
    expect((await check({ siteKey: guarded.siteKey, ip: '2001:db8:1::7' })).statusCode).toBe(403)
    // The site's allowlist wins, over a blocked address and over a blocked country.
    await service.app.sites.update(guarded.site.id, { settings: { allowedAddresses: ['198.51.100.23', '80.187.100.1'] } })
    await service.app.siteCache.invalidate(guarded.site)
    expect((await check({ siteKey: guarded.siteKey })).statusCode).toBe(204)
    expect((await check({ siteKey: guarded.siteKey, ip: '80.187.100.1' })).statusCode).toBe(204)
    expect((await check({ siteKey: guarded.siteKey, ip: '80.187.100.2' })).statusCode).toBe(403)
  })

  it.skipIf(!available)('counts checks and clearances in /metrics', async () => {
    const metrics = async () => (await service.app.inject({ method: 'GET', url: '/metrics' })).body
    const sample = (text: string, series: string) => Number(text.split('\n').find((line) => line.startsWith(`${series} `))?.split(' ')[1] ?? 0)
    const before = await metrics()
    const { value } = clearanceCookieOf(await clear(await pageToken()))
    await check({ cookie: value })
    await check()
    await check({ url: `/gate/v1/page?sitekey=${site.siteKey}` })
    await check({ siteKey: 'tgk_unknown' })
    await clear('v1.junk.junk')
    const after = await metrics()
    expect(sample(after, 'tollgate_gate_checks_total{result="invalid_site_key"}') - sample(before, 'tollgate_gate_checks_total{result="invalid_site_key"}')).toBe(1)
    expect(sample(after, 'tollgate_gate_clearances_total{result="issued"}') - sample(before, 'tollgate_gate_clearances_total{result="issued"}')).toBe(1)
    expect(sample(after, 'tollgate_gate_clearances_total{result="token_invalid"}') - sample(before, 'tollgate_gate_clearances_total{result="token_invalid"}')).toBe(1)
    expect(sample(after, 'tollgate_gate_checks_total{result="cleared"}') - sample(before, 'tollgate_gate_checks_total{result="cleared"}')).toBe(1)
    expect(sample(after, 'tollgate_gate_checks_total{result="refused"}') - sample(before, 'tollgate_gate_checks_total{result="refused"}')).toBe(1)
  })
})

describe('the gate with GATE_CLEARANCE_SECONDS', () => {
  it('gives clearances that long', { timeout: 90_000 }, async () => {
    const service = await buildTestApp({ env: { GATE_CLEARANCE_SECONDS: '900' }, config: { rateLimitPerMinute: 0 } })
    try {
      const { siteKey } = await createTestSite(service.app)
      const token = await obtainToken(service.app, browserHeaders(siteKey, PAGE_ORIGIN))
      const response = await service.app.inject({ method: 'POST', url: '/gate/v1/clearance', headers: { origin: PAGE_ORIGIN }, payload: { siteKey, token } })
      expect(clearanceCookieOf(response).attributes).toContain('Max-Age=900')
    } finally {
      await service.close()
    }
  })

  it('renews a clearance past half its life on the check, as long as the browser comes back, up to its absolute cap', { timeout: 90_000 }, async () => {
    const service = await buildTestApp({ env: { GATE_CLEARANCE_SECONDS: '900' }, config: { rateLimitPerMinute: 0 } })
    try {
      const { siteKey } = await createTestSite(service.app)
      const token = await obtainToken(service.app, browserHeaders(siteKey, PAGE_ORIGIN))
      const given = Date.now()
      const clearance = clearanceCookieOf(await service.app.inject({ method: 'POST', url: '/gate/v1/clearance', headers: { origin: PAGE_ORIGIN }, payload: { siteKey, token } }))
      const check = (cookie: string) => service.app.inject({ url: `/gate/v1/check?sitekey=${siteKey}`, headers: { cookie: `${CLEARANCE_COOKIE}=${cookie}` } })
      vi.useFakeTimers({ toFake: ['Date'] })
      try {
        // Before half its life: let through, and the cookie stays as it is.
        vi.setSystemTime(given + 400_000)
        const young = await check(clearance.value)
        expect(young.statusCode).toBe(204)
        expect(young.headers['set-cookie']).toBeUndefined()
        // Past half its life: let through with a renewed cookie, as the page's (Secure, SameSite=None on https), for a whole lifetime more.
        vi.setSystemTime(given + 500_000)
        const old = await check(clearance.value)
        expect(old.statusCode).toBe(204)
        const renewed = clearanceCookieOf(old)
        expect(renewed.value).not.toBe(clearance.value)
        expect(renewed.attributes).toEqual(expect.arrayContaining(['Max-Age=900', 'Path=/', 'HttpOnly', 'Secure', 'SameSite=None']))
        vi.setSystemTime(given + 1_200_000)
        expect((await check(clearance.value)).statusCode).toBe(403)
        const again = await check(renewed.value)
        expect(again.statusCode).toBe(204)
        // A browser that keeps coming back keeps its clearance, but never past the cap after the page's check.
        const cap = given + CLEARANCE_RENEWAL_CAP_LIFETIMES * 900_000
        let current = clearanceCookieOf(again).value
        let at = given + 1_200_000
        while (at + 800_000 < cap) {
          at += 800_000
          vi.setSystemTime(at)
          const answer = await check(current)
          expect(answer.statusCode).toBe(204)
          if (answer.headers['set-cookie'] !== undefined) current = clearanceCookieOf(answer).value
        }
        vi.setSystemTime(cap - 1000)
        const last = await check(current)
        expect(last.statusCode).toBe(204)
        expect(last.headers['set-cookie']).toBeUndefined()
        vi.setSystemTime(cap + 1000)
        expect((await check(current)).statusCode).toBe(403)
      } finally {
        vi.useRealTimers()
      }
    } finally {
      await service.close()
    }
  })
})
