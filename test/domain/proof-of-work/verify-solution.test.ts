import { describe, expect, it } from 'vitest'
import { isNonceText } from '../../../src/domain/proof-of-work/nonce.js'
import { solveChallenge } from '../../../src/domain/proof-of-work/solve-challenge.js'
import { hashSolution, verifySolution } from '../../../src/domain/proof-of-work/verify-solution.js'

// Known answers computed independently with Python's hashlib: the smallest nonce n such that
// SHA-256(challenge + str(n)) has at least `difficulty` leading zero bits.
const zeros = '0'.repeat(64)
const knownAnswers = [
  { challenge: zeros, difficulty: 8, nonce: '55', hash: '00e9cabf5e88f37827bf3352686eae590533d41f5cc32b6a4d07c0e4b8855fa2' },
  { challenge: zeros, difficulty: 12, nonce: '2124', hash: '0009c0e785df31c7372c7dbb5b12cdc684116ef0cd3439d745623ecf367d94ed' },
  { challenge: zeros, difficulty: 16, nonce: '20303', hash: '000089fdc74b16a6ba1cd6b1b45ebb2090debbb7487cc8f354a382f9c4f2b9fd' },
  { challenge: 'a'.repeat(64), difficulty: 10, nonce: '251', hash: '002d4e1d598a6a27b3e840f8478415316ba7f1e79d2222aafa58fa9c892b9888' },
]

describe('verifySolution', () => {
  it.each(knownAnswers)('accepts the known nonce $nonce at difficulty $difficulty', ({ challenge, difficulty, nonce, hash }) => {
    expect(hashSolution(challenge, nonce).toString('hex')).toBe(hash)
    expect(verifySolution({ challenge, difficulty }, nonce)).toBe(true)
  })

  it.each(knownAnswers)('judges $nonce by the exact zero-bit count of its hash', ({ challenge, difficulty, nonce, hash }) => {
    const zeroBits = BigInt(`0x${hash}`).toString(2).padStart(256, '0').indexOf('1')
    expect(verifySolution({ challenge, difficulty: zeroBits + 1 }, nonce)).toBe(false)
    expect(verifySolution({ challenge, difficulty: zeroBits }, nonce)).toBe(true)
    expect(zeroBits).toBeGreaterThanOrEqual(difficulty)
  })

  it('the reference solver finds the smallest solving nonce', () => {
    for (const { challenge, difficulty, nonce } of knownAnswers) expect(solveChallenge({ challenge, difficulty })).toBe(nonce)
  })

  it('refuses a nonce that does not solve', () => {
    expect(verifySolution({ challenge: zeros, difficulty: 8 }, '54')).toBe(false)
  })

  it('refuses badly formatted nonces even when their hash would pass', () => {
    // '055' hashes differently from '55', but format is checked before any hashing.
    expect(verifySolution({ challenge: zeros, difficulty: 0 }, '055')).toBe(false)
    expect(verifySolution({ challenge: zeros, difficulty: 0 }, '')).toBe(false)
  })
})

describe('isNonceText', () => {
  it.each(['0', '1', '55', '9007199254740991', '1234567890123456'.slice(0, 15)])('accepts %s', (nonce) => {
    expect(isNonceText(nonce)).toBe(true)
  })

  it.each(['', 'abc', '-1', '01', '00', '1.5', '1e3', ' 1', '+1', '9007199254740992', '12345678901234567890', '0x10'])(
    'refuses %j',
    (nonce) => {
      expect(isNonceText(nonce)).toBe(false)
    },
  )
})
