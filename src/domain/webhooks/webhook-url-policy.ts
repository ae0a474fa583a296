import { isIP } from 'node:net'
import { describeRefusedRange, findRefusedRange } from './address-policy.js'

export interface WebhookUrlPolicy {
  /** Development and tests: http and private addresses allowed, link-local and metadata ones still not (config.allowPrivateWebhooks). */
  allowPrivateAddresses: boolean
}

/**
 * Why a webhook URL cannot be used, or undefined when it can. This is the early check (also
 * useful when the URL is saved); the authoritative one happens when connecting, because a
 * hostname may resolve to another address by then (DNS rebinding).
 */
export function findWebhookUrlProblem(url: string, policy: WebhookUrlPolicy): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'the webhook URL is not a valid URL'
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'the webhook URL must use https'
  if (parsed.username !== '' || parsed.password !== '') return 'the webhook URL must not contain credentials'
  if (!policy.allowPrivateAddresses && parsed.protocol !== 'https:') return 'the webhook URL must use https'
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1')
  if (isIP(host) !== 0) {
    const range = findRefusedRange(host, { allowPrivate: policy.allowPrivateAddresses })
    if (range !== undefined) return `the webhook URL points at ${describeRefusedRange(range)} (${host})`
  }
  return undefined
}
