import { describe, expect, it } from 'vitest'
import { chooseContentEncoding, type ContentEncoding } from '../../../src/routes/assets/accept-encoding.js'

const both: readonly ContentEncoding[] = ['br', 'gzip']

/** Accept-Encoding (undefined: the header left out), what the file comes in, and what is sent. */
type Case = [acceptEncoding: string | undefined, available: readonly ContentEncoding[], sent: ContentEncoding | 'identity']

const cases: Record<string, Case[]> = {
  'sends the plain file to a request that accepts no coding, or says nothing': [
    [undefined, both, 'identity'],
    ['', both, 'identity'],
    ['identity', both, 'identity'],
    ['deflate, zstd', both, 'identity'],
  ],
  'prefers Brotli to gzip at equal weight, whatever their order in the header': [
    ['gzip, deflate, br, zstd', both, 'br'],
    ['gzip;q=0.8, br;q=0.8', both, 'br'],
    ['br', both, 'br'],
    ['gzip', both, 'gzip'],
    ['GZIP', both, 'gzip'],
    ['x-gzip', both, 'gzip'],
  ],
  'refuses a coding named with q=0, and takes the higher weight': [
    ['br;q=0, gzip', both, 'gzip'],
    ['br ; q=0.000 , gzip;q=0.1', both, 'gzip'],
    ['br;q=0, gzip;q=0', both, 'identity'],
    ['br;q=0.5, gzip', both, 'gzip'],
    ['br;q=1.0, gzip;q=0.999', both, 'br'],
    ['br;Q=0, gzip', both, 'gzip'],
    ['br;q = 0, gzip', both, 'gzip'],
  ],
  'reads * as every coding the header does not name, and identity by its weight': [
    ['*', both, 'br'],
    ['br;q=0, *', both, 'gzip'],
    ['gzip, *;q=0', both, 'gzip'],
    ['*;q=0', both, 'identity'],
    ['gzip;q=0.5, identity', both, 'identity'],
    ['gzip, identity;q=0.5', both, 'gzip'],
    ['gzip, identity', both, 'gzip'],
  ],
  'offers only the encodings the file has': [
    ['br, gzip', ['gzip'], 'gzip'],
    ['br', ['gzip'], 'identity'],
    ['br, gzip', [], 'identity'],
  ],
  'skips an element whose weight is not a number from 0 to 1, and reads no more than a browser sends': [
    ['br;q=abc, gzip', both, 'gzip'],
    ['br;q=2, gzip;q=0.5', both, 'gzip'],
    ['br;q=1.5, gzip;q=0.5', both, 'gzip'],
    ['br;q=0.0001, gzip;q=0', both, 'identity'],
    ['br;q=-1', both, 'identity'],
    ['br;level=5;q=0.9, gzip;q=0.5', both, 'br'],
    [',,;q=1, ;, br', both, 'br'],
    [`${'x,'.repeat(10_000)}br`, both, 'identity'],
  ],
}

describe('chooseContentEncoding', () => {
  it.each(Object.entries(cases))('%s', (_rule, ruleCases) => {
    for (const [acceptEncoding, available, sent] of ruleCases) {
      expect(chooseContentEncoding(acceptEncoding, available), `${String(acceptEncoding).slice(0, 60)} of ${available.join(', ')}`).toBe(sent)
    }
  })
})
