import { useCallback } from 'preact/hooks'
import { findReference } from '../api/analytics.js'
import type { AccountVerificationPage } from '../api/types.js'
import { Link } from '../components/link.js'
import { ErrorNotice, Loading } from '../components/notice.js'
import { ReferenceSearch } from '../components/reference-search.js'
import { formatDateTimeWithSeconds } from '../lib/format.js'
import { isReference, referenceOf } from '../lib/reference.js'
import { useAddressParam } from '../lib/router.js'
import { useLoader, type Loaded } from '../lib/use-loader.js'

/** More than a reference shown to a visitor ever matches: a short prefix lists this many, newest first. */
const MATCHES_SHOWN = 20

const nothing = (): Promise<AccountVerificationPage | undefined> => Promise.resolve(undefined)

/**
 * Finds a visitor's reference among all the account's sites, for the visitor who says they were
 * turned away but not by which site: each match names its site and leads to it in that site's log.
 */
export function ReferenceFinder() {
  const [reference, setReference] = useAddressParam<string>('reference', isReference, '')
  const load = useCallback(() => (reference === '' ? nothing() : findReference({ reference, limit: MATCHES_SHOWN })), [reference])
  const [found] = useLoader(load, reference)
  // A card, not a region of its own: the search inside is the landmark, under the same name.
  return (
    <div class="card reference-finder">
      <h2 id="reference-heading">Find a visitor's reference</h2>
      <ReferenceSearch
        id="sites"
        reference={reference}
        onFind={setReference}
        idleHint="A visitor who was turned away is shown a reference: find their verification in the logs of all your sites."
        clearLabel="Clear"
      />
      {reference === '' ? null : <Matches reference={reference} found={found} />}
    </div>
  )
}

function Matches({ reference, found }: { reference: string; found: Loaded<AccountVerificationPage | undefined> }) {
  if (found.status === 'error') return <ErrorNotice error={found.error} />
  // While a search runs, the matches of the one before are not this one's: none are shown.
  if (found.status === 'loading' || found.data === undefined) return found.status === 'loading' ? <Loading label="Searching…" /> : null
  const { items, nextCursor } = found.data
  if (items.length === 0) {
    return (
      <p class="muted" role="status">
        No verification of your sites has a reference beginning with {reference}: it may be older than the logs keep, or have come with a test key.
      </p>
    )
  }
  return (
    <>
      <p class="visually-hidden" role="status">
        {items.length === 1 ? 'One verification found.' : `${items.length} verifications found.`}
      </p>
      <ul class="reference-matches" aria-label="Verifications found">
        {items.map((item) => (
          <li key={item.id} data-id={item.id}>
            <Link to={{ name: 'site', siteId: item.siteId, tab: 'log' }} query={{ reference: referenceOf(item.id) }}>
              {item.siteName} <span class="code">{referenceOf(item.id)}</span>
            </Link>{' '}
            <span class={`badge badge--${item.action}`}>{item.action}</span>{' '}
            {item.riskScore === null ? null : <span class="muted">risk {item.riskScore} </span>}
            <span class="muted">{formatDateTimeWithSeconds(item.createdAt)}</span>
          </li>
        ))}
      </ul>
      {nextCursor === null ? null : <p class="muted">The newest {items.length} are shown: type more of the reference to narrow the search.</p>}
    </>
  )
}
