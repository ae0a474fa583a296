/// <reference lib="dom" />
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Frame, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, launchBrowser, startSdkService, type SdkService, type TestBrowser } from './sdk-support.js'

/** What the page in the opaque origin saw: its own origin, and execute()'s token or error code. */
interface FrameOutcome {
  origin: string
  token: string
  error: string
}

/**
 * The page that runs the SDK without an origin: it loads the script from the service and calls
 * execute(), writing what it got into the page (a sandboxed frame cannot reach its parent's
 * globals; the test reads the frame itself).
 */
function appPage(service: string, siteKey: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>App</title></head>
<body>
<output id="outcome"></output>
<script src="${service}/sdk/v1/tollgate.js"></script>
<script>
  const show = (outcome) => { document.querySelector('#outcome').textContent = JSON.stringify({ origin: self.origin, ...outcome }) }
  Tollgate.execute({ siteKey: ${JSON.stringify(siteKey)} }).then(
    (verified) => show({ token: verified.token, error: '' }),
    (error) => show({ token: '', error: error.code }),
  )
</script>
</body></html>`
}

/**
 * A host page at http://localhost:<port> that frames /app in `<iframe sandbox="allow-scripts">`
 * (no allow-same-origin: the frame's origin is opaque, as a file: page's or a WebView page's
 * loaded from a string), and serves /app on its own under `Content-Security-Policy: sandbox
 * allow-scripts`, which gives a top-level page an opaque origin. The service is at 127.0.0.1:
 * both on loopback, which Chromium's Private Network Access requires.
 */
async function startHost(service: string, siteKeys: Record<string, string>): Promise<{ origin: string; server: Server }> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://host')
    const siteKey = siteKeys[url.searchParams.get('site') ?? ''] ?? ''
    if (url.pathname === '/app') {
      const sandboxed = url.searchParams.has('sandboxed-document') ? { 'content-security-policy': 'sandbox allow-scripts' } : {}
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...sandboxed })
      response.end(appPage(service, siteKey))
      return
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title></head>
<body><iframe title="App" sandbox="allow-scripts" src="/app?site=${encodeURIComponent(url.searchParams.get('site') ?? '')}"></iframe></body></html>`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { origin: `http://localhost:${(server.address() as AddressInfo).port}`, server }
}

async function outcomeIn(frame: Frame | Page): Promise<FrameOutcome> {
  await frame.waitForFunction(() => (document.querySelector('#outcome')?.textContent ?? '') !== '', undefined, { timeout: 30_000 })
  return JSON.parse(await frame.locator('#outcome').textContent() ?? '{}') as FrameOutcome
}

describe.runIf(hasChromium())('the SDK in an opaque origin (a sandboxed frame, a sandboxed page) in Chromium', () => {
  let sdk: SdkService
  let browser: TestBrowser
  let host: { origin: string; server: Server }
  let listed: { siteKey: string; secretKey: string }

  beforeAll(async () => {
    sdk = await startSdkService()
    // A site that lists its domains, localhost included: the host page's own would be let in.
    const { site, secretKey } = await sdk.service.app.sites.create({
      accountId: null,
      name: 'Listed domains',
      domains: ['shop.example', 'localhost'],
      settings: { challengeThreshold: 90, blockThreshold: 100 },
    })
    listed = { siteKey: site.siteKey, secretKey }
    host = await startHost(sdk.origin, { open: sdk.demoSite.siteKey, listed: site.siteKey })
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    host?.server.close()
    await sdk?.close()
  })

  async function frameOf(page: Page): Promise<Frame> {
    await page.waitForSelector('iframe')
    const frame = page.frames().find((candidate) => candidate.url().includes('/app'))
    if (frame === undefined) throw new Error('the app frame did not load')
    return frame
  }

  it('gets a token in a sandboxed iframe on a site that lists no domains, and Siteverify answers hostname null', async () => {
    const { page, events } = await browser.newPage()
    await page.goto(`${host.origin}/?site=open`)
    const outcome = await outcomeIn(await frameOf(page))
    expect(outcome).toMatchObject({ origin: 'null', error: '' })
    expect(outcome.token).toMatch(/^v1\./)
    // The browser sent Origin: null, and the service let it read the answers (CORS echoes "null").
    await expect.poll(() => events.api.map(({ path, status }) => [path, status])).toEqual([['/api/v1/challenge', 200], ['/api/v1/verify', 200]])
    const answer = await sdk.siteverify(outcome.token)
    expect(answer).toMatchObject({ success: true, hostname: null })
    expect((answer as { anomalies?: string[] }).anomalies).toContain('missing_origin')
  })

  it('gets a token in a page served with CSP sandbox, as hostname null', async () => {
    const { page } = await browser.newPage()
    await page.goto(`${host.origin}/app?site=open&sandboxed-document`)
    const outcome = await outcomeIn(page)
    expect(outcome).toMatchObject({ origin: 'null', error: '' })
    expect(await sdk.siteverify(outcome.token)).toMatchObject({ success: true, hostname: null })
  })

  it('is refused with origin_not_allowed in a sandboxed iframe when the site lists its domains, though the frame\'s host page is on one', async () => {
    const { page, events } = await browser.newPage()
    await page.goto(`${host.origin}/?site=listed`)
    const outcome = await outcomeIn(await frameOf(page))
    expect(outcome).toMatchObject({ origin: 'null', token: '', error: 'origin_not_allowed' })
    await expect.poll(() => events.api).toContainEqual(expect.objectContaining({ path: '/api/v1/challenge', status: 403 }))
    // The same site key on the host page itself, at localhost, gets its token.
    const onHost = await page.evaluate(async ([service, siteKey]) => {
      await new Promise<void>((resolve, reject) => {
        const script = Object.assign(document.createElement('script'), { src: `${service}/sdk/v1/tollgate.js` })
        script.addEventListener('load', () => resolve())
        script.addEventListener('error', () => reject(new Error('no SDK')))
        document.head.append(script)
      })
      return window.Tollgate.execute({ siteKey }).then((verified) => verified.token, (error: { code: string }) => error.code)
    }, [sdk.origin, listed.siteKey] as const)
    expect(onHost).toMatch(/^v1\./)
    const redeemed = await sdk.service.app.inject({ method: 'POST', url: '/api/v1/siteverify', payload: { secret: listed.secretKey, response: onHost } })
    expect(redeemed.json()).toMatchObject({ success: true, hostname: 'localhost' })
  })
})
