/**
 * The request path's HMAC-SHA256 (src/domain/mac.ts: JavaScript from the key's cached midstates
 * for short texts) against node:crypto's createHmac with the same KeyObject, measured in the same
 * run, on the texts the routes sign: a client's tag, a challenge's binding, a token's claims.
 * Each figure is the median of 7 interleaved rounds.
 *
 *   npx tsx bench/core/mac.ts
 */
import { createHmac, createSecretKey, randomBytes, randomUUID, type KeyObject } from 'node:crypto'
import { hmacSha256 } from '../../src/domain/mac.js'
import { MAX_TEXT_LENGTH } from '../../src/domain/keyed-sha256.js'
import { issueToken } from '../../src/domain/token/token.js'

const ROUNDS = 7
const CALLS_PER_ROUND = 200_000

/** A token's signed text as verify issues it (the part before its MAC). */
const token = issueToken(createSecretKey(randomBytes(32)), {
  siteId: randomUUID(),
  siteKey: `tg_pk_${randomBytes(16).toString('base64url')}`,
  challengeId: randomUUID(),
  action: 'allow',
  riskScore: 10,
  anomalies: ['webgl_missing'],
  hostname: 'shop.example.com',
  countryCode: 'FR',
  issuedAt: Date.now(),
  dataEpoch: null,
  pageAction: null,
  cData: null,
  ephemeralId: randomBytes(12).toString('hex'),
  address: null,
})
const signedToken = token.slice(0, token.lastIndexOf('.'))

const texts = {
  "a client's tag": 'client|203.0.113.77',
  "a challenge's binding": `${randomUUID()}|${randomUUID()}|18|${Date.now()}`,
  "a token's signed text": signedToken,
  'the longest text taken': 'x'.repeat(MAX_TEXT_LENGTH),
}

const openSsl = (key: KeyObject, text: string) => createHmac('sha256', key).update(text, 'utf8').digest()

/** Microseconds per call of `mac` over one round. */
function round(mac: (key: KeyObject, text: string) => Buffer, key: KeyObject, text: string): number {
  const start = process.hrtime.bigint()
  for (let call = 0; call < CALLS_PER_ROUND; call++) mac(key, text)
  return Number(process.hrtime.bigint() - start) / 1000 / CALLS_PER_ROUND
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const key = createSecretKey(randomBytes(32))
process.stdout.write(`HMAC-SHA256, ${new Date().toISOString()}, Node ${process.version}; µs per call, median of ${ROUNDS} rounds\n\n`)
process.stdout.write('| Text | Bytes | createHmac | hmacSha256 | Ratio |\n|---|---|---|---|---|\n')
for (const [name, text] of Object.entries(texts)) {
  if (!hmacSha256(key, text).equals(openSsl(key, text))) throw new Error(`hmacSha256 differs from createHmac on ${name}`)
  const baseline: number[] = []
  const ours: number[] = []
  round(openSsl, key, text)
  round(hmacSha256, key, text)
  for (let index = 0; index < ROUNDS; index++) {
    baseline.push(round(openSsl, key, text))
    ours.push(round(hmacSha256, key, text))
  }
  process.stdout.write(`| ${name} | ${Buffer.byteLength(text)} | ${median(baseline).toFixed(2)} | ${median(ours).toFixed(2)} | ${(median(ours) / median(baseline)).toFixed(2)}x |\n`)
}
