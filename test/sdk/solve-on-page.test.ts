import { createHash, randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createJsEngine } from '../../sdk/src/solver/js-engine.js'
import { solveGroups } from '../../sdk/src/solver/solve-groups.js'
import { solveOnPage } from '../../sdk/src/solve-on-page.js'
import { countLeadingZeroBits } from '../../src/domain/proof-of-work/count-leading-zero-bits.js'

const zeroBitsOf = (challenge: string, nonce: string) => countLeadingZeroBits(createHash('sha256').update(challenge + nonce, 'utf8').digest())

describe('the solve on the page itself (no worker could start)', () => {
  it('finds the nonce a single worker finds, in the JavaScript engine without a WebAssembly URL', async () => {
    const challenge = randomBytes(32).toString('hex')
    const solved = await solveOnPage({ challenge, difficulty: 12, wasmUrl: null, timeoutMs: 60_000 })
    expect(solved.engine).toBe('js')
    expect(zeroBitsOf(challenge, solved.nonce)).toBeGreaterThanOrEqual(12)
    const single = solveGroups(createJsEngine(), { challenge, difficulty: 12, firstGroup: 0, groupStep: 1 })
    expect(solved).toMatchObject({ nonce: single?.nonce, attempts: single?.attempts })
  })

  it('lets the page run between its slices: timers and the page\'s other tasks go on while it searches', async () => {
    const challenge = randomBytes(32).toString('hex')
    let ticks = 0
    const ticker = setInterval(() => ticks++, 1)
    let searchBegan = 0
    try {
      // 40 bits: beyond any search of half a second, whatever luck, so it searches until its time is out.
      const searching = solveOnPage({ challenge, difficulty: 40, wasmUrl: null, timeoutMs: 500, onSearch: () => searchBegan++ })
      await expect(searching).rejects.toMatchObject({ code: 'timeout' })
      // Slices of 8 ms over half a second: dozens of turns of the event loop, each running the due
      // timer. A search that held the thread throughout would let it run none.
      expect(ticks).toBeGreaterThanOrEqual(5)
    } finally {
      clearInterval(ticker)
    }
    expect(searchBegan).toBe(1)
  })

  it('stops when aborted or out of time, with the codes the workers stop with', async () => {
    const challenge = randomBytes(32).toString('hex')
    const controller = new AbortController()
    const aborted = solveOnPage({ challenge, difficulty: 40, wasmUrl: null, timeoutMs: 60_000, signal: controller.signal })
    setTimeout(() => controller.abort(), 50)
    await expect(aborted).rejects.toMatchObject({ code: 'aborted' })
    await expect(solveOnPage({ challenge, difficulty: 40, wasmUrl: null, timeoutMs: 100 })).rejects.toMatchObject({ code: 'timeout' })
  })
})
