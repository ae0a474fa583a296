import { describe, expect, it } from 'vitest'
import { findPasswordProblem, hashPassword, isPasswordCorrect } from '../../../src/domain/accounts/password.js'
import { generateApiKey, hashToken, isApiKeyShaped, prefixOfApiKey } from '../../../src/domain/accounts/tokens.js'

describe('passwords', () => {
  it('hashes with Argon2id, salted, and verifies only the right password', async () => {
    const first = await hashPassword('correct horse battery staple')
    const second = await hashPassword('correct horse battery staple')
    expect(first).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    expect(first).not.toBe(second)
    expect(await isPasswordCorrect(first, 'correct horse battery staple')).toBe(true)
    expect(await isPasswordCorrect(first, 'correct horse battery stapler')).toBe(false)
  })

  it('answers false, after real work, when there is no stored hash', async () => {
    const started = performance.now()
    expect(await isPasswordCorrect(undefined, 'anything at all')).toBe(false)
    const withoutHash = performance.now() - started
    // An Argon2 verification with 19 MiB takes milliseconds; a shortcut would take microseconds.
    expect(withoutHash).toBeGreaterThan(2)
  })

  it('counts characters, not UTF-16 units: five emoji are too short, ten are enough, 256 astral characters are allowed', () => {
    expect(findPasswordProblem('🔑🐢🌋🎻🧭')).toBe('must be at least 10 characters')
    expect(findPasswordProblem('🔑🐢🌋🎻🧭🔑🐢🌋🎻🧭')).toBeUndefined()
    // No log-in form could type it.
    expect(findPasswordProblem('a password\nwith two lines')).toBe('must not contain line breaks or other control characters')
    expect(findPasswordProblem('tab\tseparated password')).toBe('must not contain line breaks or other control characters')
    expect(findPasswordProblem('𝔸'.repeat(256))).toBeUndefined()
    expect(findPasswordProblem('𝔸'.repeat(257))).toBe('must be at most 256 characters')
    expect(findPasswordProblem('short')).toBe('must be at least 10 characters')
  })

  it('answers false for a corrupt stored hash instead of throwing', async () => {
    expect(await isPasswordCorrect('not a hash', 'password')).toBe(false)
  })
})

describe('API keys and tokens', () => {
  it('makes recognisable keys with a short visible prefix', () => {
    const key = generateApiKey()
    expect(key).toMatch(/^tgak_[A-Za-z0-9_-]{43}$/)
    expect(isApiKeyShaped(key)).toBe(true)
    expect(isApiKeyShaped(`${key}x`)).toBe(false)
    expect(isApiKeyShaped('tgs_secret')).toBe(false)
    expect(prefixOfApiKey(key)).toBe(key.slice(0, 12))
    expect(generateApiKey()).not.toBe(key)
  })

  it('hashes tokens with SHA-256 (known answer)', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })
})
