import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildSdk } from '../../scripts/build-sdk.js'
import type * as Sdk from '../../sdk/tollgate.js'

/**
 * The module build as a server imports it: a framework renders a 'use client' component (Next.js)
 * or a component's setup (Nuxt) on the server too, with no document or location.
 */
describe('the module build on a server (Node)', () => {
  let directory: string
  let sdk: typeof Sdk

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'tollgate-sdk-ssr-'))
    await buildSdk(directory)
    sdk = await import(pathToFileURL(join(directory, 'tollgate.mjs')).href) as typeof Sdk
  })
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true })
  })

  it('is there without a document', () => {
    expect(typeof document).toBe('undefined')
    expect(typeof location).toBe('undefined')
  })

  it('binds nothing, and throws nothing, when bindForms() runs at a module\'s top level', () => {
    expect(() => sdk.bindForms({ siteKey: 'tgk_example', apiUrl: 'https://tollgate.example.com' })).not.toThrow()
    expect(() => sdk.bindForms()).not.toThrow()
    expect(() => sdk.reset()).not.toThrow()
    expect(() => sdk.setStrings({ solving: 'Un instant…' })).not.toThrow()
  })

  it('rejects execute() saying that it runs only in a browser, not that the apiUrl is wrong', async () => {
    const failure = await sdk.execute({ siteKey: 'tgk_example', apiUrl: 'https://tollgate.example.com' }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(sdk.TollgateError)
    expect(failure).toMatchObject({ code: 'invalid_options', message: expect.stringContaining('runs only in a browser') })
  })
})
