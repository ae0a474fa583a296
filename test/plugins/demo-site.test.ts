import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, type App } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { DEMO_SITE_ID } from '../../src/plugins/demo-site.js'
import { createKeyRing } from '../../src/secret.js'
import { browserHeaders, obtainToken } from '../helpers/core-flow.js'
import { openTestDatabase, openTestKeyValue } from '../helpers/storage.js'
import { buildTestApp, TEST_SECRET } from '../helpers/test-app.js'

/** `npm start` in development, with its log lines captured, before it listens. */
async function buildInDevelopment(lines: string[]): Promise<App> {
  const database = await openTestDatabase('pglite')
  const keyValue = await openTestKeyValue('memory')
  const config = loadConfig({ NODE_ENV: 'development', TOLLGATE_SECRET: TEST_SECRET, RATE_LIMIT_PER_MINUTE: '0' })
  const app = await buildApp({
    config,
    storage: { database: database.database, keyValue: keyValue.keyValue },
    keyRing: createKeyRing(TEST_SECRET),
    logger: { level: 'info', stream: { write: (line: string) => lines.push(line) } },
  })
  await app.ready()
  return app
}

async function startInDevelopment(lines: string[]): Promise<App> {
  const app = await buildInDevelopment(lines)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return app
}

describe('the development demo site', () => {
  const lines: string[] = []
  let app: App
  beforeAll(async () => {
    app = await startInDevelopment(lines)
  })
  afterAll(() => app.close())

  it('prints its site key and secret key at start', () => {
    const printed = lines.map((line) => JSON.parse(line) as { msg: string }).find((line) => line.msg.startsWith('Demo site'))
    expect(app.demoSite).toEqual({ siteKey: expect.stringMatching(/^tgk_/), secretKey: expect.stringMatching(/^tgs_/) })
    expect(printed?.msg).toContain(app.demoSite?.siteKey)
    expect(printed?.msg).toContain(app.demoSite?.secretKey)
  })

  it('prints nothing of itself when the start fails at listening (the port is taken): only the cause', async () => {
    const taken = net.createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const failed: string[] = []
    const app = await buildInDevelopment(failed)
    try {
      await expect(app.listen({ port: (taken.address() as net.AddressInfo).port, host: '127.0.0.1' })).rejects.toThrow(/EADDRINUSE/)
    } finally {
      taken.close()
      await app.close()
    }
    expect(failed.filter((line) => line.includes('Demo site'))).toEqual([])
  })

  it('is a site without account that allows any origin, and its printed keys work end to end', async () => {
    const demo = app.demoSite
    expect(await app.sites.findById(DEMO_SITE_ID)).toMatchObject({ accountId: null, siteKey: demo?.siteKey, domains: [] })
    const token = await obtainToken(app, browserHeaders(demo?.siteKey ?? '', 'http://localhost:3000'))
    const answer = await app.inject({ method: 'POST', url: '/siteverify', payload: { secret: demo?.secretKey ?? '', response: token } })
    expect(answer.json()).toMatchObject({ success: true, hostname: 'localhost' })
  })

  it('has the same keys at the next start with the same secret (they are derived, not stored)', async () => {
    const next = await startInDevelopment([])
    try {
      expect(next.demoSite).toEqual(app.demoSite)
    } finally {
      await next.close()
    }
  })

  it('is removed by a production start on a database a development start left it in', async () => {
    const database = await openTestDatabase('pglite')
    const keyValue = await openTestKeyValue('memory')
    const storage = { database: database.database, keyValue: keyValue.keyValue }
    const start = (NODE_ENV: string, lines: string[] = []) =>
      buildApp({ config: loadConfig({ NODE_ENV, TOLLGATE_SECRET: TEST_SECRET }), storage, keyRing: createKeyRing(TEST_SECRET), logger: { level: 'info', stream: { write: (line: string) => lines.push(line) } } })
    // Both on one database; the development instance stays open (closing it closes the stores).
    const development = await start('development')
    await development.ready()
    const demo = development.demoSite
    expect(await development.sites.findById(DEMO_SITE_ID)).toBeDefined()
    const lines: string[] = []
    const production = await start('production', lines)
    try {
      await production.ready()
      expect(await production.sites.findById(DEMO_SITE_ID)).toBeUndefined()
      const refused = await production.inject({ method: 'POST', url: '/api/v1/challenge', headers: browserHeaders(demo?.siteKey ?? '', 'http://localhost:3000') })
      expect(refused.json()).toMatchObject({ error: { code: 'invalid_site_key' } })
      expect(lines.some((line) => line.includes('removed the development demo site'))).toBe(true)
    } finally {
      await production.close()
      await development.close()
    }
  })

  it('does not exist in production', async () => {
    const service = await buildTestApp({ env: { NODE_ENV: 'production' } })
    try {
      expect(service.app.demoSite).toBeUndefined()
      expect(await service.app.sites.findById(DEMO_SITE_ID)).toBeUndefined()
    } finally {
      await service.close()
    }
  })
})
