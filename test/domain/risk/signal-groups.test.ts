import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { detectBehaviorAnomalies } from '../../../src/domain/risk/behavior-signals.js'
import { detectFingerprintAnomalies } from '../../../src/domain/risk/fingerprint-signals.js'
import { detectHeaderAnomalies } from '../../../src/domain/risk/header-signals.js'
import { detectNetworkAnomalies } from '../../../src/domain/risk/network-signals.js'
import type { ScoringInput } from '../../../src/domain/risk/scoring-input.js'
import { detectTimingAnomalies } from '../../../src/domain/risk/timing-signals.js'
import { humanInput } from './scoring-fixtures.js'

function withHeaders(headers: ScoringInput['request']['headers'], hasOrigin = true): ScoringInput {
  const input = humanInput()
  return { ...input, request: { headers, hasOrigin } }
}
function withFingerprint(fingerprint: ScoringInput['submission']['fingerprint']): ScoringInput {
  const input = humanInput()
  return { ...input, submission: { ...input.submission, fingerprint } }
}

describe('a person in a browser', () => {
  it('raises no anomaly in any group', () => {
    const input = humanInput()
    for (const detect of [detectHeaderAnomalies, detectFingerprintAnomalies, detectBehaviorAnomalies, detectTimingAnomalies, detectNetworkAnomalies]) {
      expect(detect(input)).toEqual([])
    }
  })
})

describe('header signals', () => {
  const chrome = humanInput().request.headers['user-agent'] as string
  it.each([
    ['curl/8.5.0', ['bot_user_agent']],
    ['python-requests/2.31.0', ['bot_user_agent']],
    ['node', ['bot_user_agent']],
    ['Googlebot/2.1 (+http://www.google.com/bot.html)', ['bot_user_agent']],
    [chrome.replace('Chrome/', 'HeadlessChrome/'), ['headless_user_agent']],
    ['', ['missing_user_agent']],
  ])('User-Agent %j gives %j', (userAgent, labels) => {
    expect(detectHeaderAnomalies(withHeaders({ 'user-agent': userAgent, 'accept-language': 'en' }))).toEqual(labels)
  })

  it('keeps no memory of made-up user agents of header size, and still judges them', () => {
    setFlagsFromString('--expose-gc')
    const collectGarbage = runInNewContext('gc') as () => void
    collectGarbage()
    const before = process.memoryUsage().heapUsed
    // 2,000 distinct 15 KB user agents: 30 MB if each were remembered.
    for (let index = 0; index < 2_000; index++) {
      const userAgent = `curl/${index} ${'x'.repeat(15_000)}`
      expect(detectHeaderAnomalies(withHeaders({ 'user-agent': userAgent, 'accept-language': 'en' }))).toEqual(['bot_user_agent'])
    }
    collectGarbage()
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(8_000_000)
  })

  it('flags a missing Accept-Language and a missing origin', () => {
    expect(detectHeaderAnomalies(withHeaders({ 'user-agent': chrome }, false))).toEqual(['missing_accept_language', 'missing_origin'])
  })

  it('flags a request with no headers at all three ways', () => {
    expect(detectHeaderAnomalies(withHeaders({}, false))).toEqual(['missing_user_agent', 'missing_accept_language', 'missing_origin'])
  })
})

describe('fingerprint signals', () => {
  it('flags missing canvas and WebGL', () => {
    expect(detectFingerprintAnomalies(withFingerprint({}))).toEqual(['canvas_missing', 'webgl_missing'])
    expect(detectFingerprintAnomalies(withFingerprint({ canvas: '', webgl: null }))).toEqual(['canvas_missing', 'webgl_missing'])
  })

  it.each(['0', 'none', 'undefined', 'aaaaaaaa', '0000000000000000', 'unsupported', '   ', '\t', ' \n '])('flags the placeholder %j as constant', (value) => {
    expect(detectFingerprintAnomalies(withFingerprint({ canvas: value, webgl: value }))).toEqual(['canvas_constant', 'webgl_constant'])
  })

  it('flags software WebGL renderers, in webgl or webglRenderer', () => {
    expect(detectFingerprintAnomalies(withFingerprint({ canvas: 'f00d', webgl: 'Google SwiftShader' }))).toEqual(['webgl_software_renderer'])
    expect(detectFingerprintAnomalies(withFingerprint({ canvas: 'f00d', webgl: '9a8b', webglRenderer: 'llvmpipe (LLVM 15.0.6, 256 bits)' }))).toEqual([
      'webgl_software_renderer',
    ])
  })

  it('flags webdriver and headless markers sent by the SDK', () => {
    expect(detectFingerprintAnomalies(withFingerprint({ canvas: 'f00d', webgl: '9a8b', webdriver: true, headless: true }))).toEqual([
      'webdriver_detected',
      'headless_detected',
    ])
    expect(detectFingerprintAnomalies(withFingerprint({ canvas: 'f00d', webgl: '9a8b', webdriver: false, headless: false }))).toEqual([])
  })
})

describe('behaviour signals', () => {
  it.each([
    [{}, ['no_interaction']],
    [{ mouseMovements: 0, keystrokes: 0 }, ['no_interaction']],
    [{ mouseMovements: 0, keystrokes: 0, touches: 3 }, []],
    [{ mouseMovements: 0, keystrokes: 0, scrolls: 1 }, []],
    [{ mouseMovements: 1 }, []],
    [{ mouseMovements: '12' }, ['no_interaction']],
  ])('behaviorData %j gives %j', (behaviorData, labels) => {
    const input = humanInput()
    expect(detectBehaviorAnomalies({ ...input, submission: { ...input.submission, behaviorData } })).toEqual(labels)
  })
})

describe('timing signals', () => {
  const timing = (solveTimeMs: number, observedSolveMs: number, isSameClient = true): ScoringInput => {
    const input = humanInput()
    return { ...input, submission: { ...input.submission, solveTimeMs }, proofOfWork: { difficulty: 18, observedSolveMs, isSameClient } }
  }

  it('flags a claimed solve time longer than the server observed', () => {
    expect(detectTimingAnomalies(timing(5_000, 900))).toEqual(['solve_time_impossible'])
  })

  it('allows timer rounding but nothing more', () => {
    expect(detectTimingAnomalies(timing(1_000, 900))).toEqual([])
    expect(detectTimingAnomalies(timing(1_001, 900))).toEqual(['solve_time_impossible'])
  })

  it('flags a solution sent from another address than the challenge went to', () => {
    expect(detectTimingAnomalies(timing(100, 900, false))).toEqual(['client_ip_changed'])
  })
})

describe('network signals', () => {
  it('turn the IP-intelligence facts into labels', () => {
    expect(detectNetworkAnomalies({ ...humanInput(), network: { isDatacenter: true, isVpn: true, countryCode: 'NL' } })).toEqual([
      'datacenter_ip',
      'vpn_detected',
    ])
    expect(detectNetworkAnomalies({ ...humanInput(), network: { isDatacenter: false } })).toEqual([])
  })
})
