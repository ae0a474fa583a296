import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { english, getStrings, loadStrings, setStrings, writeText } from '../../sdk/src/strings.js'
import { translations } from '../../sdk/src/translations/index.js'

/**
 * The service's SDK folder, as far as translations go: `/sdk/v1/strings/{language}.json` from the
 * SDK's own translations, each answered after the delay the test gives it (or never).
 */
function startFolder(delays: Record<string, number>): Promise<{ server: Server; folder: string }> {
  const server = createServer((request, response) => {
    const language = /^\/sdk\/v1\/strings\/(\w+)\.json$/.exec(request.url ?? '')?.[1] ?? ''
    const texts = (translations as Record<string, unknown>)[language]
    const delay = delays[language] ?? 0
    if (texts === undefined) return void response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"unsupported_language"}}')
    if (delay === Infinity) return
    setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(texts)), delay)
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    resolve({ server, folder: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sdk/v1/` })
  }))
}

/** A status line as the SDK writes it (a DOM node's textContent; this suite runs in Node). */
function statusLine(): { textContent: string } {
  return { textContent: '' }
}

describe('the texts the SDK shows', () => {
  let server: Server
  let folder: string

  beforeAll(async () => {
    ({ server, folder } = await startFolder({ fr: 300, nl: 300, it: Infinity }))
  })
  afterAll(() => {
    server.closeAllConnections()
    server.close()
  })

  it("keeps the site's own texts over a translation that arrives after them, key by key", async () => {
    setStrings({ verified: 'Merci, c’est bon.' })
    const line = statusLine()
    loadStrings('fr', folder)
    writeText(line as unknown as Node, 'fr', (strings) => `${strings.solving} / ${strings.verified}`)
    // The first text waits for its language rather than flashing English.
    expect(line.textContent).toBe('')
    await expect.poll(() => line.textContent).toBe(`${translations.fr.solving} / Merci, c’est bon.`)
    expect(getStrings('fr')).toMatchObject({ failed: translations.fr.failed, verified: 'Merci, c’est bon.' })
  })

  it('keeps texts the site sets after the translation came, and leaves the other languages alone', async () => {
    loadStrings('de', folder)
    await expect.poll(() => getStrings('de').solving).toBe(translations.de.solving)
    setStrings({ solving: 'Einen Augenblick…' })
    expect(getStrings('de')).toMatchObject({ solving: 'Einen Augenblick…', verifying: translations.de.verifying })
    expect(getStrings().verifying).toBe(english.verifying)
  })

  it('shows English after a moment when the translation does not come, and the translation once it is there', async () => {
    const line = statusLine()
    const asked = Date.now()
    loadStrings('it', folder)
    writeText(line as unknown as Node, 'it', (strings) => strings.timeout)
    await expect.poll(() => line.textContent, { timeout: 3_000 }).toBe(english.timeout)
    expect(Date.now() - asked).toBeGreaterThanOrEqual(1_400)
  })

  it('keeps a text cleared at once (a reset) over an earlier one still waiting for its language', async () => {
    const line = statusLine()
    loadStrings('nl', folder)
    writeText(line as unknown as Node, 'nl', (strings) => strings.verifying)
    writeText(line as unknown as Node, 'en', () => '')
    await expect.poll(() => getStrings('nl').verifying).toBe(translations.nl.verifying)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(line.textContent).toBe('')
  })

  it('stays in English when the language cannot be fetched, with a warning at most', async () => {
    const line = statusLine()
    loadStrings('ko', 'http://127.0.0.1:9/sdk/v1/')
    writeText(line as unknown as Node, 'ko', (strings) => strings.failed)
    await expect.poll(() => line.textContent).toBe(english.failed)
  })
})
