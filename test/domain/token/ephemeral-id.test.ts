import { describe, expect, it } from 'vitest'
import { EPHEMERAL_ID_PERIOD_MS, ephemeralIdOf } from '../../../src/domain/token/ephemeral-id.js'

const key = Buffer.alloc(32, 7)
const site = '9b2d8c1e-5f3a-4c6d-8e7f-0a1b2c3d4e5f'
const otherSite = '0f6e2a4b-1c3d-4e5f-8a9b-0c1d2e3f4a5b'
const device = 'Qm9va3NoZWxmLWRldmljZS0x'
// Monday 2026-11-23 00:00 UTC.
const monday = Date.UTC(2026, 10, 23)

describe("a device's ephemeral id", () => {
  it('is 24 hexadecimal digits, the same for one device on one site all week', () => {
    const id = ephemeralIdOf(key, site, device, monday)
    expect(id).toMatch(/^[0-9a-f]{24}$/)
    expect(ephemeralIdOf(key, site, device, monday + EPHEMERAL_ID_PERIOD_MS - 1)).toBe(id)
  })

  it('is the first 12 bytes of HMAC-SHA256 over "<site>.<week>.<device>", weeks counted from Monday 1970-01-05 (a known answer)', () => {
    // Computed apart (Python's hmac): week 2968 began on Monday 2026-11-23.
    expect(ephemeralIdOf(key, site, device, monday)).toBe('de4cdc2bb4031fec2efc7d27')
  })

  it('changes at Monday 00:00 UTC', () => {
    expect(new Date(monday).getUTCDay()).toBe(1)
    expect(ephemeralIdOf(key, site, device, monday - 1)).not.toBe(ephemeralIdOf(key, site, device, monday))
    expect(ephemeralIdOf(key, site, device, monday + EPHEMERAL_ID_PERIOD_MS)).not.toBe(ephemeralIdOf(key, site, device, monday))
  })

  it('differs between devices, between sites, and under another server key', () => {
    const id = ephemeralIdOf(key, site, device, monday)
    expect(ephemeralIdOf(key, site, `${device}x`, monday)).not.toBe(id)
    expect(ephemeralIdOf(key, otherSite, device, monday)).not.toBe(id)
    expect(ephemeralIdOf(Buffer.alloc(32, 8), site, device, monday)).not.toBe(id)
  })
})
