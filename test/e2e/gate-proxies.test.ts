/// <reference lib="dom" />
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildSdk } from '../../scripts/build-sdk.js'
import { CLEARANCE_COOKIE, issueClearance } from '../../src/domain/gate/clearance.js'
import { addressGroupOf } from '../../src/domain/history/client-keys.js'
import { gateStrings } from '../../src/routes/gate/gate-strings.js'
import { browserHeaders, createTestSite, obtainToken } from '../helpers/core-flow.js'
import { freePort } from '../helpers/free-port.js'
import { nginxConfig } from '../helpers/nginx-config.js'
import { isCi } from '../helpers/services.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { hasChromium, launchBrowser, type TestBrowser } from './sdk-support.js'

const TEST_KEY_ALLOW = '1x00000000000000000000AA'

/** A protected host of the test: its port and the site key of its gate. */
interface ProtectedHost {
  port: number
  siteKey: string
  /** Where this host's proxy finds Tollgate, when not at the test's service (an address nothing listens on). */
  tollgate?: string
}

/** A reverse proxy of docs/gate.md, run with the documentation's own configuration block. */
interface GateProxy {
  name: string
  /** The Debian package with the binary (.ci/run installs it). */
  debianPackage: string
  binary: string
  /** What the proxy answers while Tollgate cannot be reached (docs/gate.md, "Limits"). */
  unreachableStatus: number
  /** The configuration file and the command line that runs it in the foreground. */
  configure(directory: string, hosts: ProtectedHost[], tollgate: string, application: string): { file: string; text: string; args: string[] }
}

/** A fenced block of docs/gate.md, as a reader copies it, with this test's addresses and key. */
function documentedBlock(language: string, tollgate: string, application: string, siteKey: string): string {
  const block = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(readFileSync('docs/gate.md', 'utf8'))?.[1]
  if (block === undefined) throw new Error(`docs/gate.md has no ${language} block`)
  return block.replaceAll('tollgate:3000', tollgate).replaceAll('app:8080', application).replaceAll('tgk_YOUR_SITE_KEY', siteKey)
}

const proxies: GateProxy[] = [
  {
    name: 'nginx',
    debianPackage: 'nginx',
    binary: '/usr/sbin/nginx',
    unreachableStatus: 500,
    configure(directory, hosts, tollgate, application) {
      // The site's own 403 beside the gate's: a location it denies.
      const servers = hosts.map(({ port, siteKey, tollgate: elsewhere }) =>
        documentedBlock('nginx', elsewhere ?? tollgate, application, siteKey)
          .replace('listen 80;', `listen 127.0.0.1:${port};`)
          .replace(/\}\s*$/, '    location = /private { deny all; }\n}\n'))
      const file = join(directory, 'nginx.conf')
      const text = nginxConfig(directory, servers.join('\n'))
      return { file, text, args: ['-p', directory, '-c', file, '-g', 'daemon off;'] }
    },
  },
  {
    name: 'Caddy',
    debianPackage: 'caddy',
    binary: '/usr/bin/caddy',
    unreachableStatus: 502,
    configure(directory, hosts, tollgate, application) {
      const sites = hosts.map(({ port, siteKey, tollgate: elsewhere }) =>
        documentedBlock('caddyfile', elsewhere ?? tollgate, application, siteKey).replace('shop.example.com {', `http://127.0.0.1:${port} {`))
      const file = join(directory, 'Caddyfile')
      return { file, text: `{\n  admin off\n}\n${sites.join('\n')}`, args: ['run', '--config', file, '--adapter', 'caddyfile'] }
    },
  },
]

/** Whether the proxy can run here; under CI it must (.ci/run installs its Debian package). */
function hasProxy(proxy: GateProxy): boolean {
  if (existsSync(proxy.binary)) return true
  const message = `${proxy.name} is not installed at ${proxy.binary} (apt-get install -y ${proxy.debianPackage})`
  if (isCi) throw new Error(`${message}; CI must run the gate's end-to-end tests`)
  console.warn(`\n!!! SKIPPING THE GATE'S ${proxy.name.toUpperCase()} TESTS: ${message} !!!\n`)
  return false
}

