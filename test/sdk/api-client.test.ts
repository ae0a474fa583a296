import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requestChallenge, submitSolution } from '../../sdk/src/api-client.js'
import type { TollgateError } from '../../sdk/src/errors.js'

/**
 * The SDK's requests against a server that sends its headers at once and then stalls the body
 * (a proxy or a service in trouble). Node's fetch is the same WHATWG fetch the browser runs.
 */
describe('the SDK\'s requests to a service that stalls its answer', () => {
  let server: Server
  let apiUrl: string
  let requests = 0
  beforeAll(async () => {
    server = createServer((_request, response) => {
      requests++
      response.writeHead(200, { 'content-type': 'application/json' })
      response.write('{"success":')
      // ...and nothing more until the test ends.
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  const codeOf = (promise: Promise<unknown>) => promise.then(() => 'resolved', (error: TollgateError) => error.code)

  it('rejects with aborted when the caller aborts while the body is on its way', async () => {
    const controller = new AbortController()
    const pending = codeOf(submitSolution(apiUrl, 'tgk_test', {
      challengeId: '00000000-0000-4000-8000-000000000000', nonce: '1', solveTimeMs: 10, fingerprint: {}, behaviorData: {},
    } as Parameters<typeof submitSolution>[2], controller.signal))
    setTimeout(() => controller.abort(), 200)
    expect(await pending).toBe('aborted')
  })

  it('rejects a challenge request with aborted the same way', async () => {
    const controller = new AbortController()
    const pending = codeOf(requestChallenge(apiUrl, 'tgk_test', controller.signal))
    setTimeout(() => controller.abort(), 200)
    expect(await pending).toBe('aborted')
  })

  it('sends nothing when the caller\'s signal was aborted before the call', async () => {
    const before = requests
    const started = Date.now()
    expect(await codeOf(requestChallenge(apiUrl, 'tgk_test', AbortSignal.abort()))).toBe('aborted')
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(requests).toBe(before)
  })
})
