import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { issueToken, MAX_TOKEN_LENGTH, readToken, TOKEN_LIFETIME_MS, type TokenClaims } from '../../../src/domain/token/token.js'

const key = Buffer.alloc(32, 3)
const claims: TokenClaims = {
  siteId: '9b2d8c1e-5f3a-4c6d-8e7f-0a1b2c3d4e5f',
  siteKey: 'tgk_AbCdEfGhIjKlMnOpQrStUv',
  challengeId: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  action: 'allow',
  riskScore: 25,
  anomalies: ['missing_accept_language', 'no_interaction'],
  hostname: 'shop.example.com',
  countryCode: 'XX',
  issuedAt: 1_767_225_600_000,
  dataEpoch: null,
  pageAction: null,
  cData: null,
  ephemeralId: null,
  address: null,
}
const base64urlAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

describe('tokens', () => {
  it('carry their claims and are valid for 300 s', () => {
    const token = issueToken(key, claims)
    expect(readToken(key, token, claims.issuedAt)).toEqual({ outcome: 'valid', claims, expiresAt: claims.issuedAt + 300_000 })
    expect(readToken(key, token, claims.issuedAt + TOKEN_LIFETIME_MS - 1).outcome).toBe('valid')
    expect(readToken(key, token, claims.issuedAt + TOKEN_LIFETIME_MS)).toMatchObject({ outcome: 'expired', claims })
  })

  it('are compact: version, payload and MAC in base64url, well under 400 characters', () => {
    const token = issueToken(key, claims)
    expect(token).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
    expect(token.length).toBeLessThan(400)
  })

  it("carry the page's action and data when it gave them, and are no longer when it gave none", () => {
    const withPage = { ...claims, pageAction: 'login', cData: 'session-42' }
    const token = issueToken(key, withPage)
    expect(readToken(key, token, claims.issuedAt)).toEqual({ outcome: 'valid', claims: withPage, expiresAt: claims.issuedAt + 300_000 })
    expect(readToken(key, issueToken(key, { ...claims, cData: 'x' }), claims.issuedAt)).toMatchObject({ claims: { pageAction: null, cData: 'x' } })
    const [, payload = ''] = issueToken(key, claims).split('.')
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))).toHaveLength(9)
  })

  it("carry the device's ephemeral id, with or without the page's action and data, and read a token issued before ids existed", () => {
    for (const page of [{}, { pageAction: 'login', cData: 'session-42' }]) {
      const withId = { ...claims, ...page, ephemeralId: '0123456789abcdef01234567' }
      const token = issueToken(key, withId)
      expect(readToken(key, token, claims.issuedAt)).toEqual({ outcome: 'valid', claims: withId, expiresAt: claims.issuedAt + 300_000 })
      const [, payload = ''] = token.split('.')
      expect(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))).toHaveLength(12)
    }
    expect(issueToken(key, { ...claims, ephemeralId: '0123456789abcdef01234567' }).length).toBeLessThan(400)
    // Tokens signed with this key, of claims given as they travel.
    const signedWith = (values: unknown[]) => {
      const text = `v1.${Buffer.from(JSON.stringify(values), 'utf8').toString('base64url')}`
      return `${text}.${createHmac('sha256', key).update(text).digest('base64url')}`
    }
    const [site, siteKey, challenge] = JSON.parse(Buffer.from(issueToken(key, claims).split('.')[1] ?? '', 'base64url').toString('utf8')) as string[]
    const head = [site, siteKey, challenge, 'allow', 25, [], null, 'XX', claims.issuedAt]
    // A token of the format before (11 claims, the page's action and data last) still redeems.
    expect(readToken(key, signedWith([...head, 'login', null]), claims.issuedAt)).toMatchObject({ outcome: 'valid', claims: { pageAction: 'login', ephemeralId: null } })
    expect(readToken(key, signedWith([...head, 'login', null, '0123456789abcdef01234567']), claims.issuedAt).outcome).toBe('valid')
    // Signed, but of no format this service writes: ten claims, or a twelfth that is not text.
    expect(readToken(key, signedWith([...head, 'login']), claims.issuedAt)).toEqual({ outcome: 'invalid' })
    expect(readToken(key, signedWith([...head, 'login', null, 42]), claims.issuedAt)).toEqual({ outcome: 'invalid' })
    expect(readToken(key, signedWith([...head, 'login', null, null, 42]), claims.issuedAt)).toEqual({ outcome: 'invalid' })
    expect(readToken(key, signedWith([...head, 'login', null, null, '4AbCdEfGh', 'x']), claims.issuedAt)).toEqual({ outcome: 'invalid' })
  })

  it("carry the store's data epoch when the issuer knew it, with every other claim, and read the formats without it", () => {
    for (const rest of [{}, { pageAction: 'login', cData: 'session-42' }, { ephemeralId: '0123456789abcdef01234567' }, { pageAction: 'login', cData: null, ephemeralId: '0123456789abcdef01234567' }]) {
      const withEpoch = { ...claims, ...rest, dataEpoch: 1_767_225_540_123 }
      expect(readToken(key, issueToken(key, withEpoch), claims.issuedAt)).toEqual({ outcome: 'valid', claims: withEpoch, expiresAt: claims.issuedAt + 300_000 })
      const withoutEpoch = { ...withEpoch, dataEpoch: null }
      expect(readToken(key, issueToken(key, withoutEpoch), claims.issuedAt)).toEqual({ outcome: 'valid', claims: withoutEpoch, expiresAt: claims.issuedAt + 300_000 })
    }
    const [, payload = ''] = issueToken(key, { ...claims, dataEpoch: 1_767_225_540_123 }).split('.')
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))).toHaveLength(10)
  })

  it('carry where they were earned when the site checks addresses, with or without a device, the page and the epoch', () => {
    for (const rest of [{}, { ephemeralId: '0123456789abcdef01234567' }, { pageAction: 'login', cData: 'session-42', dataEpoch: 1_767_225_540_123 }]) {
      const withAddress = { ...claims, ...rest, address: '4AbCdEfGh' }
      const token = issueToken(key, withAddress)
      expect(readToken(key, token, claims.issuedAt)).toEqual({ outcome: 'valid', claims: withAddress, expiresAt: claims.issuedAt + 300_000 })
      expect(token.length).toBeLessThan(400)
    }
    const [, payload = ''] = issueToken(key, { ...claims, address: '6AbCdEfGh' }).split('.')
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))).toEqual(expect.arrayContaining([null, '6AbCdEfGh']))
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))).toHaveLength(13)
    // Without an address, a token is as long as before.
    expect(issueToken(key, { ...claims, address: null })).toBe(issueToken(key, claims))
  })

  it('keep a null hostname', () => {
    const token = issueToken(key, { ...claims, hostname: null })
    expect(readToken(key, token, claims.issuedAt)).toMatchObject({ outcome: 'valid', claims: { hostname: null } })
  })

  it('become invalid when any single character changes', () => {
    const token = issueToken(key, claims)
    for (let index = 0; index < token.length; index++) {
      const original = token[index] ?? ''
      // Two replacements per position: the next letter of the alphabet, and one that differs only
      // in the low bits (what a lenient base64 decoder would ignore in the last character).
      const position = base64urlAlphabet.indexOf(original)
      const replacements = position === -1 ? ['x', '1'] : [base64urlAlphabet[(position + 1) % 64], base64urlAlphabet[position ^ 1]]
      for (const replacement of replacements) {
        const tampered = token.slice(0, index) + replacement + token.slice(index + 1)
        if (tampered === token) continue
        expect(readToken(key, tampered, claims.issuedAt), `changed character ${index}`).toEqual({ outcome: 'invalid' })
      }
    }
  })

  it('are invalid when truncated, extended, re-signed with another key or of another version', () => {
    const token = issueToken(key, claims)
    expect(readToken(key, token.slice(0, -1), claims.issuedAt).outcome).toBe('invalid')
    expect(readToken(key, `${token}A`, claims.issuedAt).outcome).toBe('invalid')
    expect(readToken(key, issueToken(Buffer.alloc(32, 4), claims), claims.issuedAt).outcome).toBe('invalid')
    expect(readToken(key, token.replace(/^v1\./, 'v2.'), claims.issuedAt).outcome).toBe('invalid')
    expect(readToken(key, '', claims.issuedAt).outcome).toBe('invalid')
    expect(readToken(key, 'XXXX.DUMMY.TOKEN.XXXX', claims.issuedAt).outcome).toBe('invalid')
    expect(readToken(key, `v1.${'A'.repeat(MAX_TOKEN_LENGTH)}.${'A'.repeat(43)}`, claims.issuedAt).outcome).toBe('invalid')
  })

  it('with a valid MAC but a payload of another shape are invalid', async () => {
    const { createHmac } = await import('node:crypto')
    const payload = Buffer.from(JSON.stringify({ siteId: claims.siteId })).toString('base64url')
    const mac = createHmac('sha256', key).update(`v1.${payload}`).digest('base64url')
    expect(readToken(key, `v1.${payload}.${mac}`, claims.issuedAt).outcome).toBe('invalid')
  })
})
