import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorCatalogue } from '../src/errors.js'
import { buildTestApp, type TestApp } from './helpers/test-app.js'

/** The README's table of error codes ("Where Tollgate goes beyond or departs from the design contract"): code -> status. */
function documentedCodes(readme: string): Record<string, number> {
  const start = readme.indexOf('  | Code | Status | Meaning |')
  if (start === -1) throw new Error("the README has no table of error codes")
  const rows = readme.slice(start).split('\n').slice(2)
  const table = rows.slice(0, rows.findIndex((row) => !row.trimStart().startsWith('|')))
  return Object.fromEntries(
    table.map((row) => {
      const [, code, status] = /^\s*\| `(\w+)` \| (\d{3}) \| .+ \|$/.exec(row) ?? []
      if (code === undefined) throw new Error(`not a row of code, status and meaning: ${row}`)
      return [code, Number(status)]
    }),
  )
}

it("the README's table of error codes lists every code the API answers with, at its status, and no other", () => {
  const catalogue = Object.fromEntries(Object.entries(errorCatalogue).map(([code, { status }]) => [code, status]))
  expect(documentedCodes(readFileSync('README.md', 'utf8'))).toEqual(catalogue)
})

/** The statuses of docs/core-flow.md's "Errors of the public routes" table. */
function coreFlowErrorStatuses(): number[] {
  const section = readFileSync('docs/core-flow.md', 'utf8').split('### Errors of the public routes')[1] ?? ''
  return [...section.split('\n\n', 3)[1]!.matchAll(/^\| (\d{3}) \| `\w+` \|/gm)].map(([, status]) => Number(status))
}

describe('docs/core-flow.md, beside the OpenAPI document', () => {
  let service: TestApp
  beforeAll(async () => {
    service = await buildTestApp()
  })
  afterAll(() => service.close())

  it.each(['/api/v1/challenge', '/api/v1/verify'])('its error table holds every error status the OpenAPI document gives POST %s', async (path) => {
    const document = (await service.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, { post: { responses: Record<string, unknown> } }> }>()
    const errors = Object.keys(document.paths[path]!.post.responses).map(Number).filter((status) => status >= 400)
    expect(errors.length).toBeGreaterThan(0)
    expect(new Set(coreFlowErrorStatuses())).toEqual(new Set([...coreFlowErrorStatuses(), ...errors]))
  })
})
