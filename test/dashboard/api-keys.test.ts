import { describe, expect, it } from 'vitest'
import { accessLabel, expiresAtOf, expiryChoices } from '../../dashboard/src/lib/api-keys.js'

const now = new Date('2026-11-29T03:28:34.000Z')

describe("the API keys page's terms of a new key", () => {
  it('count an expiry in days from the moment of the submission, and never as null', () => {
    expect(expiresAtOf('7d', now)).toBe('2026-12-06T03:28:34.000Z')
    expect(expiresAtOf('30d', now)).toBe('2026-12-29T03:28:34.000Z')
    expect(expiresAtOf('90d', now)).toBe('2027-02-27T03:28:34.000Z')
    expect(expiresAtOf('1y', now)).toBe('2027-11-29T03:28:34.000Z')
    expect(expiresAtOf('never', now)).toBeNull()
    expect(expiryChoices.map((choice) => choice.label)).toEqual(['In 7 days', 'In 30 days', 'In 90 days', 'In 1 year', 'Never'])
  })

  it('name each access as the list shows it', () => {
    expect(accessLabel('full')).toBe('Full access')
    expect(accessLabel('read')).toBe('Read only')
  })
})
