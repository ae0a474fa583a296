import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
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

/** A status line as the SDK writes it (an element's textContent, lang and dir; this suite runs in Node). */
function statusLine(): HTMLElement {
  return { textContent: '', lang: '', dir: '' } as HTMLElement
}

const pause = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds))

describe('the texts the SDK shows', () => {
  let server: Server
  let folder: string

  beforeAll(async () => {
    ({ server, folder } = await startFolder({ fr: 300, nl: 300, es: 300, it: Infinity }))
  })
  afterAll(() => {
    server.closeAllConnections()
    server.close()
  })

  it("keeps the site's own texts over a translation that arrives after them, key by key", async () => {
    setStrings({ verified: 'Merci, c’est bon.' })
    const line = statusLine()
    loadStrings('fr', folder)
    writeText(line, 'fr', (strings) => `${strings.solving} / ${strings.verified}`)
    // The first text waits for its language rather than flashing English.
    expect(line.textContent).toBe('')
    await expect.poll(() => line.textContent).toBe(`${translations.fr.solving} / Merci, c’est bon.`)
    // For screen readers (WCAG 3.1.2): the text's language, not the page's.
    expect(line.lang).toBe('fr')
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
    writeText(line, 'it', (strings) => strings.timeout)
    await expect.poll(() => line.textContent, { timeout: 3_000 }).toBe(english.timeout)
    expect(Date.now() - asked).toBeGreaterThanOrEqual(1_400)
    expect(line.lang).toBe('en')
    expect(line.dir).toBe('ltr')
  })

  it('keeps a text cleared at once (a reset) over an earlier one still waiting for its language', async () => {
    const line = statusLine()
    loadStrings('nl', folder)
    writeText(line, 'nl', (strings) => strings.verifying)
    writeText(line, 'en', () => '')
    await expect.poll(() => getStrings('nl').verifying).toBe(translations.nl.verifying)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(line.textContent).toBe('')
  })

  it('stays in English when the language cannot be fetched, with a warning at most', async () => {
    const line = statusLine()
    loadStrings('ko', 'http://127.0.0.1:9/sdk/v1/')
    writeText(line, 'ko', (strings) => strings.failed)
    // Longer than the wait for a translation, in case the refusal itself is slow.
    await expect.poll(() => line.textContent, { timeout: 3_000 }).toBe(english.failed)
    expect(line.lang).toBe('en')
  })

  it("does not write a text that waited for its language over the page's own, written meanwhile", async () => {
    const line = statusLine()
    loadStrings('es', folder)
    writeText(line, 'es', (strings) => strings.failed)
    // A tollgate:error listener, which runs before the translation came, shows the site's words.
    line.textContent = 'Lo sentimos: llámenos.'
    await expect.poll(() => getStrings('es').failed).toBe(translations.es.failed)
    await pause(50)
    expect(line.textContent).toBe('Lo sentimos: llámenos.')
  })

  it('warns of an error answer (a folder without strings/) and fetches again on the next call, without waiting again', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    try {
      loadStrings('sv', `${folder}old-release/`)
      await expect.poll(() => warn.mock.calls.flat().join(' ')).toContain('no sv texts')
      expect(getStrings('sv').failed).toBe(english.failed)
      loadStrings('sv', folder)
      // The language was waited for once: the next text goes at once, in English until the translation comes.
      const line = statusLine()
      writeText(line, 'sv', (strings) => strings.failed)
      expect(line.textContent).toBe(english.failed)
      await expect.poll(() => getStrings('sv').failed).toBe(translations.sv.failed)
    } finally {
      warn.mockRestore()
    }
  })

  it('neither throws nor gives up for good when the page\'s fetch throws at once', async () => {
    const pageFetch = globalThis.fetch
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    try {
      globalThis.fetch = () => {
        throw new TypeError('blocked by the page')
      }
      expect(() => loadStrings('pl', folder)).not.toThrow()
      await expect.poll(() => warn.mock.calls.flat().join(' ')).toContain('no pl texts')
    } finally {
      globalThis.fetch = pageFetch
      warn.mockRestore()
    }
    loadStrings('pl', folder)
    await expect.poll(() => getStrings('pl').failed).toBe(translations.pl.failed)
  })

  it("labels the site's own texts with the language chosen and its direction, English only where English is shown", async () => {
    const arabic = 'عذرًا، لم نتمكن من التحقق من هذا الطلب.'
    setStrings({ blocked: arabic })
    try {
      // Before any Arabic translation came: the site's sentence is Arabic, written right to left...
      const site = statusLine()
      writeText(site, 'ar', (strings) => strings.blocked)
      expect({ text: site.textContent, lang: site.lang, dir: site.dir }).toEqual({ text: arabic, lang: 'ar', dir: 'rtl' })
      // ...and a sentence the site did not write falls back to English, left to right.
      const fallback = statusLine()
      writeText(fallback, 'ar', (strings) => strings.timeout)
      expect({ text: fallback.textContent, lang: fallback.lang, dir: fallback.dir }).toEqual({ text: english.timeout, lang: 'en', dir: 'ltr' })
      // The built-in translation, once it is there, is Arabic too; Hebrew and Persian are right to left, German left to right.
      for (const language of ['ar', 'he', 'fa', 'de'] as const) {
        loadStrings(language, folder)
        await expect.poll(() => getStrings(language).verifying).toBe(translations[language].verifying)
        const line = statusLine()
        writeText(line, language, (strings) => strings.verifying)
        expect({ text: line.textContent, lang: line.lang, dir: line.dir }, language).toEqual({ text: translations[language].verifying, lang: language, dir: language === 'de' ? 'ltr' : 'rtl' })
      }
    } finally {
      setStrings({ blocked: english.blocked })
    }
  })
})
