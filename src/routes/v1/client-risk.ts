import type { FastifyInstance, FastifyRequest } from 'fastify'
import { isPotentiallyTrustworthy, isSecurePageOrigin } from '../../domain/automation/secure-context.js'
import {
  recordAndAssessHistory, recordChallengeRequest, type ChallengeRequestAssessment, type ClientRef,
} from '../../domain/history/client-history.js'
import { browserTagOf } from '../../domain/history/client-keys.js'
import { assessNetwork } from '../../domain/network/assess-network.js'
import type { NetworkProfile } from '../../domain/network/network-profile.js'
import type { AnomalyLabel } from '../../domain/risk/anomalies.js'
import type { ScoringInput } from '../../domain/risk/scoring-input.js'
import type { PublicCaller } from '../../plugins/public-gate.js'

/**
 * History is kept per IPv4 address or IPv6 /64, under its keyed tag (the gate's groupTag).
 * Step-ups are kept per browser on that address as well (browserTagOf).
 */
export function historyRefOf(request: FastifyRequest, caller: PublicCaller): ClientRef {
  return { siteId: caller.site.id, client: caller.groupTag, browser: browserTagOf(request.headers['user-agent']) }
}

/** At a challenge request: the adaptive-difficulty labels of the client's network (datacenter, VPN, Tor). */
export async function networkLabelsFor(app: FastifyInstance, caller: PublicCaller): Promise<AnomalyLabel[]> {
  return assessNetwork(await app.network.profile(caller.clientIp))
}

/**
 * At a challenge request: counts it in the client's history; returns the history's labels (rate,
 * recent blocks) and the client's pending step-ups.
 */
export function recordChallengeFor(app: FastifyInstance, request: FastifyRequest, caller: PublicCaller): Promise<ChallengeRequestAssessment> {
  return recordChallengeRequest(app.keyValue, historyRefOf(request, caller))
}

export interface ClientRisk {
  profile: NetworkProfile
  historyAnomalies: AnomalyLabel[]
  historyRef: ClientRef
}

/**
 * At a verification: the network profile (unless the caller has looked it up already) and the
 * history labels, recording the sighting of the device (its fingerprint's digest,
 * fingerprintDigest; undefined when the submission described none).
 */
export async function assessClient(
  app: FastifyInstance,
  request: FastifyRequest,
  caller: PublicCaller,
  deviceDigest: string | undefined,
  knownProfile?: NetworkProfile,
): Promise<ClientRisk> {
  const historyRef = historyRefOf(request, caller)
  const [profile, history] = await Promise.all([
    knownProfile ?? app.network.profile(caller.clientIp),
    recordAndAssessHistory(app.keyValue, {
      ...historyRef,
      fingerprint: deviceDigest,
      siteTraffic: () => app.siteTraffic.scoredInLastHour(caller.site.id),
    }),
  ])
  return { profile, historyAnomalies: history.anomalies, historyRef }
}

/** The scoring facts that come from the request's transport and the client's network and history. */
export function clientFactsOf(request: FastifyRequest, risk: ClientRisk): Pick<ScoringInput, 'network' | 'history'> & {
  transport: { isTrustworthyDestination: boolean; isSecurePage: boolean }
} {
  const { profile } = risk
  const origin = request.headers.origin ?? request.headers.referer
  return {
    network: {
      countryCode: profile.countryCode,
      isDatacenter: profile.hostingProvider !== null,
      isVpn: profile.vpnProvider !== null,
      isTorExit: profile.isTorExit,
    },
    history: { anomalies: risk.historyAnomalies },
    transport: {
      isTrustworthyDestination: isPotentiallyTrustworthy(request.protocol, request.hostname),
      isSecurePage: isSecurePageOrigin(origin),
    },
  }
}
