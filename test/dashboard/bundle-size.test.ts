import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import { buildDashboard } from '../e2e/dashboard-support.js'

const assets = fileURLToPath(new URL('../../dist/dashboard/', import.meta.url))

/** The README's Dashboard section: "about N kB of script gzipped (M kB Brotli; ... under B kB gzipped)". */
function documentedSizes(readme: string): { gzip: number; brotli: number; bound: number } {
  const found = /about (\d+) kB of\s+script gzipped \((\d+) kB Brotli; `test\/dashboard\/bundle-size\.test\.ts` keeps it under (\d+) kB gzipped\)/.exec(readme)
  if (found === null) throw new Error("the README's Dashboard section no longer states the script's size")
  return { gzip: Number(found[1]), brotli: Number(found[2]), bound: Number(found[3]) }
}

/** The bytes of the pre-compressed files the server sends for the page's own script. */
async function servedScriptSizes(): Promise<{ gzip: number; brotli: number }> {
  const index = await readFile(`${assets}index.html`, 'utf8')
  const script = /<script type="module"[^>]* src="\/dashboard\/(assets\/[^"]+\.js)"/.exec(index)?.[1]
  if (script === undefined) throw new Error('the built index.html loads no script')
  const [gzip, brotli] = await Promise.all([readFile(`${assets}${script}.gz`), readFile(`${assets}${script}.br`)])
  return { gzip: gzip.length, brotli: brotli.length }
}

describe("the dashboard's script, as the README states its size", () => {
  beforeAll(buildDashboard, 300_000)

  it('stays under the bound the README states, gzipped, and near the figures it quotes', async () => {
    const documented = documentedSizes(await readFile('README.md', 'utf8'))
    const served = await servedScriptSizes()

    expect(served.gzip).toBeLessThan(documented.bound * 1000)
    // "about N kB": within 5 kB of what is built, or the README misleads whoever sizes a deployment by it.
    expect(Math.abs(served.gzip / 1000 - documented.gzip)).toBeLessThanOrEqual(5)
    expect(Math.abs(served.brotli / 1000 - documented.brotli)).toBeLessThanOrEqual(5)
  })
})
