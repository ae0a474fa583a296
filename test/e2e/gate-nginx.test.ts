/// <reference lib="dom" />
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildSdk } from '../../scripts/build-sdk.js'
import { CLEARANCE_COOKIE } from '../../src/domain/gate/clearance.js'
import { createTestSite } from '../helpers/core-flow.js'
import { freePort } from '../helpers/free-port.js'
import { isCi } from '../helpers/services.js'
import { buildTestApp, type TestApp } from '../helpers/test-app.js'
import { hasChromium, launchBrowser, type TestBrowser } from './sdk-support.js'

const NGINX_PATH = '/usr/sbin/nginx'
const TEST_KEY_BLOCK = '2x00000000000000000000AB'

/** Whether nginx can run here; under CI it must (Debian's nginx, installed by .ci/run). */
function hasNginx(): boolean {
  if (existsSync(NGINX_PATH)) return true
  const message = `nginx is not installed at ${NGINX_PATH} (apt-get install -y nginx)`
  if (isCi) throw new Error(`${message}; CI must run the gate's end-to-end tests`)
  console.warn(`\n!!! SKIPPING THE GATE'S NGINX TESTS: ${message} !!!\n`)
  return false
}

/** The server block of docs/gate.md, as a reader copies it, with this test's addresses and key. */
function documentedServer(listenPort: number, tollgate: string, app: string, siteKey: string): string {
  const block = /```nginx\n([\s\S]*?)```/.exec(readFileSync('docs/gate.md', 'utf8'))?.[1]
  if (block === undefined) throw new Error('docs/gate.md has no nginx block')
  return block
    .replace('listen 80;', `listen 127.0.0.1:${listenPort};`)
    .replaceAll('tollgate:3000', tollgate)
    .replaceAll('app:8080', app)
    .replaceAll('tgk_YOUR_SITE_KEY', siteKey)
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

describe.skipIf(!hasChromium() || !hasNginx())('the gate behind a real nginx, with Chromium as the visitor', () => {
  let service: TestApp
  let application: Awaited<ReturnType<typeof startApplication>>
  let browser: TestBrowser
  let nginx: ChildProcess | undefined
  let directory: string
  let siteId: string
  /** The protected host, whose gate uses a site that lets the test browser in. */
  let allowing: string
  /** The same, with the test site key that is always blocked. */
  let blocking: string

  beforeAll(async () => {
    await buildSdk()
    // nginx is the one proxy in front, as docs/gate.md configures it (TRUST_PROXY=1).
    service = await buildTestApp({ env: { TRUST_PROXY: '1' }, config: { rateLimitPerMinute: 0 } })
    // The headless test browser is scored as automation; this gate is about the flow.
    const site = await createTestSite(service.app, { domains: ['127.0.0.1'], settings: { challengeThreshold: 90, blockThreshold: 100 } })
    siteId = site.site.id
    const tollgate = (await service.app.listen({ port: 0, host: '127.0.0.1' })).replace('http://', '')
    application = await startApplication()
    const [allowPort, blockPort] = [await freePort(), await freePort()]
    allowing = `http://127.0.0.1:${allowPort}`
    blocking = `http://127.0.0.1:${blockPort}`
    directory = await mkdtemp(join(tmpdir(), 'tollgate-nginx-'))
    const temporary = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `${name}_temp_path ${directory}/${name};`).join('\n  ')
    await writeFile(join(directory, 'nginx.conf'), `
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
pid ${directory}/nginx.pid;
error_log ${directory}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  ${temporary}
  ${documentedServer(allowPort, tollgate, application.origin, site.siteKey)}
  ${documentedServer(blockPort, tollgate, application.origin, TEST_KEY_BLOCK)}
}
`)
    nginx = spawn(NGINX_PATH, ['-p', directory, '-c', join(directory, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    nginx.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    for (let attempt = 0; ; attempt += 1) {
      if (await fetch(`${allowing}/.tollgate/sdk/v1/gate.js`).then((response) => response.ok, () => false)) break
      if (attempt === 100 || nginx.exitCode !== null) throw new Error(`nginx did not start: ${stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    browser = await launchBrowser()
  })

  afterAll(async () => {
    await browser?.close()
    nginx?.kill('SIGQUIT')
    application?.server.close()
    await service?.close()
    if (directory !== undefined) await rm(directory, { recursive: true, force: true })
  })

  it('checks a browser on its first visit and takes it on to the page it asked for, which the application then serves directly', { timeout: 60_000 }, async () => {
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

  it('keeps out a client that does not run the page, and one holding a cookie of another browser', async () => {
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
    for (const path of ['/.tollgate/metrics', '/.tollgate/dashboard', '/.tollgate/api/v1/sites', '/.tollgate/gate/v1/check?sitekey=x']) {
      expect((await fetch(`${allowing}${path}`)).status, path).toBe(404)
    }
  })

  it('takes a browser to an address with a fragment, and answers any method of an uncleared visitor with the page', { timeout: 60_000 }, async () => {
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

  it('tells a browser that keeps coming back without its cookie why, instead of checking it for ever', { timeout: 90_000 }, async () => {
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

  it('turns away a browser the risk model blocks, which never reaches the application', { timeout: 60_000 }, async () => {
    const before = application.paths.length
    const { page, context } = await browser.newPage()
    await page.goto(`${blocking}/account`)
    await page.waitForFunction(() => document.getElementById('tollgate-gate-title')?.textContent === 'Access denied', undefined, { timeout: 30_000 })
    expect(await context.cookies()).toEqual([])
    expect(application.paths.slice(before)).toEqual([])
  })
})
