import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
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
  /** Answers the client gave up on. */
  let dropped = 0
  beforeAll(async () => {
    server = createServer((_request, response) => {
      requests++
      response.on('close', () => dropped++)
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

  it('sends an early solve\'s challenge request once more, 1-2 s after it ran out of its 15 s, and a visitor\'s own request not', async () => {
    // Timers and the clock are fake (the connection and the server are real): 15 s pass at once.
    const realSetTimeout = setTimeout
    const until = async (condition: () => boolean) => {
      for (let tries = 0; !condition(); tries++) {
        if (tries > 200) throw new Error('waited 10 s in vain')
        await new Promise((resolve) => realSetTimeout(resolve, 50))
      }
    }
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    try {
      for (const early of [true, false]) {
        const [before, droppedBefore] = [requests, dropped]
        const pending = codeOf(requestChallenge(apiUrl, 'tgk_test', undefined, early))
        await until(() => requests === before + 1)
        await vi.advanceTimersByTimeAsync(15_000)
        if (early) {
          // The request given up, the pause before the second one starts.
          await until(() => dropped === droppedBefore + 1)
          await new Promise((resolve) => realSetTimeout(resolve, 100))
          await vi.advanceTimersByTimeAsync(990)
          await new Promise((resolve) => realSetTimeout(resolve, 200))
          expect(requests).toBe(before + 1)
          await vi.advanceTimersByTimeAsync(1_010)
          await until(() => requests === before + 2)
          await vi.advanceTimersByTimeAsync(15_000)
        }
        // Once more at most: the second time-out is the failure.
        expect(await pending, String(early)).toBe('network_error')
        expect(requests - before, String(early)).toBe(early ? 2 : 1)
      }
    } finally {
      vi.useRealTimers()
    }
  })

  it('sends nothing when the caller\'s signal was aborted before the call', async () => {
    const before = requests
    const started = Date.now()
    expect(await codeOf(requestChallenge(apiUrl, 'tgk_test', AbortSignal.abort()))).toBe('aborted')
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(requests).toBe(before)
  })
})

/** A service whose answers the test scripts one by one: a status, or `drop` to close the connection unanswered. */
describe('the SDK\'s requests when the service has a transient failure', () => {
  let server: Server
  let apiUrl: string
  let script: (number | 'drop')[] = []
  let requests = 0
  const challenge = { challengeId: '00000000-0000-4000-8000-000000000000', challenge: 'a'.repeat(64), difficulty: 4, algorithm: 'SHA-256', mode: 'invisible', expiresAt: '2099-01-01T00:00:00.000Z' }
  beforeAll(async () => {
    server = createServer((request, response) => {
      requests++
      const next = script.shift() ?? 200
      if (next === 'drop') {
        request.socket.destroy()
        return
      }
      response.writeHead(next, { 'content-type': 'application/json' })
      response.end(JSON.stringify(next === 200 ? challenge : { error: { code: next === 503 ? 'service_unavailable' : 'internal_error', message: `answered ${next}` } }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  const attempt = async (steps: (number | 'drop')[], signal?: AbortSignal) => {
    script = steps
    requests = 0
    const started = Date.now()
    const outcome = await requestChallenge(apiUrl, 'tgk_test', signal).then(
      (answer) => answer.challengeId,
      (error: TollgateError) => error.code,
    )
    return { outcome, requests, elapsedMs: Date.now() - started }
  }

  it('tries once more, a second or two later, after a connection that failed or a 502-504', async () => {
    for (const first of ['drop', 502, 503, 504] as const) {
      const { outcome, requests: sent, elapsedMs } = await attempt([first, 200])
      expect(outcome, String(first)).toBe(challenge.challengeId)
      expect(sent).toBe(2)
      expect(elapsedMs).toBeGreaterThanOrEqual(1_000)
      expect(elapsedMs).toBeLessThan(4_000)
    }
  })

  it('gives up after the second failure, with the failure\'s code', async () => {
    expect(await attempt([503, 503, 200])).toMatchObject({ outcome: 'server_error', requests: 2 })
    expect(await attempt(['drop', 'drop', 200])).toMatchObject({ outcome: 'network_error', requests: 2 })
  })

  it('does not repeat an answer that would be the same again (500, 4xx)', async () => {
    expect(await attempt([500, 200])).toMatchObject({ outcome: 'server_error', requests: 1 })
    expect(await attempt([429, 200])).toMatchObject({ outcome: 'rate_limited', requests: 1 })
  })

  it('stops waiting to try again as soon as the caller aborts', async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 300)
    const { outcome, requests: sent, elapsedMs } = await attempt([503, 200], controller.signal)
    expect(outcome).toBe('aborted')
    expect(sent).toBe(1)
    expect(elapsedMs).toBeLessThan(1_000)
  })
})
