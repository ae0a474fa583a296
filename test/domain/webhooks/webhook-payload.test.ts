import { describe, expect, it } from 'vitest'
import { buildBlockedPayload, buildSurgePayload, buildTestPayload, serializePayload, verificationIdOf } from '../../../src/domain/webhooks/webhook-payload.js'

describe('webhook payloads', () => {
  it('a blocked verification has the fields of the spec, the delivery id, and what finds the block again', () => {
    const payload = buildBlockedPayload({
      siteId: '3d1f0c1e-5b5e-4d8e-8f55-0d4e7c1a2b3c',
      timestamp: new Date('2025-05-06T07:08:09.010Z'),
      riskScore: 87,
      anomalies: ['datacenter_ip', 'vpn_detected'],
      countryCode: 'DE',
      verificationId: '0f1e2d3c-4b5a-4697-8877-665544332211',
      device: null,
      hostname: null,
      pageAction: null,
    }, '5e0c3f4a-8a1d-4c2b-9f6e-2d7b1a0c9e84')
    // The fields the block did not have are null, not left out: a receiver reads one shape.
    expect(JSON.parse(serializePayload(payload).toString('utf8'))).toStrictEqual({
      id: '5e0c3f4a-8a1d-4c2b-9f6e-2d7b1a0c9e84',
      event: 'verification.blocked',
      siteId: '3d1f0c1e-5b5e-4d8e-8f55-0d4e7c1a2b3c',
      timestamp: '2025-05-06T07:08:09.010Z',
      data: {
        riskScore: 87,
        anomalies: ['datacenter_ip', 'vpn_detected'],
        countryCode: 'DE',
        verificationId: '0f1e2d3c-4b5a-4697-8877-665544332211',
        device: null,
        hostname: null,
        pageAction: null,
      },
    })
  })

  it("a delivery tells of a real block's verification only: none for a surge or a test send", () => {
    const verificationId = '0f1e2d3c-4b5a-4697-8877-665544332211'
    const blocked = { siteId: 'site', timestamp: new Date(), riskScore: 90, anomalies: [], countryCode: 'XX', verificationId, device: null, hostname: null, pageAction: null }
    expect(verificationIdOf(buildBlockedPayload(blocked, 'delivery'))).toBe(verificationId)
    expect(verificationIdOf(buildTestPayload('site', new Date(), 'delivery'))).toBeNull()
    const surge = { kind: 'started' as const, siteId: 'site', at: new Date(), startedAt: new Date(), challengesPerMinute: 700, threshold: 600 }
    expect(verificationIdOf(buildSurgePayload(surge, 'delivery'))).toBeNull()
  })

  it('a test send is the same event marked "test": true', () => {
    const payload = buildTestPayload('3d1f0c1e-5b5e-4d8e-8f55-0d4e7c1a2b3c', new Date('2025-05-06T07:08:09.010Z'), '5e0c3f4a-8a1d-4c2b-9f6e-2d7b1a0c9e84')
    expect(payload).toStrictEqual({
      id: '5e0c3f4a-8a1d-4c2b-9f6e-2d7b1a0c9e84',
      event: 'verification.blocked',
      siteId: '3d1f0c1e-5b5e-4d8e-8f55-0d4e7c1a2b3c',
      timestamp: '2025-05-06T07:08:09.010Z',
      data: {
        riskScore: 100,
        anomalies: ['webdriver_detected', 'datacenter_ip'],
        countryCode: 'XX',
        verificationId: '5e0c3f4a-8a1d-4c2b-9f6e-2d7b1a0c9e84',
        device: null,
        hostname: 'www.example.com',
        pageAction: 'login',
      },
      test: true,
    })
  })
})
