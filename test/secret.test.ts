import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createKeyRing } from '../src/secret.js'

const secret = 'a-test-secret-of-at-least-thirty-two-characters'

describe('createKeyRing', () => {
  it('derives a distinct 32-byte key per purpose, the same for the same secret', () => {
    const ring = createKeyRing(secret)
    const challenge = ring.keyFor('challenge')
    expect(challenge).toHaveLength(32)
    expect(ring.keyFor('token').equals(challenge)).toBe(false)
    expect(createKeyRing(secret).keyFor('challenge').equals(challenge)).toBe(true)
    expect(createKeyRing(`${secret}!`).keyFor('challenge').equals(challenge)).toBe(false)
  })

  it('gives the MAC key of a purpose as a KeyObject of the same bytes', () => {
    const ring = createKeyRing(secret)
    const macKey = ring.macKeyFor('token')
    expect(macKey.type).toBe('secret')
    expect(macKey.export().equals(ring.keyFor('token'))).toBe(true)
    expect(createHmac('sha256', macKey).update('text').digest('hex')).toBe(createHmac('sha256', ring.keyFor('token')).update('text').digest('hex'))
    expect(ring.macKeyFor('token')).toBe(macKey)
  })
})
