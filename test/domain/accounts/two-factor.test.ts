import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  hashRecoveryCode,
  matchingTotpStep,
  newRecoveryCodes,
  newTotpSecret,
  normalizeRecoveryCode,
  openSetup,
  openTotpSecret,
  otpauthUriOf,
  sealSetup,
  sealTotpSecret,
} from '../../../src/domain/accounts/two-factor.js'

// RFC 6238, appendix B: the SHA-1 key "12345678901234567890", in base32.
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'

describe('authenticator codes (TOTP)', () => {
  it("accepts RFC 6238's test vectors (their last six digits) in the step they belong to", () => {
    expect(matchingTotpStep(RFC_SECRET, '287082', 59_000)).toBe(1)
    expect(matchingTotpStep(RFC_SECRET, '081804', 1_111_111_109_000)).toBe(37_037_036)
    expect(matchingTotpStep(RFC_SECRET, '050471', 1_111_111_111_000)).toBe(37_037_037)
    expect(matchingTotpStep(RFC_SECRET, '005924', 1_234_567_890_000)).toBe(41_152_263)
  })

  it('accepts the steps either side of now (a phone a little fast or slow), no further, and a space in the middle', () => {
    const step = 41_152_263
    expect(matchingTotpStep(RFC_SECRET, '005924', (step + 1) * 30_000)).toBe(step)
    expect(matchingTotpStep(RFC_SECRET, '005 924', (step - 1) * 30_000)).toBe(step)
    expect(matchingTotpStep(RFC_SECRET, '005924', (step + 2) * 30_000)).toBeUndefined()
    expect(matchingTotpStep(RFC_SECRET, '005924', (step - 2) * 30_000 + 29_999)).toBeUndefined()
  })

  it('refuses what is not six digits, and another secret', () => {
    for (const code of ['05924', '0059245', 'abcdef', '', '005-924']) expect(matchingTotpStep(RFC_SECRET, code, 1_234_567_890_000), code).toBeUndefined()
    expect(matchingTotpStep(newTotpSecret(), '005924', 1_234_567_890_000)).toBeUndefined()
  })

  it('makes 160-bit secrets and the otpauth address the apps read', () => {
    const secret = newTotpSecret()
    expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    expect(newTotpSecret()).not.toBe(secret)
    expect(otpauthUriOf(secret, 'ada+ops@example.com')).toBe(
      `otpauth://totp/Tollgate:ada%2Bops%40example.com?issuer=Tollgate&secret=${secret}&algorithm=SHA1&digits=6&period=30`,
    )
  })
})

describe('recovery codes', () => {
  it('are ten distinct codes of three groups of four, without letters that read as others', () => {
    const codes = newRecoveryCodes()
    expect(codes).toHaveLength(10)
    expect(new Set(codes).size).toBe(10)
    for (const code of codes) {
      expect(code).toMatch(/^[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}$/)
      expect(code).not.toMatch(/[ilou]/)
      expect(normalizeRecoveryCode(code)).toBe(code.replace(/-/g, ''))
    }
  })

  it('are read in any case and spacing, with o, i and l taken for 0 and 1, and refused in any other shape', () => {
    expect(normalizeRecoveryCode(' K7M2 X9Q4-R3TZ ')).toBe('k7m2x9q4r3tz')
    expect(normalizeRecoveryCode('o1ol-iiii-2222')).toBe('010111112222')
    for (const entered of ['k7m2-x9q4-r3t', 'k7m2-x9q4-r3tzz', 'k7m2-x9q4-r3tu', '', '123456']) expect(normalizeRecoveryCode(entered), entered).toBeUndefined()
  })

  it('are stored as digests that differ per code', () => {
    expect(hashRecoveryCode('k7m2x9q4r3tz')).toMatch(/^[0-9a-f]{64}$/)
    expect(hashRecoveryCode('k7m2x9q4r3tz')).not.toBe(hashRecoveryCode('k7m2x9q4r3ty'))
  })
})

describe('sealed secrets and setups', () => {
  const key = randomBytes(32)

  it("seal the account's secret so that only that account's row opens it", () => {
    const sealed = sealTotpSecret(key, 'account-a', RFC_SECRET)
    expect(sealed).not.toContain(RFC_SECRET)
    expect(openTotpSecret(key, 'account-a', sealed)).toBe(RFC_SECRET)
    expect(() => openTotpSecret(key, 'account-b', sealed)).toThrow()
    expect(() => openTotpSecret(randomBytes(32), 'account-a', sealed)).toThrow()
  })

  it("open a setup of the same account within 15 minutes, and say why not otherwise", () => {
    const now = Date.now()
    const token = sealSetup(key, 'account-a', RFC_SECRET, now)
    expect(openSetup(key, 'account-a', token, now + 15 * 60_000)).toEqual({ secret: RFC_SECRET })
    expect(openSetup(key, 'account-a', token, now + 15 * 60_000 + 1)).toEqual({ problem: 'expired' })
    expect(openSetup(key, 'account-b', token, now)).toEqual({ problem: 'invalid' })
    expect(openSetup(key, 'account-a', 'not a token', now)).toEqual({ problem: 'invalid' })
    // A setup token is no authenticator secret's box, nor the other way round.
    expect(() => openTotpSecret(key, 'account-a', token)).toThrow()
    expect(openSetup(key, 'account-a', sealTotpSecret(key, 'account-a', RFC_SECRET), now)).toEqual({ problem: 'invalid' })
  })
})
