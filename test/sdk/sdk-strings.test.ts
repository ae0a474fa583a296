import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildSdk } from '../../scripts/build-sdk.js'
import { LANGUAGES } from '../../sdk/src/language.js'
import { english } from '../../sdk/src/strings.js'
import sdkAssets from '../../src/routes/assets/sdk.js'
import { gateStrings } from '../../src/routes/gate/gate-strings.js'
import errorHandler from '../../src/plugins/error-handler.js'

/** The `{placeholders}` of a text, sorted. */
const placeholdersOf = (text: string) => [...text.matchAll(/\{\w+\}/g)].map(([placeholder]) => placeholder).sort()

describe('GET /sdk/v1/strings/:file', () => {
  let directory: string
  const app = Fastify({ logger: false })

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'tollgate-sdk-strings-'))
    await buildSdk(directory)
    // The service's own error answers (a path the route's schema refuses, a path no route has).
    await app.register(errorHandler)
    await app.register(sdkAssets, { directory })
    await app.ready()
  })
  afterAll(async () => {
    await app.close()
    await rm(directory, { recursive: true, force: true })
  })

  it('serves the languages the SDK chooses from, the gate page\'s exactly and those asked for', () => {
    expect(Object.keys(gateStrings).sort()).toEqual([...LANGUAGES].sort())
    expect(LANGUAGES).toEqual(expect.arrayContaining(['de', 'fr', 'es', 'it', 'pt', 'nl', 'pl', 'sv', 'ja', 'zh', 'ko', 'tr', 'ru', 'uk', 'cs', 'ar', 'he', 'fa']))
  })

  it.each(LANGUAGES)('serves %s with every key of the English texts and nothing else, each translated, its placeholders kept', async (language) => {
    const response = await app.inject({ method: 'GET', url: `/sdk/v1/strings/${language}.json` })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    const texts = response.json<Record<string, unknown>>()
    expect(Object.keys(texts).sort()).toEqual(Object.keys(english).sort())
    for (const [key, englishText] of Object.entries(english)) {
      const text = texts[key]
      expect(typeof text === 'string' && text.trim() !== '', `${language}.${key}`).toBe(true)
      expect(placeholdersOf(String(text)), `${language}.${key}`).toEqual(placeholdersOf(englishText))
      // A key left in English is a key not translated (the sentences are long enough to differ in every language).
      if (language !== 'en' && key !== 'reference') expect(text, `${language}.${key}`).not.toBe(englishText)
    }
  })

  it('is readable from any site, cached for a day and revalidated, and compressed for the browsers that take it', async () => {
    const plain = await app.inject({ method: 'GET', url: '/sdk/v1/strings/de.json' })
    expect(plain.headers['access-control-allow-origin']).toBe('*')
    expect(plain.headers['cross-origin-resource-policy']).toBe('cross-origin')
    expect(plain.headers['cache-control']).toBe('public, max-age=86400, stale-while-revalidate=604800')
    expect(plain.headers.vary).toContain('Accept-Encoding')
    const brotli = await app.inject({ method: 'GET', url: '/sdk/v1/strings/de.json', headers: { 'accept-encoding': 'gzip, deflate, br' } })
    expect(brotli.headers['content-encoding']).toBe('br')
    expect(brotliDecompressSync(brotli.rawPayload).toString('utf8')).toBe(plain.body)
    const zipped = await app.inject({ method: 'GET', url: '/sdk/v1/strings/de.json', headers: { 'accept-encoding': 'gzip, deflate' } })
    expect(zipped.headers['content-encoding']).toBe('gzip')
    expect(gunzipSync(zipped.rawPayload).toString('utf8')).toBe(plain.body)
    const revalidated = await app.inject({ method: 'GET', url: '/sdk/v1/strings/de.json', headers: { 'if-none-match': String(plain.headers.etag) } })
    expect(revalidated.statusCode).toBe(304)
  })

  it('answers a language it does not speak with 404 unsupported_language, in JSON a page of another origin can read', async () => {
    for (const file of ['fi.json', 'pt-BR.json', 'DE.json', 'de', 'manifest.json']) {
      const response = await app.inject({ method: 'GET', url: `/sdk/v1/strings/${file}` })
      expect(response.statusCode, file).toBe(404)
      expect(response.headers['access-control-allow-origin'], file).toBe('*')
      expect(response.json(), file).toMatchObject({ error: { code: 'unsupported_language' } })
    }
  })

  // (A plain `../` never reaches the route: URLs resolve it before they are sent, to a path of its own.)
  it('serves nothing but its texts to a path that climbs out of the folder', async () => {
    for (const url of ['/sdk/v1/strings/..%2Ftollgate.js', '/sdk/v1/strings/..%2F..%2F..%2Fpackage.json', '/sdk/v1/strings/%2e%2e', '/sdk/v1/strings/..%5Cmanifest.json', '/sdk/v1/strings/%2e%2e%2ftollgate.js']) {
      const response = await app.inject({ method: 'GET', url })
      expect(response.statusCode, url).toBeGreaterThanOrEqual(400)
      expect(response.statusCode, url).toBeLessThan(500)
      expect(response.json(), url).toMatchObject({ error: { code: expect.stringMatching(/^(validation_error|unsupported_language|not_found)$/) as string } })
    }
  })
})
