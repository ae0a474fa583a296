import { isbot } from 'isbot'
import { rememberPerHeaderValue } from '../recent-cache.js'
import type { AnomalyLabel } from './anomalies.js'
import type { ScoringInput } from './scoring-input.js'

/**
 * isbot's verdict per user agent, remembered: the pattern is large, and most traffic comes from a
 * few thousand distinct user agents.
 */
const isBotUserAgent = rememberPerHeaderValue(isbot)

function headerText(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value.join(',') : (value ?? '')).trim()
}

/** User agent and the headers every browser sends. */
export function detectHeaderAnomalies(input: ScoringInput): AnomalyLabel[] {
  const labels: AnomalyLabel[] = []
  const userAgent = headerText(input.request.headers['user-agent'])
  if (userAgent === '') labels.push('missing_user_agent')
  // HeadlessChrome is a bot to isbot too; it gets its own, more specific label.
  else if (userAgent.includes('HeadlessChrome')) labels.push('headless_user_agent')
  else if (isBotUserAgent(userAgent)) labels.push('bot_user_agent')
  if (headerText(input.request.headers['accept-language']) === '') labels.push('missing_accept_language')
  if (!input.request.hasOrigin) labels.push('missing_origin')
  return labels
}
