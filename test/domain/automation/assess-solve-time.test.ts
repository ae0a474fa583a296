import { describe, expect, it } from 'vitest'
import { assessSolveTime } from '../../../src/domain/automation/assess-solve-time.js'

/** A nonce in the SDK layout found by a worker in lane group `group`. */
function sdkNonce(group: number, lane = 0, suffix = 1234): string {
  return `${100_000_000_000 + group * 4 + lane}${String(suffix).padStart(4, '0')}`
}

describe('assessSolveTime', () => {
  it('accepts an SDK solve at browser speed', () => {
    // Group 400 with 8 workers: the finding worker scanned 50 groups (2,000,000 hashes) in 400 ms.
    expect(assessSolveTime({ difficulty: 20, nonce: sdkNonce(400), claimedSolveTimeMs: 400, observedMs: 3_000 })).toEqual([])
  })

  it('flags an SDK-layout nonce whose proven work is beyond a browser worker in the time taken', () => {
    // Group 80,000: the finding worker scanned at least 10,000 groups = 400 million hashes, in 200 ms.
    expect(assessSolveTime({ difficulty: 28, nonce: sdkNonce(80_000), claimedSolveTimeMs: 200, observedMs: 250 })).toEqual(['solve_too_fast'])
    // The same work in 30 s is browser speed.
    expect(assessSolveTime({ difficulty: 28, nonce: sdkNonce(80_000), claimedSolveTimeMs: 30_000, observedMs: 31_000 })).toEqual([])
  })

  it('bounds a claimed time by the observed time', () => {
    // Claims 60 s but the server saw 200 ms: too fast for the work done, whatever the claim.
    expect(assessSolveTime({ difficulty: 28, nonce: sdkNonce(80_000), claimedSolveTimeMs: 60_000, observedMs: 200 })).toEqual(['solve_too_fast'])
  })

  it('flags a nonce outside the SDK layout as foreign_solver', () => {
    expect(assessSolveTime({ difficulty: 18, nonce: '431877', claimedSolveTimeMs: 40, observedMs: 60 })).toEqual(['foreign_solver'])
    expect(assessSolveTime({ difficulty: 18, nonce: '9123456789012345', claimedSolveTimeMs: 40, observedMs: 60 })).toEqual(['foreign_solver'])
  })

  it('flags a foreign solve that would have needed one-in-ten-thousand luck from the fastest browser', () => {
    // 2^40 expected hashes in 5 ms: a browser at 800 MH/s does 4 million, a 4e-6 chance.
    expect(assessSolveTime({ difficulty: 40, nonce: '12345', claimedSolveTimeMs: 5, observedMs: 30 })).toEqual(['foreign_solver', 'solve_too_fast'])
    expect(assessSolveTime({ difficulty: 20, nonce: '12345', claimedSolveTimeMs: 5, observedMs: 30 })).toEqual(['foreign_solver'])
  })
})
