/**
 * What solving on the page itself costs against a worker's loop (sdk/src/solve-on-page.ts, where
 * no worker can start): the same challenges, at the same difficulty, in the JavaScript engine on
 * one thread, solved by solveGroups at once (a worker's loop) and by solveOnPage in slices with a
 * yield to the event loop between them, alternating. The ratio is the slices' hashes per second
 * against the loop's, measured in the same run.
 *
 *   npx tsx bench/solver/page-slices.ts [challenges, 20 by default] [difficulty, 17 by default]
 */
import { randomBytes } from 'node:crypto'
import { createJsEngine } from '../../sdk/src/solver/js-engine.js'
import { solveGroups } from '../../sdk/src/solver/solve-groups.js'
import { solveOnPage } from '../../sdk/src/solve-on-page.js'

const challenges = Number(process.argv[2] ?? 20)
const difficulty = Number(process.argv[3] ?? 17)

const totals = { loop: { attempts: 0, ms: 0 }, page: { attempts: 0, ms: 0 } }
for (let index = 0; index < challenges; index++) {
  const challenge = randomBytes(32).toString('hex')
  let started = performance.now()
  const looped = solveGroups(createJsEngine(), { challenge, difficulty, firstGroup: 0, groupStep: 1 })
  if (looped === undefined) throw new Error('no nonce found')
  totals.loop.ms += performance.now() - started
  totals.loop.attempts += looped.attempts
  started = performance.now()
  const sliced = await solveOnPage({ challenge, difficulty, wasmUrl: null, timeoutMs: 600_000 })
  totals.page.ms += performance.now() - started
  totals.page.attempts += sliced.attempts
}
const rate = ({ attempts, ms }: { attempts: number; ms: number }) => attempts / ms / 1_000
console.log(`${challenges} challenges at ${difficulty} bits, JavaScript engine, one thread:`)
console.log(`  a worker's loop (solveGroups): ${rate(totals.loop).toFixed(2)} M hashes/s`)
console.log(`  on the page, in slices (solveOnPage): ${rate(totals.page).toFixed(2)} M hashes/s (${(rate(totals.page) / rate(totals.loop)).toFixed(2)}x)`)
