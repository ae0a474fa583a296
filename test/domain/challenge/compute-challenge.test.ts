import { createSecretKey } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { computeChallenge } from '../../../src/domain/challenge/compute-challenge.js'

const key = Buffer.from(Array.from({ length: 32 }, (_, index) => index))
const binding = {
  challengeId: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
  siteId: '9b2d8c1e-0000-4000-8000-000000000001',
  difficulty: 18,
  expiresAt: 1_767_225_600_000,
}

describe('computeChallenge', () => {
  it('is HMAC-SHA256 of id|site|difficulty|expiresAt as lowercase hex (known answer from Python hmac)', () => {
    expect(computeChallenge(key, binding)).toBe('36cb2be491fd4eeaf0c8ba6338858807d27791f43e0063bd4600e665e49d8551')
  })

  it('gives the same answer for the key as a KeyObject (as the request path passes it)', () => {
    expect(computeChallenge(createSecretKey(key), binding)).toBe('36cb2be491fd4eeaf0c8ba6338858807d27791f43e0063bd4600e665e49d8551')
  })

  it('changes with every bound field and with the key', () => {
    const original = computeChallenge(key, binding)
    expect(computeChallenge(key, { ...binding, challengeId: '3f2504e0-4f89-41d3-9a0c-0305e82c3302' })).not.toBe(original)
    expect(computeChallenge(key, { ...binding, siteId: '9b2d8c1e-0000-4000-8000-000000000002' })).not.toBe(original)
    expect(computeChallenge(key, { ...binding, difficulty: 19 })).not.toBe(original)
    expect(computeChallenge(key, { ...binding, expiresAt: binding.expiresAt + 1 })).not.toBe(original)
    expect(computeChallenge(Buffer.alloc(32, 7), binding)).not.toBe(original)
  })
})
