import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { generateSecret } from '../../dashboard/src/lib/random-secret.js'
import { normalizeSiteInput } from '../../src/domain/sites/site-input.js'
import { buildSignedHeaders, deriveStandardWebhooksKey } from '../../src/domain/webhooks/sign-webhook.js'

describe("the webhook panel's Generate", () => {
  it('makes a Standard Webhooks secret, whsec_ and the padded base64 of 32 random bytes, each time another', () => {
    const secret = generateSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32)
    expect(generateSecret()).not.toBe(secret)
  })

  it('makes a secret the API takes, and a Standard Webhooks library verifies the deliveries with unchanged', () => {
    const secret = generateSecret()
    expect(normalizeSiteInput({ settings: { webhookSecret: secret } }, { isHttpsRequired: true, allowPrivateWebhooks: false }).issues).toEqual([])
    // Tollgate signs with the decoded bytes: the library's own reading of the secret.
    expect(deriveStandardWebhooksKey(secret)).toEqual(Buffer.from(secret.slice(6), 'base64'))
    const body = Buffer.from('{"event":"verification.blocked"}')
    const headers = buildSignedHeaders({ secret, event: 'verification.blocked', deliveryId: 'd-1', body, sentAt: new Date() })
    expect(() => new Webhook(secret).verify(body.toString('utf8'), headers)).not.toThrow()
  })
})
