import type { AnomalyLabel } from '../risk/anomalies.js'
import type { NetworkProfile } from './network-profile.js'

/** The network's anomaly labels: where the request comes from, judged by the offline data. */
export function assessNetwork(profile: NetworkProfile): AnomalyLabel[] {
  const anomalies: AnomalyLabel[] = []
  if (profile.hostingProvider !== null) anomalies.push('datacenter_ip')
  if (profile.vpnProvider !== null) anomalies.push('vpn_detected')
  if (profile.isTorExit) anomalies.push('tor_exit')
  return anomalies
}
