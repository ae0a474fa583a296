import { verify } from '@octokit/webhooks-methods'
import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import {
  buildSignedHeaders,
  deriveStandardWebhooksKey,
  signServiceSignature,
  signStandardWebhook,
  toStandardWebhooksSecret,
} from '../../../src/domain/webhooks/sign-webhook.js'
import { buildTestPayload, serializePayload } from '../../../src/domain/webhooks/webhook-payload.js'

const body = serializePayload(buildTestPayload('0b0e6c4e-3f3c-4a7e-9d38-6a3e5d1f8c11', new Date('2025-01-02T03:04:05.678Z'), '5e0c3f4a-8a1d-4c2b-9f6e-2d7b1a0c9e84'))

describe('X-Service-Signature', () => {
  it('is sha256= and the lowercase hex HMAC-SHA256 of the body (RFC 4231 test case 2)', () => {
    expect(signServiceSignature('Jefe', Buffer.from('what do ya want for nothing?'))).toBe(
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    )
  })

  it('verifies with @octokit/webhooks-methods, and fails for another body or secret', async () => {
    const signature = signServiceSignature('a plain secret', body)
    expect(await verify('a plain secret', body.toString('utf8'), signature)).toBe(true)
    expect(await verify('another secret', body.toString('utf8'), signature)).toBe(false)
    expect(await verify('a plain secret', body.toString('utf8').replace('100', '99'), signature)).toBe(false)
  })

  it('keys with the UTF-8 bytes of a non-ASCII secret', async () => {
    const signature = signServiceSignature('schlüssel-🔑', body)
    expect(await verify('schlüssel-🔑', body.toString('utf8'), signature)).toBe(true)
  })
})

describe('Standard Webhooks signature', () => {
  it('matches the example of the Standard Webhooks specification', () => {
    expect(
      signStandardWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, Buffer.from('{"test": 2432232314}')),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
  })

  it('a whsec_ secret is used as the standardwebhooks package reads it: verbatim', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
    const headers = buildSignedHeaders({ secret, event: 'verification.blocked', deliveryId: 'd-1', body, sentAt: new Date() })
    expect(new Webhook(secret).verify(body.toString('utf8'), headers)).toEqual(JSON.parse(body.toString('utf8')))
  })

  it('a plain secret verifies as base64 of its UTF-8 bytes (or whsec_ + that), and with format "raw"', () => {
    const secret = 'a plain secret'
    const headers = buildSignedHeaders({ secret, event: 'verification.blocked', deliveryId: 'd-2', body, sentAt: new Date() })
    const payload = JSON.parse(body.toString('utf8'))
    expect(new Webhook(Buffer.from(secret).toString('base64')).verify(body.toString('utf8'), headers)).toEqual(payload)
    expect(new Webhook(toStandardWebhooksSecret(secret)).verify(body.toString('utf8'), headers)).toEqual(payload)
    expect(new Webhook(secret, { format: 'raw' }).verify(body.toString('utf8'), headers)).toEqual(payload)
    expect(() => new Webhook(toStandardWebhooksSecret('another secret')).verify(body.toString('utf8'), headers)).toThrow(/signature/i)
  })

  it('a whsec_ secret that is not canonical base64 counts as plain text', () => {
    expect(deriveStandardWebhooksKey('whsec_not base64!')).toEqual(Buffer.from('whsec_not base64!'))
    expect(deriveStandardWebhooksKey('whsec_YQ')).toEqual(Buffer.from('whsec_YQ'))
    expect(deriveStandardWebhooksKey('whsec_YQ==')).toEqual(Buffer.from('a'))
  })

  it('refuses a replayed old message through the receiver library', () => {
    const secret = 'a plain secret'
    const headers = buildSignedHeaders({ secret, event: 'verification.blocked', deliveryId: 'd-3', body, sentAt: new Date(Date.now() - 3_600_000) })
    expect(() => new Webhook(toStandardWebhooksSecret(secret)).verify(body.toString('utf8'), headers)).toThrow(/too old/)
  })
})

describe('buildSignedHeaders', () => {
  it('names the event and the delivery, which is also the Standard Webhooks message id', () => {
    const headers = buildSignedHeaders({
      secret: 's',
      event: 'verification.blocked',
      deliveryId: '6f1c0a47-1d1b-4b0c-8a51-9e2b8e0f3c7d',
      body,
      sentAt: new Date('2025-01-02T03:04:05.999Z'),
    })
    expect(headers).toMatchObject({
      'Content-Type': 'application/json',
      'X-Service-Event': 'verification.blocked',
      'X-Service-Delivery': '6f1c0a47-1d1b-4b0c-8a51-9e2b8e0f3c7d',
      'X-Service-Signature': expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
      'webhook-id': '6f1c0a47-1d1b-4b0c-8a51-9e2b8e0f3c7d',
      'webhook-timestamp': '1735787045',
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/),
    })
  })

  it('signs webhook-signature with the replaced secret too, after the current one, and X-Service-Signature with the current alone', () => {
    const sentAt = new Date()
    const current = buildSignedHeaders({ secret: 'the new secret, 0123', event: 'verification.blocked', deliveryId: 'd-4', body, sentAt })
    const previous = buildSignedHeaders({ secret: 'the old secret, 0123', event: 'verification.blocked', deliveryId: 'd-4', body, sentAt })
    const both = buildSignedHeaders({ secret: 'the new secret, 0123', previousSecret: 'the old secret, 0123', event: 'verification.blocked', deliveryId: 'd-4', body, sentAt })
    expect(both['webhook-signature']).toBe(`${current['webhook-signature']} ${previous['webhook-signature']}`)
    expect(both['X-Service-Signature']).toBe(current['X-Service-Signature'])
    for (const secret of ['the new secret, 0123', 'the old secret, 0123']) {
      expect(() => new Webhook(toStandardWebhooksSecret(secret)).verify(body.toString('utf8'), both)).not.toThrow()
    }
  })
})
