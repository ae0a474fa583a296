import { describe, expect, it } from 'vitest'
import { ARGON2_PARAMETERS, findPasswordProblem, hashPassword, isPasswordCorrect } from '../../../src/domain/accounts/password.js'
import { generateApiKey, hashToken, isApiKeyShaped, prefixOfApiKey } from '../../../src/domain/accounts/tokens.js'

const OWNER = 'river.song@example.com'

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
    expect(findPasswordProblem('🔑🐢🌋🎻🧭', OWNER)).toBe('must be at least 10 characters')
    expect(findPasswordProblem('🔑🐢🌋🎻🧭🔑🐢🌋🎻🧭', OWNER)).toBeUndefined()
    // No log-in form could type it.
    expect(findPasswordProblem('a password\nwith two lines', OWNER)).toBe('must not contain line breaks or other control characters')
    expect(findPasswordProblem('tab\tseparated password', OWNER)).toBe('must not contain line breaks or other control characters')
    expect(findPasswordProblem('𝔸𝔹'.repeat(128), OWNER)).toBeUndefined()
    expect(findPasswordProblem(`${'𝔸𝔹'.repeat(128)}𝔸`, OWNER)).toBe('must be at most 256 characters')
    expect(findPasswordProblem('short', OWNER)).toBe('must be at least 10 characters')
  })

  it('hashes with the Argon2id parameters named in the code (19 MiB, 2 passes, 1 lane), whatever the library defaults to', async () => {
    expect(ARGON2_PARAMETERS).toEqual({ algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 })
    expect(await hashPassword('correct horse battery staple')).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
  })

  it('refuses common passwords whatever their letter case, one character repeated, and the account\'s address or its local part (NIST SP 800-63B)', () => {
    const tooCommon = "is too common: it is among the passwords guessed first (a few unrelated words, or a password manager's, are not)"
    for (const common of ['1234567890', 'password123', 'PassWord123', 'qwertyuiop', 'iloveyou12']) expect(findPasswordProblem(common, OWNER), common).toBe(tooCommon)
    expect(findPasswordProblem('aaaaaaaaaa', OWNER)).toBe('must not be one character repeated')
    expect(findPasswordProblem('🔑'.repeat(12), OWNER)).toBe('must not be one character repeated')
    const containsAddress = 'must not contain your e-mail address or the part before its @'
    expect(findPasswordProblem('river.song@example.com', OWNER)).toBe(containsAddress)
    expect(findPasswordProblem('my RIVER.SONG@example.com!', OWNER)).toBe(containsAddress)
    expect(findPasswordProblem('hello river.song 42', OWNER)).toBe(containsAddress)
    // A local part of fewer than four characters is too short to mean anything on its own.
    expect(findPasswordProblem('bob is a fine builder', 'bob@example.com')).toBeUndefined()
    expect(findPasswordProblem('bob@example.com', 'bob@example.com')).toBe(containsAddress)
    // Not common, not repeated, not the address: accepted.
    expect(findPasswordProblem('correct horse battery staple', OWNER)).toBeUndefined()
    expect(findPasswordProblem('aaaaaaaaab', OWNER)).toBeUndefined()
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