/** The protected application: it answers every request it gets, and remembers them. */
async function startApplication(): Promise<{ server: Server; origin: string; paths: string[] }> {
  const paths: string[] = []
  const server = createServer((request, response) => {
    // A browser asks for the icon of every page it shows; those requests say nothing here.
    if (request.url !== '/favicon.ico') paths.push(`${request.method} ${request.url}`)
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    response.end(`<!doctype html><title>Your account</title><h1 id="protected">Your account: ${request.method} ${request.url}</h1>`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return { server, origin: `127.0.0.1:${port}`, paths }
}

describe.each(proxies.map((proxy) => ({ proxy, name: proxy.name, available: hasChromium() && hasProxy(proxy) })))('the gate behind $name, configured as docs/gate.md says, with Chromium as the visitor', ({ proxy, available }) => {
  let service: TestApp
  let application: Awaited<ReturnType<typeof startApplication>>
  let browser: TestBrowser
  let running: ChildProcess | undefined
  let directory: string
  let siteId: string
  /** The protected host, whose gate uses a site that lets the test browser in. */
  let allowing: string
  /** The same, with a site whose thresholds block the test browser. */
  let blocking: string
  let blockingSiteId: string
  /** A protected host whose proxy finds no Tollgate at the address it was given. */
  let unreachable: string

  beforeAll(async () => {
    if (!available) return
    await buildSdk()
    // The proxy is the one in front, as docs/gate.md configures it (TRUST_PROXY=1).
    service = await buildTestApp({ env: { TRUST_PROXY: '1' }, config: { rateLimitPerMinute: 0 } })
    // The headless test browser is scored as automation; this gate is about the flow.
    const site = await createTestSite(service.app, { domains: ['127.0.0.1'], settings: { challengeThreshold: 90, blockThreshold: 100 } })
    siteId = site.site.id
    // Any score from 2 up is block: the test browser is automation, and scored well above.
    const blockingSite = await createTestSite(service.app, { domains: ['127.0.0.1'], settings: { challengeThreshold: 1, blockThreshold: 2, blockedHelpUrl: 'https://help.example.com/contact?topic=gate' } })
    blockingSiteId = blockingSite.site.id
    const tollgate = (await service.app.listen({ port: 0, host: '127.0.0.1' })).replace('http://', '')
    application = await startApplication()
    const [allowPort, blockPort, unreachablePort, nothingListening] = [await freePort(), await freePort(), await freePort(), await freePort()]
    allowing = `http://127.0.0.1:${allowPort}`
    blocking = `http://127.0.0.1:${blockPort}`
    unreachable = `http://127.0.0.1:${unreachablePort}`
    directory = await mkdtemp(join(tmpdir(), 'tollgate-gate-proxy-'))
    const hosts = [
      { port: allowPort, siteKey: site.siteKey },
      { port: blockPort, siteKey: blockingSite.siteKey },
      { port: unreachablePort, siteKey: site.siteKey, tollgate: `127.0.0.1:${nothingListening}` },
    ]
    const { file, text, args } = proxy.configure(directory, hosts, tollgate, application.origin)
    await writeFile(file, text)
    // Caddy keeps its state under the home directory's: the test's own.
    running = spawn(proxy.binary, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, HOME: directory, XDG_DATA_HOME: directory, XDG_CONFIG_HOME: directory } })
    let stderr = ''
    running.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    for (let attempt = 0; ; attempt += 1) {
      if (await fetch(`${allowing}/.tollgate/sdk/v1/gate.js`).then((response) => response.ok, () => false)) break
      if (attempt === 100 || running.exitCode !== null) throw new Error(`${proxy.name} did not start: ${stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    browser = await launchBrowser()
  })

  afterAll(async () => {
    await browser?.close()
    running?.kill('SIGTERM')
    application?.server.close()
    await service?.close()
    if (directory !== undefined) await rm(directory, { recursive: true, force: true })
  })

  it.skipIf(!available)('checks a browser on its first visit and takes it on to the page it asked for, which the application then serves directly', { timeout: 60_000 }, async () => {
    const { page, context, events } = await browser.newPage()
    const before = application.paths.length
    const first = await page.goto(`${allowing}/account/orders?page=2`)
    expect(first?.status()).toBe(403)
    await page.waitForSelector('#protected', { timeout: 30_000 })
    expect(await page.textContent('#protected')).toBe('Your account: GET /account/orders?page=2')
    // The application saw the visitor only once it was cleared.
    expect(application.paths.slice(before)).toEqual(['GET /account/orders?page=2'])

    const cookie = (await context.cookies()).find((candidate) => candidate.name === CLEARANCE_COOKIE)
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/', secure: false })
    const next = await page.goto(`${allowing}/account/settings`)
    expect(next?.status()).toBe(200)
    expect(await page.textContent('#protected')).toBe('Your account: GET /account/settings')
    // Chromium reports the gate's 403 (of the page, or of the icon it asked for meanwhile) as a
    // console error; nothing else may fail: no script error, no CSP violation.
    expect(events.errors.filter((error) => !error.includes('status of 403'))).toEqual([])
    // The check is in the site's log like any other, named by its page action.
    await service.app.verificationLog.flush()
    const rows = await service.app.database.query<{ action: string; page_action: string | null; hostname: string | null }>(
      'SELECT action, page_action, hostname FROM verifications WHERE site_id = $1',
      [siteId],
    )
    expect(rows).toContainEqual({ action: 'allow', page_action: 'gate', hostname: '127.0.0.1' })
  })

  it.skipIf(!available)('passes a renewed clearance of the check on to the browser when the one it sent is past half its life, and none before', async () => {
    const userAgent = 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0.0.0'
    const holder = { siteId, userAgent, addressGroup: addressGroupOf('127.0.0.1') }
    const now = Date.now()
    const give = (since: number, expiresAt: number) => issueClearance(service.app.keyRing.macKeyFor('gate'), holder, expiresAt, { since, isSecure: false })
    const visit = (clearance: string) => fetch(`${allowing}/account/long-form`, { headers: { cookie: `${CLEARANCE_COOKIE}=${clearance}`, 'user-agent': userAgent, accept: 'text/html' } })
    const clearancesOf = (answer: Response) => answer.headers.getSetCookie().filter((line) => line.startsWith(`${CLEARANCE_COOKIE}=`))

    const young = await visit(give(now - 600_000, now + 3_000_000))
    expect(young.status).toBe(200)
    expect(clearancesOf(young)).toEqual([])
    const old = await visit(give(now - 2_400_000, now + 1_200_000))
    expect(old.status).toBe(200)
    expect(await old.text()).toContain('Your account: GET /account/long-form')
    const [renewed = ''] = clearancesOf(old)
    expect(renewed).toMatch(/; Max-Age=3600;/)
    expect((await visit(renewed.split(';')[0]?.slice(CLEARANCE_COOKIE.length + 1) ?? '')).status).toBe(200)
  })

  it.skipIf(!available)('fails closed while Tollgate cannot be reached: the proxy answers its error, and the application sees nothing', async () => {
    const seen = application.paths.length
    for (const path of ['/account-while-down', '/']) {
      const answer = await fetch(`${unreachable}${path}`, { headers: { accept: 'text/html' }, redirect: 'manual' })
      expect(answer.status, `${path}: ${await answer.text()}`).toBe(proxy.unreachableStatus)
    }
    expect(application.paths.slice(seen)).toEqual([])
  })

  it.skipIf(!available)('keeps out a client that does not run the page, and one holding a cookie of another browser', async () => {
    const before = application.paths.length
    const bare = await fetch(`${allowing}/account`, { headers: { accept: 'application/json' } })
    expect(bare.status).toBe(403)
    expect(await bare.json()).toMatchObject({ error: { code: 'clearance_required' } })
    const page = await fetch(`${allowing}/account`, { headers: { accept: 'text/html' } })
    expect(page.status).toBe(403)
    expect(await page.text()).toContain('/.tollgate/sdk/v1/gate.js')

    const { page: cleared, context } = await browser.newPage()
    await cleared.goto(`${allowing}/`)
    await cleared.waitForSelector('#protected', { timeout: 30_000 })
    const cookie = (await context.cookies()).find((candidate) => candidate.name === CLEARANCE_COOKIE)
    const copied = await fetch(`${allowing}/account`, { headers: { cookie: `${CLEARANCE_COOKIE}=${cookie?.value}`, 'user-agent': 'curl/8.5.0' } })
    expect(copied.status).toBe(403)
    expect(application.paths.slice(before)).toEqual(['GET /'])
    // Tollgate's own pages are not exposed on the protected host.
    // (nginx answers them 404; Caddy sends them through the gate to the application.)
    for (const path of ['/.tollgate/metrics', '/.tollgate/dashboard', '/.tollgate/api/v1/sites', '/.tollgate/gate/v1/check?sitekey=x']) {
      const response = await fetch(`${allowing}${path}`, { headers: { accept: 'application/json' } })
      expect([403, 404], path).toContain(response.status)
      expect(await response.text(), path).not.toMatch(/tollgate_|"sites"|"data"/)
    }
  })

  it.skipIf(!available)("lets no visitor choose another site for the check, with a header or the query string", async () => {
    // A clearance that is valid, for the test site key that always passes (anyone can get one).
    const attacker = { 'user-agent': 'scraper/1.0' }
    const token = await obtainToken(service.app, { ...browserHeaders(TEST_KEY_ALLOW, allowing), ...attacker })
    const clearance = await service.app.inject({ method: 'POST', url: '/gate/v1/clearance', headers: { origin: allowing, ...attacker }, payload: { siteKey: TEST_KEY_ALLOW, token } })
    const cookie = [clearance.headers['set-cookie']].flat()[0]?.split(';')[0] ?? ''
    expect((await service.app.inject({ url: `/gate/v1/check?sitekey=${TEST_KEY_ALLOW}`, headers: { cookie, ...attacker } })).statusCode).toBe(204)

    const before = application.paths.length
    const forged = await fetch(`${allowing}/account?sitekey=${TEST_KEY_ALLOW}&prefix=/uploads`, {
      headers: { cookie, ...attacker, accept: 'text/html', 'x-tollgate-site-key': TEST_KEY_ALLOW, 'x-tollgate-prefix': '/uploads' },
    })
    expect(forged.status).toBe(403)
    expect(await forged.text()).toContain('<script src="/.tollgate/sdk/v1/gate.js"')
    expect(application.paths.slice(before)).toEqual([])
  })

  it.skipIf(!available)('takes a browser to an address with a fragment, and answers any method of an uncleared visitor with the page', { timeout: 60_000 }, async () => {
    const { page } = await browser.newPage()
    await page.goto(`${allowing}/docs/install#step-2`)
    await page.waitForSelector('#protected', { timeout: 30_000 })
    expect(await page.textContent('#protected')).toBe('Your account: GET /docs/install')
    expect(new URL(page.url()).hash).toBe('#step-2')

    const before = application.paths.length
    for (const method of ['POST', 'PUT', 'DELETE', 'PROPFIND']) {
      const response = await fetch(`${allowing}/account`, { method, headers: { accept: 'text/html' }, body: method === 'POST' ? 'a=1' : undefined })
      expect(response.status, method).toBe(403)
      expect(await response.text(), method).toContain('/.tollgate/sdk/v1/gate.js')
    }
    expect(application.paths.slice(before)).toEqual([])
  })

  it.skipIf(!available)("brings a form's POST to an address with a fragment back as a GET, without posting it again", { timeout: 60_000 }, async () => {
    const { page } = await browser.newPage()
    const before = application.paths.length
    await page.goto(`${allowing}/.tollgate/sdk/v1/gate.js`)
    await page.setContent(`<form method="post" action="${allowing}/comments/new#form"><input name="text" value="hello"><button>Send</button></form>`)
    await Promise.all([page.waitForSelector('#protected', { timeout: 30_000 }), page.click('button')])
    expect(await page.textContent('#protected')).toBe('Your account: GET /comments/new')
    expect(application.paths.slice(before)).toEqual(['GET /comments/new'])
  })

  it.skipIf(!available || proxy.name !== 'nginx')("keeps a 403 of the site's own a plain 403 for a cleared visitor", { timeout: 60_000 }, async () => {
    const { page } = await browser.newPage()
    await page.goto(`${allowing}/`)
    await page.waitForSelector('#protected', { timeout: 30_000 })
    const denied = await page.goto(`${allowing}/private`)
    expect(denied?.status()).toBe(403)
    expect(await page.content()).not.toContain('gate.js')
  })

  it.skipIf(!available)('tells a browser without JavaScript only that it needs JavaScript, on screen, to a screen reader and in its one heading', async () => {
    const { page, context } = await browser.newPage({ javaScriptEnabled: false })
    await page.goto(`${allowing}/account`)
    const { checking, noscript, title } = gateStrings.en
    const visible = await page.locator('body').innerText()
    // Chromium's own accessibility tree, as a screen reader gets it (the texts of its nodes).
    const cdp = await context.newCDPSession(page)
    const { nodes } = await cdp.send('Accessibility.getFullAXTree') as { nodes: { ignored: boolean; name?: { value?: string } }[] }
    const tree = nodes.filter((node) => !node.ignored).map((node) => node.name?.value ?? '').join('\n')
    for (const text of [visible, tree]) {
      expect(text).toContain(noscript)
      expect(text).not.toContain(checking)
    }
    // The heading waits for the script too (the document's title, which names the tree's root, stays):
    // the page's one heading says what it needs instead (WCAG 1.3.1, 2.4.6).
    expect(visible).not.toContain(title)
    expect(await page.getByRole('heading', { level: 1 }).allInnerTexts()).toEqual([noscript])
  })

  it.skipIf(!available || proxy.name !== 'nginx')('offers a link to load the page again, after 15 seconds, when gate.js never comes, with reduced motion too', { timeout: 40_000 }, async () => {
    const { page } = await browser.newPage({ reducedMotion: 'reduce' })
    await page.setExtraHTTPHeaders({ 'accept-language': 'fr-FR,fr;q=0.9' })
    await page.route('**/.tollgate/sdk/v1/gate.js', (route) => route.abort('connectionfailed'))
    const started = Date.now()
    await page.goto(`${allowing}/account/slow?step=2`)
    const link = page.getByRole('link', { name: gateStrings.fr.reloadLink })
    // At first only "checking": neither seen nor read out.
    expect(await page.locator('#tollgate-gate-waiting').isVisible()).toBe(false)
    expect(await link.count()).toBe(0)
    expect(await page.locator('#tollgate-gate-waiting a').getAttribute('href')).toBe('')
    await link.waitFor({ state: 'visible', timeout: 20_000 })
    expect(Date.now() - started).toBeGreaterThanOrEqual(14_000)
    expect(await page.textContent('#tollgate-gate-waiting')).toBe(`${gateStrings.fr.stillWaiting} ${gateStrings.fr.reloadLink}`)
    // It loads the same address again (now with gate.js: the visitor is checked and let through).
    await page.unroute('**/.tollgate/sdk/v1/gate.js')
    await link.click()
    await page.waitForSelector('#protected', { timeout: 30_000 })
    expect(await page.textContent('#protected')).toBe('Your account: GET /account/slow?step=2')
  })

  it.skipIf(!available)('offers a "Try again" button after a failure, focused, which Enter uses to check the browser again', { timeout: 60_000 }, async () => {
    const { page } = await browser.newPage()
    await page.route('**/gate/v1/clearance', (route) => route.fulfill({ status: 500, contentType: 'application/json', body: '{"error":{"code":"internal"}}' }))
    await page.goto(`${allowing}/account/retry`)
    await page.waitForFunction((failedTitle) => document.getElementById('tollgate-gate-title')?.textContent === failedTitle, gateStrings.en.failedTitle, { timeout: 30_000 })
    expect(await page.evaluate(() => ({ id: document.activeElement?.id, text: document.activeElement?.textContent }))).toEqual({ id: 'tollgate-gate-retry', text: gateStrings.en.retry })
    // The error's code isolated (U+2068 to U+2069): one piece, left to right, in a right-to-left sentence too.
    expect(await page.textContent('#tollgate-gate-status')).toContain(gateStrings.en.failed.replace('{code}', '\u2068server_error\u2069'))
    await page.unroute('**/gate/v1/clearance')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#protected', { timeout: 30_000 })
    expect(await page.textContent('#protected')).toBe('Your account: GET /account/retry')
  })

  it.skipIf(!available)('tells a browser that blocks the cookies of the site so, without checking it', { timeout: 60_000 }, async () => {
    const { page } = await browser.newPage()
    // As a browser that blocks the site's cookies shows it to scripts: nothing written is kept.
    await page.addInitScript(() => {
      Object.defineProperty(Document.prototype, 'cookie', { get: () => '', set: () => undefined, configurable: true })
    })
    const challenges: string[] = []
    page.on('request', (request) => {
      if (request.url().includes('/api/v1/challenge')) challenges.push(request.url())
    })
    await page.goto(`${allowing}/account`)
    await page.waitForFunction(() => document.getElementById('tollgate-gate-title')?.textContent === 'Cookies are blocked', undefined, { timeout: 30_000 })
    expect(challenges).toEqual([])
  })

  it.skipIf(!available)('tells a browser that keeps coming back without its cookie why, instead of checking it for ever', { timeout: 90_000 }, async () => {
    const { page } = await browser.newPage()
    // As if the browser refused the site's cookies: the clearance is answered but never kept.
    // (route.fetch() would store the cookie in the context's jar.)
    let clearances = 0
    await page.route('**/.tollgate/gate/v1/clearance', async (route) => {
      clearances += 1
      await route.fulfill({ status: 204, headers: { 'cache-control': 'no-store' } })
    })
    await page.goto(`${allowing}/account`)
    await page.waitForFunction(() => document.getElementById('tollgate-gate-title')?.textContent === 'Your browser keeps coming back', undefined, { timeout: 60_000 })
    expect(clearances).toBe(2)
  })

  it.skipIf(!available)("turns away a browser the risk model blocks, in its language, and it never reaches the application", { timeout: 60_000 }, async () => {
    const before = application.paths.length
    const { page, context } = await browser.newPage()
    // In the visitor's language, from the first word to the last.
    await page.setExtraHTTPHeaders({ 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' })
    const response = await page.goto(`${blocking}/account`)
    expect(response?.headers()['content-language']).toBe('de')
    expect(await page.getAttribute('html', 'lang')).toBe('de')
    await page.waitForFunction(() => document.getElementById('tollgate-gate-title')?.textContent === 'Zugriff verweigert', undefined, { timeout: 30_000 })
    expect(await page.title()).toBe('Zugriff verweigert')
    expect(await context.cookies()).toEqual([])
    expect(application.paths.slice(before)).toEqual([])
    // Below, the reference the visitor can quote to the site's owner: it names the verification's row in the log.
    const referenceLine = await page.textContent('#tollgate-gate-reference')
    const reference = /^Referenz: \u2068([0-9a-f]{8}-[0-9a-f]{4})\u2069$/.exec(referenceLine ?? '')?.[1]
    expect(reference, String(referenceLine)).toBeDefined()
    await service.app.verificationLog.flush()
    const rows = await service.app.database.query<{ action: string; page_action: string | null }>(
      "SELECT action, page_action FROM verifications WHERE site_id = $1 AND id::text LIKE $2 || '%'",
      [blockingSiteId, reference],
    )
    expect(rows).toEqual([{ action: 'block', page_action: 'gate' }])
    // The site's help link, with the reference, inside the status (announced with it), the first stop of Tab.
    const help = page.getByRole('link', { name: gateStrings.de.contactOwner })
    expect(await help.getAttribute('href')).toBe(`https://help.example.com/contact?topic=gate&ref=${reference}`)
    expect(await page.locator('#tollgate-gate-status #tollgate-gate-help').isVisible()).toBe(true)
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('tollgate-gate-help')
  })
})
