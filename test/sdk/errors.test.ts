import { describe, expect, it } from 'vitest'
import { codeFromServer } from '../../sdk/src/errors.js'
import { getStrings, messageFor, setStrings } from '../../sdk/src/strings.js'
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

  it('follows the sentence of a turned-away visitor with the reference, in the words the page set', () => {
    expect(messageFor('blocked', '1a2b3c4d-5e6f')).toBe(`${getStrings().blocked} Reference: 1a2b3c4d-5e6f`)
    expect(messageFor('challenge_failed', '1a2b3c4d-5e6f')).toBe(`${getStrings().failed} Reference: 1a2b3c4d-5e6f`)
    expect(messageFor('blocked')).toBe(getStrings().blocked)
    const before = getStrings()
    try {
      setStrings({ blocked: 'Zugriff verweigert.', reference: '(Referenz {reference})' })
      expect(messageFor('blocked', '1a2b3c4d-5e6f')).toBe('Zugriff verweigert. (Referenz 1a2b3c4d-5e6f)')
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
      expect(messageFor('blocked', '1a2b3c4d-5e6f')).toBe('Diese Anfrage wurde blockiert. Reference: 1a2b3c4d-5e6f')
    } finally {
      setStrings(before)
    }
  })
})
