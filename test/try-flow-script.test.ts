import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestAccount, createTestSite, type TestAccount } from './helpers/dashboard-client.js'
import { findClosedPort } from './helpers/webhook-receiver.js'
import { buildTestApp, type TestApp } from './helpers/test-app.js'

interface Run {
  status: number | null
  stdout: string
  stderr: string
}

/** `npm run try-flow -- ...`, as a newcomer runs it beside the service (asynchronously: the service answers from this process). */
function tryFlow(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/try-flow.ts', ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr })
    })
  })
}

/** The README's sample output of `npm run try-flow`: the `# ` lines after its commands. */
function readmeSampleOutput(): string[] {
  const block = /```sh\n(\s*npm run try-flow[\s\S]*?)```/.exec(readFileSync('README.md', 'utf8'))?.[1] ?? ''
  return block.split('\n').flatMap((line) => /^\s*# (.*)$/.exec(line)?.[1] ?? [])
}

describe('npm run try-flow', () => {
  let service: TestApp
  let owner: TestAccount
  let url: string
  beforeAll(async () => {
    service = await buildTestApp()
    owner = await createTestAccount(service.app)
    await service.app.listen({ port: 0, host: '127.0.0.1' })
    url = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await service.close()
  })

  it('runs the whole flow on the test keys without options, down to a Siteverify success', async () => {
    const run = await tryFlow([], { TOLLGATE_URL: url })

    expect(run.status, run.stderr).toBe(0)
    const lines = run.stdout.trim().split('\n')
    expect(lines[0]).toBe(`Tollgate at ${url}, site key 1x00000000000000000000AA (the test site key: every submission passes)`)
    expect(lines[1]).toMatch(/^1\. challenge {3}[0-9a-f-]{36}, difficulty \d+ bits, expires \d{4}-\d\d-\d\dT[\d:.]+Z$/)
    expect(lines[2]).toMatch(/^2\. solved {6}nonce \d+ in \d+ ms$/)
    expect(lines[3]).toMatch(/^3\. verify {6}action allow, risk score 0, token v1\.[\w-]+\.[\w-]+$/)
    expect(lines[4]).toBe('4. siteverify  success true, hostname null, action allow')
    // The README shows a newcomer what the script prints: its first line as it is, then each step's (the values vary).
    const shown = readmeSampleOutput().map((line) => line.replace('http://localhost:3000', url))
    expect(shown[0]).toBe(lines[0])
    expect(shown.map((line) => line.slice(0, 'N. siteverify  '.length))).toEqual(lines.map((line) => line.slice(0, 'N. siteverify  '.length)))
  })

  it("gets a token for a site that allows this machine's address, and redeems it with the site's secret once", async () => {
    const site = await createTestSite(service.app, owner, { name: 'Scripted tries', settings: { allowedAddresses: ['127.0.0.1'] } })

    const run = await tryFlow(['--url', url, '--site-key', site.siteKey, '--secret', site.secretKey, '--origin', 'https://shop.example'])

    expect(run.status, run.stderr).toBe(0)
    expect(run.stdout).toContain('3. verify      action allow, risk score 0, token v1.')
    expect(run.stdout).toContain('4. siteverify  success true, hostname shop.example, action allow')
    // The verification is in the site's own log, as any visitor's would be.
    await service.app.verificationLog.flush()
    const log = await service.app.inject({ method: 'GET', url: `/api/v1/sites/${site.id}/verifications`, headers: { authorization: `Bearer ${owner.apiKey}` } })
    expect(log.json<{ items: { action: string }[] }>().items.map((row) => row.action)).toEqual(['allow'])

    const withoutSecret = await tryFlow(['--url', url, '--site-key', site.siteKey])
    expect(withoutSecret.status, withoutSecret.stderr).toBe(0)
    expect(withoutSecret.stdout).toContain("4. siteverify  skipped: pass --secret with the site's secret key to redeem the token")
  })

  it('says why a site that judges the script gives it no token, and exits 1', async () => {
    const site = await createTestSite(service.app, owner, { name: 'Judged' })

    const run = await tryFlow(['--url', url, '--site-key', site.siteKey, '--secret', site.secretKey])

    expect(run.status).toBe(1)
    expect(run.stdout).toMatch(/3\. verify {6}action (block|challenge), risk score \d+, no token/)
    expect(run.stderr).toContain('tollgate try-flow: a script is scored as the bot it is, so it gets no token')
  })

  it("names the service's refusal, a wrong secret, and a service that does not answer", async () => {
    const unknownKey = await tryFlow(['--url', url, '--site-key', 'tgk_nosuchkey'])
    expect(unknownKey.status).toBe(1)
    expect(unknownKey.stderr.trim()).toBe("tollgate try-flow: /api/v1/challenge answered 401 invalid_site_key: The site key (the page's data-site-key or data-sitekey, the SDK's siteKey option, or the X-Site-Key header of a direct API call) is missing or names no site.")

    const site = await createTestSite(service.app, owner, { name: 'Wrong secret', settings: { allowedAddresses: ['127.0.0.1'] } })
    const wrongSecret = await tryFlow(['--url', url, '--site-key', site.siteKey, '--secret', 'tgs_notthesecretkeyofthissiteatall000000000'])
    expect(wrongSecret.status).toBe(1)
    expect(wrongSecret.stdout).toContain('4. siteverify  success false, error-codes invalid-input-secret')
    expect(wrongSecret.stderr).toContain("tollgate try-flow: Siteverify refused the token (invalid-input-secret): is --secret the site's secret key?")

    const closed = await findClosedPort()
    const unreachable = await tryFlow(['--url', `http://127.0.0.1:${closed}`])
    expect(unreachable.status).toBe(1)
    expect(unreachable.stderr.trim()).toBe(`tollgate try-flow: cannot reach Tollgate at http://127.0.0.1:${closed} (ECONNREFUSED): is it running (npm start)? Pass --url otherwise.`)
  })

  it('prints its usage for --help, and refuses unknown options and a bad address with exit code 2', async () => {
    const help = await tryFlow(['--help'])
    expect(help.status).toBe(0)
    expect(help.stdout).toMatch(/^usage: npm run try-flow/)

    const unknown = await tryFlow(['--site', 'x'])
    expect(unknown.status).toBe(2)
    expect(unknown.stderr).toMatch(/^tollgate try-flow: Unknown option '--site'.*\nusage: npm run try-flow/s)

    const badUrl = await tryFlow(['--url', 'ftp://example.com'])
    expect(badUrl.status).toBe(2)
    expect(badUrl.stderr).toMatch(/^tollgate try-flow: --url must be an http or https address, not ftp:\/\/example\.com\n/)
  })
})
