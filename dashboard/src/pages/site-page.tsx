import { useCallback } from 'preact/hooks'
import { fetchSite } from '../api/sites.js'
import type { Site } from '../api/types.js'
import { Link } from '../components/link.js'
import { ErrorNotice, Loading } from '../components/notice.js'
import { PageHeading } from '../components/page-heading.js'
import type { SiteTab } from '../lib/router.js'
import { canChangeSite } from '../lib/site-access.js'
import { useLoader } from '../lib/use-loader.js'
import { AnalyticsPanel } from './site/analytics-panel.js'
import { IntegrationPanel } from './site/integration-panel.js'
import { MembersPanel } from './site/members-panel.js'
import { SettingsPanel } from './site/settings-panel.js'
import { VerificationLogPanel } from './site/verification-log-panel.js'
import { WebhookPanel } from './site/webhook-panel.js'

const tabLabels: Record<SiteTab, string> = {
  analytics: 'Analytics',
  log: 'Verification log',
  settings: 'Settings',
  webhook: 'Webhook',
  integration: 'Keys and snippet',
  members: 'Members',
}

interface SitePageProps {
  siteId: string
  tab: SiteTab
  accountId: string
}

export function SitePage({ siteId, tab, accountId }: SitePageProps) {
  const load = useCallback(() => fetchSite(siteId), [siteId])
  const [site, reload] = useLoader(load, siteId)
  if (site.data === undefined) {
    return site.status === 'error' ? (
      <>
        <PageHeading title="Site" />
        <ErrorNotice error={site.error} />
        <Link to={{ name: 'sites' }}>Back to your sites</Link>
      </>
    ) : (
      <Loading />
    )
  }
  return (
    <>
      <p class="breadcrumb">
        <Link to={{ name: 'sites' }}>Sites</Link> <span aria-hidden="true">›</span>
      </p>
      <PageHeading title={site.data.name} documentTitle={`${tabLabels[tab]} · ${site.data.name}`}>
        {site.data.role === 'owner' ? null : <span class="badge">Shared with you: {site.data.role}</span>}
        <Link to={{ name: 'activity' }} query={{ site: site.data.id }} class="button button--small">
          Activity of this site
        </Link>
      </PageHeading>
      <nav class="tabs" aria-label="Site sections">
        {(Object.keys(tabLabels) as SiteTab[]).map((name) => (
          <Link key={name} to={{ name: 'site', siteId, tab: name }} class="tabs__tab" isCurrent={name === tab}>
            {tabLabels[name]}
          </Link>
        ))}
      </nav>
      {/* Said once for the page: each panel only disables or leaves out its own write controls. */}
      {canChangeSite(site.data) ? null : (
        <p class="notice notice--info" id="read-access-note">
          You have read access to this site: you can see its settings, analytics, logs and members, and copy its keys, but
          not change them. Its owner or an admin can make you an admin.
        </p>
      )}
      {renderPanel(site.data)}
    </>
  )

  function renderPanel(data: Site) {
    switch (tab) {
      case 'analytics':
        return <AnalyticsPanel site={data} />
      case 'log':
        return <VerificationLogPanel site={data} />
      case 'settings':
        return <SettingsPanel site={data} onSaved={reload} />
      case 'webhook':
        return <WebhookPanel site={data} onSaved={reload} />
      case 'integration':
        return <IntegrationPanel site={data} onChanged={reload} />
      case 'members':
        return <MembersPanel site={data} accountId={accountId} onSiteChanged={reload} />
    }
  }
}
