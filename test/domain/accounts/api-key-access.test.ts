import { describe, expect, it } from 'vitest'
import { isMethodAllowed, resolveApiKeyExpiry } from '../../../src/domain/accounts/api-key-access.js'

describe('isMethodAllowed', () => {
  it('lets a full key make any request, a read key only GET and HEAD', () => {
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) expect(isMethodAllowed('full', method)).toBe(true)
    expect(['GET', 'HEAD', 'get', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter((method) => isMethodAllowed('read', method))).toEqual(['GET', 'HEAD', 'get'])
  })
})

describe('resolveApiKeyExpiry', () => {
  const now = new Date('2026-06-01T12:00:00.000Z')

  it('is never without a time, and the instant named in any time zone', () => {
    expect(resolveApiKeyExpiry(undefined, now)).toEqual({ expiresAt: null })
    expect(resolveApiKeyExpiry(null, now)).toEqual({ expiresAt: null })
    expect(resolveApiKeyExpiry('2026-06-01T14:00:00.001+02:00', now)).toEqual({ expiresAt: new Date('2026-06-01T12:00:00.001Z') })
    expect(resolveApiKeyExpiry('9999-12-31T23:59:59.999Z', now)).toEqual({ expiresAt: new Date('9999-12-31T23:59:59.999Z') })
  })

  it('refuses a time that is not in the future, past the year 9999, or that Date cannot read', () => {
    expect(resolveApiKeyExpiry('2026-06-01T12:00:00.000Z', now)).toEqual({ problem: 'must be in the future' })
    expect(resolveApiKeyExpiry('2026-06-01T13:59:59+02:00', now)).toEqual({ problem: 'must be in the future' })
    expect(resolveApiKeyExpiry('9999-12-31T23:00:00-05:00', now)).toEqual({ problem: 'must be before the year 10000' })
    expect(resolveApiKeyExpiry('2030-01-01T00:00:00+02', now)).toEqual({ problem: 'must be an ISO 8601 date-time, such as 2027-01-01T00:00:00Z' })
    for (const text of ['2030-06-30T23:59:60Z', '2030-06-30 23:59:60.5+00:00']) {
      expect(resolveApiKeyExpiry(text, now)).toEqual({ problem: 'must not be a leap second (:60), which is not supported: give :59.999 or the next minute' })
    }
  })
})
