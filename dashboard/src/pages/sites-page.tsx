import { createSiteSearch, SITE_SORTS, sortSites, type SiteSort } from '../../../src/domain/sites/site-search.js'
import { listSitesWithSummary, type SiteRequiringTwoFactor } from '../api/sites.js'
import type { ListedSite } from '../api/types.js'
import { Link } from '../components/link.js'
import { ErrorNotice, Loading, Notice } from '../components/notice.js'
import { PageHeading } from '../components/page-heading.js'
import { browserDomainSpellings } from '../lib/domain-spellings.js'
import { formatDateTime, formatNumber } from '../lib/format.js'
import { useAddressParam } from '../lib/router.js'
import { useLoader } from '../lib/use-loader.js'
import { ReferenceFinder } from './reference-finder.js'

const anyText = (_text: string): _text is string => true

export function SitesPage() {
  const [listing] = useLoader(listSitesWithSummary, 'sites')
  const sites = { ...listing, data: listing.data?.sites }
  const closed = listing.data?.sitesRequiringTwoFactor ?? []
  return (
    <>
      <PageHeading title="Sites">
        <Link to={{ name: 'new-site' }} class="button button--primary">
          Add a site
        </Link>
      </PageHeading>
      {sites.status === 'error' ? <ErrorNotice error={sites.error} /> : null}
      {sites.status === 'loading' && sites.data === undefined ? <Loading /> : null}
      {closed.length === 0 ? null : <ClosedSites sites={closed} />}
      {sites.data !== undefined && sites.data.length === 0 ? (
        <div class="card empty">
          <h2>No sites yet</h2>
          <p>Add a site to get its keys and the snippet that protects your forms.</p>
          <Link to={{ name: 'new-site' }} class="button button--primary">
            Add your first site
          </Link>
        </div>
      ) : null}
      {sites.data !== undefined && sites.data.length > 0 ? <SiteList sites={sites.data} /> : null}
      {sites.data !== undefined && sites.data.length > 0 ? <ReferenceFinder /> : null}
    </>
  )
}

/** The sites shared with the account that their owners open only to members with two-factor authentication on. */
function ClosedSites({ sites }: { sites: SiteRequiringTwoFactor[] }) {
  return (
    <Notice tone="warning">
      <p>
        {sites.length === 1 ? 'A site shared with you is' : `${formatNumber(sites.length)} sites shared with you are`} closed until you turn on two-factor
        authentication: {sites.map((site) => site.name).join(', ')}. {sites.length === 1 ? 'Its owner requires' : 'Their owners require'} it of every member.
      </p>
      <p>
        <Link to={{ name: 'account' }}>Turn on two-factor authentication</Link> under Account, then come back.
      </p>
    </Notice>
  )
}

function describeMatches(shown: number, all: number, filter: string): string {
  if (filter.trim() === '') return all === 1 ? 'One site.' : `${formatNumber(all)} sites.`
  if (shown === 0) return `No site's name, domain or site key holds “${filter.trim()}”.`
  return `${formatNumber(shown)} of ${formatNumber(all)} sites match.`
}

/** The sites, filtered (name, domain, site key) and sorted as the address says (`?q=…&sort=name`). */
function SiteList({ sites }: { sites: ListedSite[] }) {
  const [filter, setFilter] = useAddressParam<string>('q', anyText, '')
  const [sort, setSort] = useAddressParam<SiteSort>('sort', SITE_SORTS, 'created')
  const shown = sortSites(sites.filter(createSiteSearch(filter, browserDomainSpellings)), sort)
  return (
    <>
      <div class="toolbar site-list__toolbar">
        <label for="site-filter" class="toolbar__label">
          Filter sites
        </label>
        <input
          id="site-filter"
          type="search"
          value={filter}
          placeholder="Name, domain or site key"
          aria-describedby="site-filter-count"
          onInput={(event) => setFilter(event.currentTarget.value)}
        />
        <label for="site-sort" class="toolbar__label">
          Sort
        </label>
        <select id="site-sort" value={sort} onChange={(event) => setSort(event.currentTarget.value as SiteSort)}>
          <option value="created">Oldest first</option>
          <option value="name">By name</option>
        </select>
      </div>
      {/* Announced politely whenever the filter changes it. */}
      <p id="site-filter-count" role="status" class="muted site-list__count">
        {describeMatches(shown.length, sites.length, filter)}
      </p>
      {shown.length === 0 ? null : (
        <ul class="site-list" aria-label="Your sites">
          {shown.map((site) => (
            <SiteCard key={site.id} site={site} />
          ))}
        </ul>
      )}
    </>
  )
}

function SiteCard({ site }: { site: ListedSite }) {
  return (
    <li class="card site-list__item">
      <h2 class="site-list__name">
        <Link to={{ name: 'site', siteId: site.id, tab: 'analytics' }}>{site.name}</Link>
        {site.role === 'owner' ? null : <span class="badge"> shared with you: {site.role}</span>}
      </h2>
      <dl class="facts">
        {site.summary === undefined ? null : (
          <div>
            <dt>Last 24 hours</dt>
            <dd class="site-list__summary">
              {formatNumber(site.summary.verifications)} {site.summary.verifications === 1 ? 'verification' : 'verifications'},{' '}
              {formatNumber(site.summary.blocked)} blocked
            </dd>
          </div>
        )}
        <div>
          <dt>Site key</dt>
          <dd class="code">{site.siteKey}</dd>
        </div>
        <div>
          <dt>Domains</dt>
          <dd>{site.domains.length === 0 ? 'Any (development)' : site.domains.join(', ')}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{formatDateTime(site.createdAt)}</dd>
        </div>
      </dl>
    </li>
  )
}
