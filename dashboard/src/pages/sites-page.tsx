import { listSites } from '../api/sites.js'
import { Link } from '../components/link.js'
import { ErrorNotice, Loading } from '../components/notice.js'
import { PageHeading } from '../components/page-heading.js'
import { formatDateTime } from '../lib/format.js'
import { useLoader } from '../lib/use-loader.js'
import { ReferenceFinder } from './reference-finder.js'

export function SitesPage() {
  const [sites] = useLoader(listSites, 'sites')
  return (
    <>
      <PageHeading title="Sites">
        <Link to={{ name: 'new-site' }} class="button button--primary">
          Add a site
        </Link>
      </PageHeading>
      {sites.status === 'error' ? <ErrorNotice error={sites.error} /> : null}
      {sites.status === 'loading' && sites.data === undefined ? <Loading /> : null}
      {sites.data !== undefined && sites.data.length === 0 ? (
        <div class="card empty">
          <h2>No sites yet</h2>
          <p>Add a site to get its keys and the snippet that protects your forms.</p>
          <Link to={{ name: 'new-site' }} class="button button--primary">
            Add your first site
          </Link>
        </div>
      ) : null}
      {sites.data !== undefined && sites.data.length > 0 ? (
        <ul class="site-list" aria-label="Your sites">
          {sites.data.map((site) => (
            <li key={site.id} class="card site-list__item">
              <h2 class="site-list__name">
                <Link to={{ name: 'site', siteId: site.id, tab: 'analytics' }}>{site.name}</Link>
                {site.role === 'owner' ? null : <span class="badge"> shared with you: {site.role}</span>}
              </h2>
              <dl class="facts">
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
          ))}
        </ul>
      ) : null}
      {sites.data !== undefined && sites.data.length > 0 ? <ReferenceFinder /> : null}
    </>
  )
}
