import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { brotliCompressSync, brotliDecompressSync } from 'node:zlib'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import errorHandler from '../../../src/plugins/error-handler.js'
import dashboardAssets from '../../../src/routes/assets/dashboard.js'
import { buildTestApp } from '../../helpers/test-app.js'

const indexHtml = '<!doctype html><title>Tollgate dashboard</title><script type="module" src="/dashboard/assets/index-AbCd1234.js"></script>'
const script = 'console.log("dashboard")'

async function serve(root: string): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  await app.register(errorHandler)
  await app.register(dashboardAssets, { root })
  await app.ready()
  return app
}

describe('GET /dashboard (the built web UI)', () => {
  let root: string
  let emptyRoot: string
  let app: FastifyInstance

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tollgate-dashboard-'))
    emptyRoot = await mkdtemp(join(tmpdir(), 'tollgate-dashboard-empty-'))
    await mkdir(join(root, 'assets'))
    await writeFile(join(root, 'index.html'), indexHtml)
    await writeFile(join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>')
    await writeFile(join(root, 'assets', 'index-AbCd1234.js'), script)
    await writeFile(join(root, 'assets', 'index-AbCd1234.js.br'), brotliCompressSync(script))
    await writeFile(join(root, '.env'), 'SECRET=1')
    app = await serve(root)
  })
  afterAll(async () => {
    await app.close()
    await Promise.all([rm(root, { recursive: true }), rm(emptyRoot, { recursive: true })])
  })

  it.each(['/dashboard', '/dashboard/'])('%s serves index.html with a strict CSP and no caching', async (url) => {
    const response = await app.inject({ method: 'GET', url })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(response.body).toBe(indexHtml)
    expect(response.headers['cache-control']).toBe('no-cache')
    const policy = String(response.headers['content-security-policy'])
    expect(policy).toContain("script-src 'self'")
    expect(policy).toContain("frame-ancestors 'none'")
    expect(policy).not.toContain('unsafe-inline')
    expect(policy).not.toContain('unsafe-eval')
    expect(response.headers['x-content-type-options']).toBe('nosniff')
  })

  it('serves index.html for deep links into the app (reload on a site page works)', async () => {
    for (const url of ['/dashboard/sites/0b6f1f52-1d2e-4b39-9a63-4c1f0e2a9d11/settings', '/dashboard/api-keys', '/dashboard/login?next=1']) {
      const response = await app.inject({ method: 'GET', url })
      expect(response.statusCode, url).toBe(200)
      expect(response.body, url).toBe(indexHtml)
    }
  })

  it('serves hashed assets as immutable, pre-compressed when the browser accepts it', async () => {
    const plain = await app.inject({ method: 'GET', url: '/dashboard/assets/index-AbCd1234.js' })
    expect(plain.statusCode).toBe(200)
    expect(plain.body).toBe(script)
    expect(plain.headers['content-type']).toMatch(/^(text|application)\/javascript/)
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable')

    const compressed = await app.inject({ method: 'GET', url: '/dashboard/assets/index-AbCd1234.js', headers: { 'accept-encoding': 'br' } })
    expect(compressed.statusCode).toBe(200)
    expect(compressed.headers['content-encoding']).toBe('br')
    expect(brotliDecompressSync(compressed.rawPayload).toString()).toBe(script)
  })

  it('serves other files of the build, revalidated on each visit', async () => {
    const response = await app.inject({ method: 'GET', url: '/dashboard/favicon.svg' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['cache-control']).toBe('no-cache')
  })

  it('answers an app path of a name longer than any file\'s with the app', async () => {
    const response = await app.inject({ method: 'GET', url: `/dashboard/${'a'.repeat(256)}` })
    expect([response.statusCode, response.body]).toEqual([200, indexHtml])
  })

  it('answers a missing asset, or a folder of the build, with a JSON 404, not with the app', async () => {
    for (const url of ['/dashboard/assets/index-Gone0000.js', '/dashboard/robots.txt', '/dashboard/assets/', `/dashboard/assets/${'b'.repeat(300)}.js`]) {
      const response = await app.inject({ method: 'GET', url })
      expect(response.statusCode, url).toBe(404)
      expect(response.json(), url).toMatchObject({ error: { code: 'not_found' } })
    }
  })

  it('never serves dotfiles or files outside the build', async () => {
    for (const url of ['/dashboard/.env', '/dashboard/..%2f..%2fpackage.json', '/dashboard/assets/..%2F..%2F..%2Fpackage.json']) {
      const response = await app.inject({ method: 'GET', url })
      expect(response.statusCode, url).not.toBe(200)
      expect(response.body, url).not.toContain('SECRET=1')
      expect(response.body, url).not.toContain('"dependencies"')
    }
  })

  it('answers other methods with 404', async () => {
    const response = await app.inject({ method: 'POST', url: '/dashboard/sites', payload: {} })
    expect(response.statusCode).toBe(404)
    expect(response.json()).toMatchObject({ error: { code: 'not_found' } })
  })

  it('says how to build the dashboard when it is not built', async () => {
    const unbuilt = await serve(emptyRoot)
    try {
      const response = await unbuilt.inject({ method: 'GET', url: '/dashboard/sites' })
      expect(response.statusCode).toBe(503)
      expect(response.json()).toMatchObject({ error: { code: 'service_unavailable', message: expect.stringContaining('run `npm run build` (no restart needed)') } })
    } finally {
      await unbuilt.close()
    }
  })

  it('is part of the service', async () => {
    const service = await buildTestApp()
    try {
      const response = await service.app.inject({ method: 'GET', url: '/dashboard/' })
      // `npm test` builds the dashboard first (pretest), so the app shell is there.
      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toMatch(/^text\/html/)
      expect(response.body).toContain('<div id="app"')
      expect(response.headers['content-security-policy']).toContain("default-src 'self'")
    } finally {
      await service.close()
    }
  })
})
