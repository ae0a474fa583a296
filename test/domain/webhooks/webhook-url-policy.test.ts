import { describe, expect, it } from 'vitest'
import { findWebhookUrlProblem } from '../../../src/domain/webhooks/webhook-url-policy.js'

const production = { allowPrivateAddresses: false }
const development = { allowPrivateAddresses: true }

describe('findWebhookUrlProblem', () => {
  it('accepts a public https URL everywhere', () => {
    expect(findWebhookUrlProblem('https://hooks.example.com/tollgate?x=1', production)).toBeUndefined()
    expect(findWebhookUrlProblem('https://93.184.216.34/hook', production)).toBeUndefined()
  })

  it('requires https unless private webhooks are allowed', () => {
    expect(findWebhookUrlProblem('http://hooks.example.com/', production)).toMatch(/https/)
    expect(findWebhookUrlProblem('http://127.0.0.1:8080/', development)).toBeUndefined()
  })

  it('refuses private and loopback literals early, unless allowed', () => {
    expect(findWebhookUrlProblem('https://127.0.0.1/', production)).toMatch(/loopback/)
    expect(findWebhookUrlProblem('https://[::1]/', production)).toMatch(/loopback/)
    expect(findWebhookUrlProblem('https://[::ffff:7f00:1]/', production)).toMatch(/loopback/)
    expect(findWebhookUrlProblem('https://2130706433/', production)).toMatch(/loopback/)
    expect(findWebhookUrlProblem('https://169.254.169.254/latest/meta-data', production)).toMatch(/metadata/)
    expect(findWebhookUrlProblem('https://10.0.0.1/', development)).toBeUndefined()
  })

  it('refuses link-local and cloud metadata literals even where private webhooks are allowed', () => {
    expect(findWebhookUrlProblem('http://169.254.169.254/latest/meta-data/', development)).toMatch(/metadata/)
    expect(findWebhookUrlProblem('http://[fd00:ec2::254]/', development)).toMatch(/metadata/)
    expect(findWebhookUrlProblem('http://169.254.10.1/', development)).toMatch(/a link-local address/)
    expect(findWebhookUrlProblem('http://[fe80::1]/', development)).toMatch(/a link-local address/)
  })

  it('names the refused range in words an operator reads, with its article', () => {
    expect(findWebhookUrlProblem('https://0.0.0.0/', production)).toBe('the webhook URL points at an unspecified address (0.0.0.0)')
    expect(findWebhookUrlProblem('https://100.64.0.1/', production)).toBe('the webhook URL points at a carrier-grade NAT address (100.64.0.1)')
    expect(findWebhookUrlProblem('https://[fd12::1]/', production)).toBe('the webhook URL points at a unique-local address (fd12::1)')
    expect(findWebhookUrlProblem('https://10.0.0.1/', production)).toBe('the webhook URL points at a private address (10.0.0.1)')
    expect(findWebhookUrlProblem('https://[2001:20::1]/', production)).toBe('the webhook URL points at an orchid2 address (2001:20::1)')
  })

  it('refuses what is not an http(s) URL, and credentials in the URL', () => {
    expect(findWebhookUrlProblem('not a url', development)).toMatch(/not a valid URL/)
    expect(findWebhookUrlProblem('ftp://example.com/', development)).toMatch(/https/)
    expect(findWebhookUrlProblem('file:///etc/passwd', development)).toMatch(/https/)
    expect(findWebhookUrlProblem('https://user:pass@example.com/', development)).toMatch(/credentials/)
  })
})
