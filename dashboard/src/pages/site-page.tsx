import { useCallback } from 'preact/hooks'
import { fetchSite } from '../api/sites.js'
import type { Site } from '../api/types.js'
import { Link } from '../components/link.js'
import { ErrorNotice, Loading } from '../components/notice.js'
import { PageHeading } from '../components/page-heading.js'
import type { SiteTab } from '../lib/router.js'
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
      {site.data.role === 'viewer' ? (
        <p class="notice" role="note">
          You are a viewer of this site: you can read everything, and change nothing.
        </p>
      ) : null}
      {/* A viewer's forms and buttons are disabled as one: the API would refuse every change anyway. */}
      <fieldset class="fieldset--plain" disabled={site.data.role === 'viewer' && tab !== 'members' && tab !== 'log' && tab !== 'analytics'}>
        {renderPanel(site.data)}
      </fieldset>
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
        return <MembersPanel site={data} accountId={accountId} />
    }
  }
}
