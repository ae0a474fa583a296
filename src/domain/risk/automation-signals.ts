import { assessBrowser } from '../automation/assess-browser.js'
import { readBehavior, readFingerprint } from '../automation/browser-report.js'
import type { AnomalyLabel } from './anomalies.js'
import type { ScoringInput } from './scoring-input.js'

/**
 * What the SDK reports beyond the spec's keys (src/domain/automation): fetch metadata, the
 * consistency of User-Agent, platform and client hints, automation globals, headless markers,
 * software WebGL, a hand-written fingerprint, and synthetic or machine-regular input.
 */
export function detectAutomationAnomalies(input: ScoringInput): AnomalyLabel[] {
  return assessBrowser({
    headers: input.request.headers,
    fingerprint: readFingerprint(input.submission.fingerprint),
    behavior: readBehavior(input.submission.behaviorData),
    isTrustworthyDestination: input.request.isTrustworthyDestination ?? false,
    isSecurePage: input.request.isSecurePage ?? false,
  })
}
