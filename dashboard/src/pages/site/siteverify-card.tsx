import type { Stats } from '../../api/types.js'
import { Notice } from '../../components/notice.js'
import { RankedHead, RankedRow } from '../../components/ranked-list.js'
import { formatDateTime, formatNumber, formatPercent } from '../../lib/format.js'

/** Tokens issued before a backend that redeemed none of them is worth a warning (a quiet site's few may be a test). */
const FEW_TOKENS = 5

/** What each of Siteverify's refusals usually means for a site's own backend. */
const refusalLabels: Record<string, string> = {
  'invalid-input-secret': 'Old secret key (replaced by a rotation)',
  'timeout-or-duplicate': 'Spent already or expired',
  'invalid-input-response': "Sent with another site's key",
  'remoteip-mismatch': 'Sent from another address than the one that earned it',
}

interface SiteverifyCardProps {
  siteverify: Stats['siteverify']
  /** The range's start (ISO 8601): counting may have begun after it. */
  from: string
}

/**
 * How the site's tokens fared at Siteverify beside those it issued: whether its backend redeems
 * them at all (a form that never checks its token is not protected), and whether it sends a
 * secret that no longer works.
 */
export function SiteverifyCard({ siteverify, from }: SiteverifyCardProps) {
  const { issued, redeemed, redeemedFromOtherAddress, refused, countedSince } = siteverify
  const wrongSecret = refused.find(({ errorCode }) => errorCode === 'invalid-input-secret')?.count ?? 0
  const rows = [{ label: 'Redeemed', count: redeemed }, ...refused.map(({ errorCode, count }) => ({ label: refusalLabels[errorCode] ?? errorCode, count }))]
  const total = rows.reduce((sum, { count }) => sum + count, 0)
  const max = rows.reduce((largest, { count }) => Math.max(largest, count), 0)
  return (
    <section class="card" aria-labelledby="siteverify-heading">
      <h2 id="siteverify-heading">Siteverify</h2>
      <p data-siteverify-summary>
        {issued === 0
          ? `${formatNumber(redeemed)} tokens redeemed by your server; none issued${redeemed === 0 ? '' : ' in this range (the others are older)'}.`
          : `${formatNumber(redeemed)} of ${formatNumber(issued)} tokens issued redeemed by your server (${formatPercent(Math.min(redeemed, issued), issued)}).`}
      </p>
      {redeemedFromOtherAddress > 0 ? (
        <p data-siteverify-other-address>
          {formatNumber(redeemedFromOtherAddress)} of them {redeemedFromOtherAddress === 1 ? 'was' : 'were'} sent with a remoteip outside the address that
          earned the token: the address check reports it, and set to refuse it would have refused{' '}
          {redeemedFromOtherAddress === 1 ? 'that token' : 'those tokens'}.
        </p>
      ) : null}
      {Date.parse(countedSince) > Date.parse(from) ? (
        <p class="muted">Counted since {formatDateTime(countedSince)}, when Tollgate began counting: tokens issued before then are left out.</p>
      ) : null}
      {issued >= FEW_TOKENS && redeemed === 0 ? (
        <Notice tone="warning">
          Your server redeemed none of the tokens issued in this range. A token protects a form only when the server that
          receives the form redeems it with Siteverify and refuses the form without <code>success: true</code>.
        </Notice>
      ) : null}
      {wrongSecret > 0 ? (
        <Notice tone="warning">
          {formatNumber(wrongSecret)} {wrongSecret === 1 ? 'call' : 'calls'} to Siteverify sent a secret key that a rotation
          replaced, after its grace period: a server still runs with the old one. Give it the current secret key (rotate
          again if it is lost).
        </Notice>
      ) : null}
      {total === 0 ? (
        <p class="muted">No token of this site was sent to Siteverify in this range.</p>
      ) : (
        <table class="table ranked">
          <RankedHead name="Outcome" share="Of all" />
          <tbody>
            {rows.map(({ label, count }) => (
              <RankedRow key={label} label={label} count={count} max={max} total={total} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
