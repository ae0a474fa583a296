import { describe, expect, it } from 'vitest'
import { codeFromServer } from '../../sdk/src/errors.js'
import { getStrings, messageFor } from '../../sdk/src/strings.js'

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
})
