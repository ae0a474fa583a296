import { describe, expect, it } from 'vitest'
import { codeFromServer } from '../../sdk/src/errors.js'
import { getStrings, messageFor, setStrings } from '../../sdk/src/strings.js'
import { translations } from '../../sdk/src/translations/index.js'
import type { TollgateStrings } from '../../sdk/tollgate.js'

describe('the SDK\'s reading of an error answer', () => {
  it.each<[unknown, number, string]>([
    ['rate_limited', 429, 'rate_limited'],
    // A proxy's own 429 page has no Tollgate error body: still a rate limit for the visitor.
    [undefined, 429, 'rate_limited'],
    ['origin_not_allowed', 403, 'origin_not_allowed'],
    [undefined, 502, 'server_error'],
    [undefined, 404, 'invalid_response'],
  ])('code %j with status %i is %s', (code, status, expected) => {
    expect(codeFromServer(code, status)).toBe(expected)
  })

  it('tells visitors that a form set up for another site, or for none, cannot be mended by trying again', () => {
    for (const code of ['invalid_site_key', 'origin_not_allowed', 'invalid_options'] as const) {
      expect(messageFor(code)).toBe(getStrings().misconfigured)
      expect(messageFor(code)).not.toMatch(/try again/i)
    }
    expect(messageFor('solution_invalid')).toBe(getStrings().failed)
  })

  // The reference is isolated (U+2068 ... U+2069): one piece, left to right, in a right-to-left sentence.
  it('follows the sentence of a turned-away visitor with the reference, in the words the page set', () => {
    expect(messageFor('blocked', '1a2b3c4d-5e6f')).toBe(`${getStrings().blocked} Reference: \u20681a2b3c4d-5e6f\u2069`)
    expect(messageFor('challenge_failed', '1a2b3c4d-5e6f')).toBe(`${getStrings().failed} Reference: \u20681a2b3c4d-5e6f\u2069`)
    expect(messageFor('blocked')).toBe(getStrings().blocked)
    const before = getStrings()
    try {
      setStrings({ blocked: 'Zugriff verweigert.', reference: '(Referenz {reference})' })
      expect(messageFor('blocked', '1a2b3c4d-5e6f')).toBe('Zugriff verweigert. (Referenz \u20681a2b3c4d-5e6f\u2069)')
    } finally {
      setStrings(before)
    }
  })

  it("keeps the English reference for a page's full translation written before the reference string existed (and its type still compiles)", () => {
    // All the strings of the SDK's first release, typed with the published declarations.
    const german: TollgateStrings = {
      solving: 'Browser wird geprüft…',
      verifying: 'Wird überprüft…',
      verified: 'Überprüft.',
      failed: 'Überprüfung fehlgeschlagen. Bitte erneut versuchen.',
      blocked: 'Diese Anfrage wurde blockiert.',
      unreachable: 'Der Überprüfungsdienst ist nicht erreichbar.',
      unavailable: 'Der Überprüfungsdienst ist kurz nicht verfügbar.',
      rateLimited: 'Zu viele Versuche.',
      unsupported: 'Die Überprüfung konnte in diesem Browser nicht starten.',
      timeout: 'Die Überprüfung hat zu lange gedauert.',
      misconfigured: 'Dieses Formular ist nicht für diese Seite eingerichtet.',
    }
    const before = getStrings()
    try {
      setStrings(german)
      expect(messageFor('blocked', '1a2b3c4d-5e6f')).toBe('Diese Anfrage wurde blockiert. Reference: \u20681a2b3c4d-5e6f\u2069')
    } finally {
      setStrings(before)
    }
  })

  it('joins the reference to a Japanese or Chinese sentence without a space after its full stop, and to an Arabic one with one', () => {
    expect(messageFor('blocked', '1a2b3c4d-5e6f', translations.ja)).toBe(`${translations.ja.blocked}参照ID：\u20681a2b3c4d-5e6f\u2069`)
    expect(messageFor('blocked', '1a2b3c4d-5e6f', translations.zh)).toMatch(/。[^ ]+\u20681a2b3c4d-5e6f\u2069$/)
    expect(messageFor('blocked', '1a2b3c4d-5e6f', translations.ar)).toBe(`${translations.ar.blocked} المرجع: \u20681a2b3c4d-5e6f\u2069`)
  })
})
