import type { AnomalyLabel } from './anomalies.js'
import type { ScoringInput } from './scoring-input.js'

/** The client's network, from the facts the offline IP data supplies (none without it). */
export function detectNetworkAnomalies(input: ScoringInput): AnomalyLabel[] {
  const labels: AnomalyLabel[] = []
  if (input.network?.isDatacenter === true) labels.push('datacenter_ip')
  if (input.network?.isVpn === true) labels.push('vpn_detected')
  if (input.network?.isTorExit === true) labels.push('tor_exit')
  return labels
}
