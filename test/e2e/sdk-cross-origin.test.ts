/// <reference lib="dom" />
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { defaultSdkDirectory, INTEGRITY_NAME, type PinnedScript } from '../../scripts/build-sdk.js'
import { testSecrets } from '../../src/domain/siteverify/test-secrets.js'
import { startWithinOneEphemeralIdWeek } from '../helpers/ephemeral-id-week.js'
import { hasChromium, launchBrowser, startSdkService, type SdkService, type TollgateApi, type TestBrowser } from './sdk-support.js'

/**
 * A shop on another origin, under the CSP that sdk/README.md gives: its own little server, reached
 * as `localhost` while the service is `127.0.0.1`. Both are on loopback because Chromium forbids
 * a page from a wider address space to load from loopback (Private Network Access).
 */
async function startShop(service: string, siteKey: string): Promise<{ origin: string; server: Server }> {
  const server = createServer((request, response) => {
    const query = new URL(request.url ?? '/', 'http://shop').searchParams
    const variant = (query.get('policy') ?? 'documented') as PolicyVariant
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': shopPolicy(service, variant) })
    const page = query.has('twice') ? shopPageWithTheTagTwice(service, siteKey)
      : query.has('two-settings') ? shopPageWithTwoSettings(service, siteKey)
        : query.has('pinned') ? shopPageWithThePinnedScript(service, siteKey, query.get('pinned') ?? '') : shopPage(service, siteKey)
    // The tag carries the policy's nonce (a fresh one per response on a real site).
    response.end(variant === 'strict-dynamic' ? page.replace('<script src=', `<script nonce="${NONCE}" src=`) : page)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { origin: `http://localhost:${(server.address() as AddressInfo).port}`, server }
}

type PolicyVariant = 'documented' | 'without-wasm' | 'without-blob-workers' | 'trusted-types' | 'strict-dynamic'

const NONCE = 'c2hvcC1ub25jZS0x'

function shopPolicy(service: string, variant: PolicyVariant): string {
  // sdk/README.md section 5's nonce-based policy: no host in script-src (it would be ignored), no worker-src.
  if (variant === 'strict-dynamic') {
    return `default-src 'self'; script-src 'nonce-${NONCE}' 'strict-dynamic' 'wasm-unsafe-eval'; connect-src 'self' ${service}; object-src 'none'; base-uri 'none'`
  }
  return [
    "default-src 'self'",
    `script-src 'self' ${service}${variant === 'without-wasm' ? '' : " 'wasm-unsafe-eval'"}`,
    variant === 'without-blob-workers' ? "worker-src 'self'" : 'worker-src blob:',
    `connect-src 'self' ${service}`,
    // What sdk/README.md asks of a page that requires Trusted Types.
    ...variant === 'trusted-types' ? ["require-trusted-types-for 'script'", 'trusted-types tollgate'] : [],
  ].join('; ')
}

function shopPage(service: string, siteKey: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shop</title></head>
<body>
<form id="order" method="post" action="/order" data-tollgate>
<label for="item">Item</label><input id="item" name="item" value="book">
<button type="submit">Order</button>
</form>
<script src="${service}/sdk/v1/tollgate.js" data-site-key="${siteKey}" async defer></script>
</body></html>`
}

/** The tag in the head and again in the body (a theme and a plugin), naming Turnstile's field. */
function shopPageWithTheTagTwice(service: string, siteKey: string): string {
  const tag = `<script src="${service}/sdk/v1/tollgate.js" data-site-key="${siteKey}" data-response-field-name="cf-turnstile-response" async defer></script>`
  return shopPage(service, siteKey).replace('<title>Shop</title>', `<title>Shop</title>${tag}`).replace(/<script src=[^>]*><\/script>/g, tag)
}

/**
 * The tag pinned to the build's hashed script with Subresource Integrity, as sdk/README.md shows
 * it, from the integrity.json that startSdkService's build wrote; `integrity` may replace the hash.
 */
function shopPageWithThePinnedScript(service: string, siteKey: string, integrity: string): string {
  const pinned = (JSON.parse(readFileSync(join(defaultSdkDirectory, INTEGRITY_NAME), 'utf8')) as Record<string, PinnedScript>)['tollgate.js']
  const tag = `<script src="${service}/sdk/v1/${pinned?.pinnedName}" integrity="${integrity || pinned?.integrity}" crossorigin="anonymous" data-site-key="${siteKey}" async defer></script>`
  return shopPage(service, siteKey).replace(/<script src=[^>]*><\/script>/, tag)
}

/** A theme's copy of the tag in the head and a plugin's in the body, each naming another field. */
function shopPageWithTwoSettings(service: string, siteKey: string): string {
  const tag = (copy: string, field: string) => `<script src="${service}/sdk/v1/tollgate.js?copy=${copy}" data-site-key="${siteKey}" data-response-field-name="${field}" async defer></script>`
  return shopPage(service, siteKey)
    .replace(/<script src=[^>]*><\/script>/, tag('plugin', 'g-recaptcha-response'))
    .replace('<title>Shop</title>', `<title>Shop</title>${tag('theme', 'cf-turnstile-response')}`)
}

describe.runIf(hasChromium())('the SDK on another origin in Chromium', () => {
  let sdk: SdkService
  let browser: TestBrowser
  let shop: { origin: string; server: Server }

  beforeAll(async () => {
    sdk = await startSdkService()
    shop = await startShop(sdk.origin, sdk.demoSite.siteKey)
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    shop?.server.close()
    await sdk?.close()
  })
  // The browser's device gets one ephemeral id from two verifications only within a week.
  beforeEach(startWithinOneEphemeralIdWeek)

  /** Tollgate.execute() on the page: its token, or the code it failed with. */
  function executeOn(page: Page): Promise<{ token: string; error: string }> {
    return page.evaluate((siteKey) => window.Tollgate.execute({ siteKey }).then(
      (verified) => ({ token: verified.token, error: '' }),
      (error: { code: string }) => ({ token: '', error: error.code }),
    ), sdk.demoSite.siteKey)
  }

  async function openShop(policy: PolicyVariant = 'documented') {
    const opened = await browser.newPage()
    await opened.page.goto(`${shop.origin}/shop?policy=${policy}`)
    await opened.page.waitForFunction(() => 'Tollgate' in window)
    return opened
  }

  it('solves through a blob-started worker and fills the form under the documented CSP', async () => {
    const { page, events } = await openShop()
    await page.evaluate(() => {
      const form = document.querySelector<HTMLFormElement>('#order')
      form?.addEventListener('submit', (event) => {
        event.preventDefault()
        Object.assign(window, { orderToken: form.querySelector<HTMLInputElement>('input[name="tollgate-token"]')?.value })
      })
    })
    await page.click('#order button')
    await page.waitForFunction(() => typeof (window as unknown as { orderToken?: string }).orderToken === 'string', undefined, { timeout: 20_000 })
    const token = await page.evaluate(() => (window as unknown as { orderToken: string }).orderToken)

    expect(await sdk.siteverify(token)).toMatchObject({ success: true, hostname: 'localhost' })
    expect(events.errors.filter((error) => /Content Security Policy|Refused/i.test(error))).toEqual([])
  })

  it('verifies once and submits once when the page includes the tag twice, filling the field it names', async () => {
    const opened = await browser.newPage()
    const { page, events } = opened
    await page.goto(`${shop.origin}/shop?twice`)
    await page.waitForFunction(() => 'Tollgate' in window)
    expect(await page.evaluate(() => document.querySelectorAll('script[src$="tollgate.js"]').length)).toBe(2)
    await page.evaluate(() => {
      const form = document.querySelector<HTMLFormElement>('#order')
      Object.assign(window, { submits: [] as string[] })
      form?.addEventListener('submit', (event) => {
        event.preventDefault()
        const field = form.querySelector<HTMLInputElement>('input[name="cf-turnstile-response"]')
        ;(window as unknown as { submits: string[] }).submits.push(field?.value ?? '')
      })
    })
    await page.click('#order button')
    await page.waitForFunction(() => (window as unknown as { submits: string[] }).submits.length > 0, undefined, { timeout: 20_000 })
    // Time enough for a copy of the SDK that caught the re-submission to verify and submit again.
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    const submits = await page.evaluate(() => (window as unknown as { submits: string[] }).submits)
    expect(submits).toHaveLength(1)
    expect(events.api.filter((answer) => answer.path === '/api/v1/verify')).toHaveLength(1)
    expect(await page.evaluate(() => document.querySelectorAll('input[name="tollgate-token"]').length)).toBe(0)
    expect(await sdk.siteverify(submits[0] ?? '')).toMatchObject({ success: true })
  })

  it('takes the settings of the first tag in the page, even when another copy runs first', async () => {
    const { page } = await browser.newPage()
    // The theme's copy, first in the page, arrives last.
    const isThemeCopy = (url: URL) => url.searchParams.get('copy') === 'theme'
    await page.route(isThemeCopy, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      await route.continue()
    })
    const themeCopy = page.waitForResponse((response) => isThemeCopy(new URL(response.url())))
    await page.goto(`${shop.origin}/shop?two-settings`)
    await themeCopy
    await page.evaluate(() => {
      const form = document.querySelector<HTMLFormElement>('#order')
      form?.addEventListener('submit', (event) => {
        event.preventDefault()
        Object.assign(window, { fields: Array.from(form.querySelectorAll<HTMLInputElement>('input[type="hidden"]'), (field) => [field.name, field.value]) })
      })
    })
    await page.click('#order button')
    await page.waitForFunction(() => 'fields' in window, undefined, { timeout: 20_000 })
    const fields = await page.evaluate(() => (window as unknown as { fields: [string, string][] }).fields)

    expect(fields.map(([name]) => name)).toEqual(['cf-turnstile-response'])
    expect(await sdk.siteverify(fields[0]?.[1] ?? '')).toMatchObject({ success: true })
  })

  it('protects a form inside a web component once its shadow root is bound, with the field that root names', async () => {
    const { page, events } = await openShop()
    await page.evaluate(() => {
      const host = document.createElement('shop-checkout')
      const root = host.attachShadow({ mode: 'open' })
      root.innerHTML = '<form id="checkout" method="post" action="/checkout" data-tollgate><input name="item" value="pen"><button type="submit">Pay</button></form>'
      document.body.append(host)
      const form = root.querySelector('form')
      Object.assign(window, { checkoutSubmits: [] as string[] })
      form?.addEventListener('submit', (event) => {
        event.preventDefault()
        const field = form.querySelector<HTMLInputElement>('input[name="g-recaptcha-response"]')
        ;(window as unknown as { checkoutSubmits: string[] }).checkoutSubmits.push(field?.value ?? 'no field')
      })
      ;(window.Tollgate as TollgateApi).bindForms({ root, fieldName: 'g-recaptcha-response' }) // tollgate.js's global has bindForms
    })
    // The document's own form keeps the document's field name.
    expect(await page.evaluate(() => document.querySelector('#order input[type="hidden"]')?.getAttribute('name'))).toBe('tollgate-token')

    await page.click('#checkout button')
    await page.waitForFunction(() => (window as unknown as { checkoutSubmits: string[] }).checkoutSubmits.length > 0, undefined, { timeout: 20_000 })
    const submits = await page.evaluate(() => (window as unknown as { checkoutSubmits: string[] }).checkoutSubmits)
    expect(submits).toHaveLength(1)
    expect(events.api.filter((answer) => answer.path === '/api/v1/verify')).toHaveLength(1)
    expect(await sdk.siteverify(submits[0] ?? '')).toMatchObject({ success: true, hostname: 'localhost' })

    // reset() clears the token filled inside the component too.
    const cleared = await page.evaluate(() => {
      window.Tollgate.reset()
      return document.querySelector('shop-checkout')?.shadowRoot?.querySelector<HTMLInputElement>('input[name="g-recaptcha-response"]')?.value
    })
    expect(cleared).toBe('')
  })

  it('keeps the tag\'s site key when the page names its field with bindForms(), and posts the token under that name only', async () => {
    const { page } = await openShop()
    await page.evaluate(() => {
      ;(window.Tollgate as TollgateApi).bindForms({ fieldName: 'cf-turnstile-response' })
      const form = document.querySelector<HTMLFormElement>('#order')
      Object.assign(window, { order: { token: '', status: '', fields: [] } })
      form?.addEventListener('submit', (event) => {
        event.preventDefault()
        const token = form.querySelector<HTMLInputElement>('input[name="cf-turnstile-response"]')?.value ?? ''
        // What the browser would post: the SDK's field of the load's name went, not left empty.
        const fields = [...new FormData(form).keys()]
        Object.assign(window, { order: { token, status: '', fields } })
      })
      form?.addEventListener('tollgate:error', () => {
        Object.assign(window, { order: { token: '', status: form.querySelector('[data-tollgate-status]')?.textContent ?? '' } })
      })
    })
    await page.click('#order button')
    await page.waitForFunction(() => {
      const { order } = window as unknown as { order: { token: string; status: string } }
      return order.token !== '' || order.status !== ''
    }, undefined, { timeout: 20_000 })
    const order = await page.evaluate(() => (window as unknown as { order: { token: string; status: string; fields: string[] } }).order)

    expect(order.status).toBe('')
    expect(order.fields.filter((name) => name.includes('token') || name.includes('response'))).toEqual(['cf-turnstile-response'])
    expect(await sdk.siteverify(order.token)).toMatchObject({ success: true })
  })

  it("carries the page's action and data to Siteverify, from execute() and from a form's data-action and data-cdata", async () => {
    const { page } = await openShop()
    const result = await page.evaluate((siteKey) => window.Tollgate.execute({ siteKey, action: 'login', cData: 'session-42' }), sdk.demoSite.siteKey)
    expect(await sdk.siteverify(result.token)).toMatchObject({ success: true, action: 'login', recommendedAction: 'allow', cdata: 'session-42' })

    await page.evaluate(() => {
      const form = document.querySelector<HTMLFormElement>('#order')
      if (form === null) return
      form.dataset.action = 'checkout'
      form.dataset.cdata = 'cart_7'
      form.addEventListener('tollgate:verified', (event) => {
        event.preventDefault()
        Object.assign(window, { verified: (event as CustomEvent<{ token: string }>).detail.token })
      })
      form.addEventListener('submit', (event) => event.preventDefault())
    })
    await page.click('#order button')
    const token = await (await page.waitForFunction(() => (window as unknown as { verified?: string }).verified, undefined, { timeout: 20_000 })).jsonValue()
    expect(await sdk.siteverify(String(token))).toMatchObject({ success: true, action: 'checkout', recommendedAction: 'allow', cdata: 'cart_7' })
  })

  it("names the browser's device to Siteverify: the same ephemeral id for its next verification, in another tab", async () => {
    const idOf = async (page: Awaited<ReturnType<typeof openShop>>['page']) => {
      const result = await page.evaluate((siteKey) => window.Tollgate.execute({ siteKey }), sdk.demoSite.siteKey)
      const answer = await sdk.siteverify(result.token)
      expect(answer.success).toBe(true)
      return answer.metadata?.ephemeral_id
    }
    const first = await idOf((await openShop()).page)
    expect(first).toMatch(/^[0-9a-f]{24}$/)
    expect(await idOf((await openShop()).page)).toBe(first)
  })

  it('protects a form whose controls are named like the form\'s own members (dataset, querySelector, append...), with its data-action', async () => {
    const { page } = await openShop()
    await page.evaluate(() => {
      const form = document.querySelector<HTMLFormElement>('#order')
      if (form === null) return
      // Each of these names shadows the form's property of that name (DOM clobbering).
      for (const name of ['dataset', 'querySelector', 'querySelectorAll', 'append', 'dispatchEvent', 'getAttribute', 'getRootNode', 'closest', 'lang', 'requestSubmit']) {
        const control = document.createElement('input')
        control.type = 'hidden'
        control.name = name
        control.value = 'x'
        form.prepend(control)
      }
      form.setAttribute('data-action', 'login')
      Object.assign(window, { order: { token: '', error: '' } })
      form.addEventListener('submit', (event) => {
        event.preventDefault()
        const field = Array.from(form.getElementsByTagName('input')).find((input) => input.name === 'tollgate-token')
        Object.assign(window, { order: { token: field?.value ?? '', error: '' } })
      })
      form.addEventListener('tollgate:error', (event) => Object.assign(window, { order: { token: '', error: (event as CustomEvent<Error>).detail.message } }))
    })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    // The button's submit, done by hand: Playwright's own click reads the clobbered getAttribute.
    await page.evaluate(() => {
      const form = document.querySelector<HTMLFormElement>('#order')
      if (form !== null) HTMLFormElement.prototype.requestSubmit.call(form, document.querySelector('#order button'))
    })
    await page.waitForFunction(() => {
      const { order } = window as unknown as { order: { token: string; error: string } }
      return order.token !== '' || order.error !== ''
    }, undefined, { timeout: 20_000 })
    const order = await page.evaluate(() => (window as unknown as { order: { token: string; error: string } }).order)

    expect(errors).toEqual([])
    expect(order.error).toBe('')
    expect(await sdk.siteverify(order.token)).toMatchObject({ success: true, action: 'login' })
  })

  it('gives a headless browser in CI a token with the always-passing test site key, and blocks it with the always-blocking one', async () => {
    const { page } = await openShop()
    const passed = await page.evaluate(() => window.Tollgate.execute({ siteKey: '1x00000000000000000000AA' }))
    expect(passed).toMatchObject({ riskScore: 0, action: 'allow' })
    const redeemed = await sdk.service.app.inject({ method: 'POST', url: '/siteverify', payload: { secret: testSecrets.alwaysPasses, response: passed.token } })
    expect(redeemed.json()).toMatchObject({ success: true })
    // The always-blocking key: the SDK reports the block as it would a real one, with the reference
    // the visitor can quote: the start of the verify answer's X-Request-Id, which a page of another
    // origin reads only because the service exposes the header.
    const blocked = await page.evaluate(() =>
      window.Tollgate.execute({ siteKey: '2x00000000000000000000AB' }).then(
        () => undefined,
        (error: { code: string; requestId?: string; reference?: string }) => ({ code: error.code, requestId: error.requestId, reference: error.reference }),
      ))
    expect(blocked).toEqual({ code: 'blocked', requestId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-/), reference: blocked?.requestId?.slice(0, 13) })
    // A protected form tells its visitor of the block in its status, the reference after the sentence.
    const status = await page.evaluate(async () => {
      const form = document.querySelector<HTMLFormElement>('#order')
      if (form === null) return 'no form'
      form.setAttribute('data-site-key', '2x00000000000000000000AB')
      const failed = new Promise<string>((resolve) => {
        form.addEventListener('tollgate:error', () => resolve(form.querySelector('[data-tollgate-status]')?.textContent ?? ''), { once: true })
      })
      form.querySelector('button')?.click()
      return failed
    })
    expect(status).toMatch(/^This request was blocked\. If you think this is a mistake, please contact the site owner\. Reference: \u2068[0-9a-f]{8}-[0-9a-f]{4}\u2069$/)
  })

  it('refuses options that are not whole numbers in range, or an action or data Turnstile would refuse, with invalid_options, before any request', async () => {
    const { page, events } = await openShop()
    const codes = await page.evaluate(async (siteKey) => {
      const attempts = [
        { workers: Number.NaN }, { workers: 0 }, { timeoutMs: Number.POSITIVE_INFINITY }, { maxStepUps: 1.5 }, { maxStepUps: -1 },
        { action: '' }, { action: 'sign up' }, { action: 'a'.repeat(33) }, { cData: 'a=b' },
      ]
      return Promise.all(attempts.map((options) => window.Tollgate.execute({ siteKey, ...options }).then(() => 'resolved', (error: { code: string }) => error.code)))
    }, sdk.demoSite.siteKey)
    expect(codes).toEqual(Array(9).fill('invalid_options'))
    expect(events.api).toEqual([])
  })

  it('rejects a call without options, without a site key, or with an address that is not a URL, with invalid_options, telling onStatus', async () => {
    const { page, events } = await openShop()
    const outcomes = await page.evaluate(async (siteKey) => {
      const statuses: string[] = []
      const onStatus = (status: string) => statuses.push(status)
      // A page script in plain JavaScript may pass anything.
      const execute = window.Tollgate.execute as (options?: object) => Promise<unknown>
      const attempts = [undefined, { onStatus }, { siteKey, apiUrl: 'http://[bad', onStatus }, { siteKey, assetsUrl: 'http://[bad', onStatus }]
      const errors = await Promise.all(attempts.map((options) => execute(options).then(
        () => 'resolved',
        (error: Error & { code?: string }) => `${error.name} ${error.code ?? error.message}`,
      )))
      return { errors, statuses }
    }, sdk.demoSite.siteKey)
    expect(outcomes.errors).toEqual(Array(4).fill('TollgateError invalid_options'))
    expect(outcomes.statuses).toEqual(['error', 'error', 'error'])
    expect(events.api).toEqual([])
  })

  it('works as a module imported from the service (tollgate.mjs)', async () => {
    const { page } = await openShop()
    // Passed as text: vitest rewrites import() in functions it compiles, and this one runs in the page.
    const moduleUrl = JSON.stringify(`${sdk.origin}/sdk/v1/tollgate.mjs`)
    const options = JSON.stringify({ siteKey: sdk.demoSite.siteKey, apiUrl: sdk.origin })
    const result = await page.evaluate<{ token: string; action: string }>(
      `import(${moduleUrl}).then((module) => module.execute(${options}))`,
    )

    expect(result.action).toBe('allow')
    expect(await sdk.siteverify(result.token)).toMatchObject({ success: true })
  })

  it("still solves, with the JavaScript solver, when the CSP forbids WebAssembly, and tells the site's developer once", async () => {
    const { page } = await openShop('without-wasm')
    const told: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'info' && message.text().startsWith('Tollgate:')) told.push(message.text())
    })
    for (let round = 0; round < 2; round++) {
      const result = await page.evaluate((siteKey) => window.Tollgate.execute({ siteKey }), sdk.demoSite.siteKey)
      expect(await sdk.siteverify(result.token)).toMatchObject({ success: true })
    }
    expect(told).toEqual([expect.stringContaining("'wasm-unsafe-eval'")])
  })

  it('says nothing of the JavaScript solver where WebAssembly runs', async () => {
    const { page } = await openShop()
    const told: string[] = []
    page.on('console', (message) => {
      if (message.text().startsWith('Tollgate:')) told.push(message.text())
    })
    const result = await page.evaluate((siteKey) => window.Tollgate.execute({ siteKey }), sdk.demoSite.siteKey)
    expect(await sdk.siteverify(result.token)).toMatchObject({ success: true })
    expect(told).toEqual([])
  })

  it('verifies on a page that requires Trusted Types and allows the tollgate policy', async () => {
    const { page, events } = await openShop('trusted-types')
    const result = await executeOn(page)
    expect(result.error).toBe('')
    expect(await sdk.siteverify(result.token)).toMatchObject({ success: true })
    expect(events.errors.filter((error) => /Content Security Policy|Trusted/i.test(error))).toEqual([])
  })

  it('runs the hashed tollgate.js pinned with its integrity, and a browser refuses it under another hash', async () => {
    const pinned = await browser.newPage()
    await pinned.page.goto(`${shop.origin}/shop?pinned`)
    await pinned.page.waitForFunction(() => 'Tollgate' in window, undefined, { timeout: 20_000 })
    const result = await pinned.page.evaluate((siteKey) => window.Tollgate.execute({ siteKey }), sdk.demoSite.siteKey)
    expect(await sdk.siteverify(result.token)).toMatchObject({ success: true })
    expect(pinned.events.errors).toEqual([])

    const tampered = await browser.newPage()
    await tampered.page.goto(`${shop.origin}/shop?pinned=sha384-${'A'.repeat(64)}`)
    await tampered.page.waitForFunction(() => document.readyState === 'complete')
    expect(await tampered.page.evaluate(() => 'Tollgate' in window)).toBe(false)
    expect(tampered.events.errors.join('\n')).toMatch(/integrity/i)
  })

  it("verifies under a nonce-based 'strict-dynamic' policy without worker-src, solving in WebAssembly", async () => {
    const { page, events } = await openShop('strict-dynamic')
    const told: string[] = []
    page.on('console', (message) => {
      if (message.text().startsWith('Tollgate:')) told.push(message.text())
    })
    const result = await executeOn(page)
    expect(result.error).toBe('')
    expect(await sdk.siteverify(result.token)).toMatchObject({ success: true })
    // No word of the JavaScript solver: the blob: worker compiled the WebAssembly.
    expect(told).toEqual([])
    expect(events.errors.filter((error) => /Content Security Policy|Refused/i.test(error))).toEqual([])
  })

  it("solves on the page itself when the CSP forbids blob workers, and tells the site's developer once", async () => {
    const { page } = await openShop('without-blob-workers')
    const told: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'info' && message.text().startsWith('Tollgate:')) told.push(message.text())
    })
    for (let round = 0; round < 2; round++) {
      const result = await executeOn(page)
      expect(result.error).toBe('')
      expect(await sdk.siteverify(result.token)).toMatchObject({ success: true, hostname: 'localhost' })
    }
    // The page's policy allows WebAssembly: the page's own search compiled it, and says so not.
    expect(told).toEqual([expect.stringContaining('no Web Worker could start')])
  })
})
