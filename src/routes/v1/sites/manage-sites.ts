import { randomUUID } from 'node:crypto'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { withDefaultSettings } from '../../../domain/sites/site.js'
import { MAX_SITE_SEARCH_LENGTH, SITE_SORTS, sortSites } from '../../../domain/sites/site-search.js'
import { createHostnameSearch } from '../../../domain/sites/hostname-search.js'
import { recentDayStart } from '../../../domain/analytics/stats-range.js'
import { stringEnum } from '../public-schemas.js'
import { ApiError, throwIfInvalid } from '../../../errors.js'
import { initialSettingsOf, normalizeSiteInput, validateMergedSettings } from '../../../domain/sites/site-input.js'
import { accountOf, creationRefused, reachesSite, refuseSiteRestrictedKey, SITE_NOT_FOUND_MESSAGE } from '../../../plugins/authentication.js'
import { createVerificationQueryRepository } from '../../../storage/sql/verification-query-repository.js'
import { createSiteRepository } from '../../../storage/sql/site-repository.js'
import { createSiteMemberRepository } from '../../../storage/sql/site-member-repository.js'
import { nonDefaultSettingsOf } from '../../../domain/audit/audit-event.js'
import { auditedSiteTransaction, auditedTransaction, recordAudit, recordSiteAudit } from '../audit-log/audit-trail.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams, siteChangeErrors } from '../dashboard-schemas.js'
import { CreateSiteBody, documentedBodies, ListedSite, Site, siteConfigOf, siteView, SiteWithSecret, SITE_BODY_LIMIT_BYTES } from './site-schemas.js'
import { checkTwoFactorRequirement, inputRulesOf, sealWebhookSecret } from './site-rules.js'
import { etagHeader, revisionTagOf, tagWithRevision } from './site-revision.js'
import { createOnce, idempotencyKeyHeader, idempotencyOf, replayedHeader, sendOutcome } from '../idempotency.js'

/** Sites per account: enough for any operator, and a bound on what one account's list reads. */
export const MAX_SITES_PER_ACCOUNT = 100

/** List, create, read and delete; the update has its own file. */
const manageSitesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const verifications = createVerificationQueryRepository(app.database)
  const members = createSiteMemberRepository(app.database)
  app.get(
    '/sites',
    {
      schema: {
        tags: ['dashboard'],
        summary: "The account's sites, and those shared with it",
        description:
          "Every one at once (an account holds at most " + String(MAX_SITES_PER_ACCOUNT) + "), each with the account's role on it (owner for its own sites): " +
          'oldest first, or by name with sort=name. q keeps those whose name, one of whose domains or whose site key holds it, whatever the case and Unicode form (NFKC), ' +
          'a domain in punycode or in Unicode alike (bücher finds xn--bcher-kva.example). ' +
          "include=summary adds each site's verifications and blocked ones of the last 24 hours, read for all the sites at once. " +
          'With an API key made for some sites only (siteIds), those of them the account still reaches. ' +
          "Sites whose owners require two-factor authentication of their members, which the account has off, are left out of items and named in sitesRequiringTwoFactor.",
        security: dashboardSecurity,
        querystring: Type.Object({
          q: Type.Optional(Type.String({ maxLength: MAX_SITE_SEARCH_LENGTH, description: 'Text the name, a domain (punycode or Unicode) or the site key holds (case and Unicode form aside); empty keeps all' })),
          sort: Type.Optional(stringEnum(SITE_SORTS, { description: 'created (default): oldest first; name: by name, "Client 2" before "Client 10"' })),
          include: Type.Optional(Type.Literal('summary', { description: "summary: each site's last 24 hours (summary)" })),
        }),
        response: {
          200: Type.Object({
            items: Type.Array(ListedSite),
            sitesRequiringTwoFactor: Type.Optional(
              Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }), {
                description:
                  "Only when there are some: the sites shared with the account that its items leave out, because their owners require two-factor authentication of their members and the account has it off (settings.requireTwoFactor). Turning it on opens them.",
              }),
            ),
          }),
          400: ErrorResponse,
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const { q = '', sort = 'created', include } = request.query
      const isFound = createHostnameSearch(q)
      const accountId = accountOf(request).id
      // Sites whose owners require two-factor authentication the account has off are named apart,
      // by name only, whatever q asks: the dashboard says what turning it on would open.
      const closed = (await members.closedForTwoFactor(accountId)).filter((site) => reachesSite(request, site.id))
      const closedIds = new Set(closed.map((site) => site.id))
      const visible = (await app.sites.listVisibleTo(accountId)).filter(({ site }) => reachesSite(request, site.id) && !closedIds.has(site.id) && isFound(site))
      const items = sortSites(visible.map(({ site, role }) => siteView(site, role)), sort)
      const withheld = closed.length === 0 ? {} : { sitesRequiringTwoFactor: closed }
      if (include !== 'summary') return { items, ...withheld }
      const from = recentDayStart(new Date())
      const totals = new Map((await verifications.recentTotalsOf(items.map((site) => site.id), from)).map((total) => [total.siteId, total]))
      return {
        items: items.map((site) => {
          const counted = totals.get(site.id)
          return { ...site, summary: { from: from.toISOString(), verifications: counted?.total ?? 0, blocked: counted?.blocked ?? 0 } }
        }),
        ...withheld,
      }
    },
  )

  app.post(
    '/sites',
    {
      bodyLimit: SITE_BODY_LIMIT_BYTES,
      // Told whatever the body, as a read key's refusal is (after authentication: sitesRoutes' hook).
      onRequest: async (request) => refuseSiteRestrictedKey(request, 'create a site, which it could not reach'),
      schema: {
        tags: ['dashboard'],
        summary: 'Create a site (answers its secret key once)',
        description: `An account holds at most ${MAX_SITES_PER_ACCOUNT} sites (409 site_limit_reached beyond, as a transfer to an account that holds as many answers). ` +
          'With an Idempotency-Key, a retry (a lost answer) answers the first answer again, secret key included, instead of creating a second site. ' +
          'An API key made for some sites only (siteIds) cannot create one: 403 api_key_site_restricted.',
        security: dashboardSecurity,
        headers: Type.Object(idempotencyKeyHeader),
        body: CreateSiteBody,
        documentedBody: documentedBodies.CreateSiteBody,
        response: { 201: SiteWithSecret, 400: ErrorResponse, 409: ErrorResponse, 422: ErrorResponse, ...authenticatedErrors },
        errorCodes: ['site_limit_reached', 'idempotency_key_reused', 'api_key_site_restricted'],
        responseHeaders: { 201: { Location: { type: 'string', description: 'The new site\'s address' }, ...etagHeader, ...replayedHeader } },
      },
    },
    async (request, reply) => {
      const idempotency = idempotencyOf(app, request, 'POST /api/v1/sites')
      const { value, issues } = normalizeSiteInput(request.body, inputRulesOf(app))
      const settings = value.settings ?? {}
      const initialSettings = initialSettingsOf(settings)
      const webhookSecret = settings.webhookSecret ?? null
      issues.push(...validateMergedSettings(withDefaultSettings(initialSettings), webhookSecret !== null))
      throwIfInvalid(issues)
      const id = randomUUID()
      const outcome = await auditedTransaction(app, request, (transaction) =>
        createOnce(app, transaction, idempotency, async () => {
          await checkTwoFactorRequirement(transaction, accountOf(request).id, 'owner', false, settings.requireTwoFactor)
          const result = await createSiteRepository(transaction).createWithinLimit(
            {
              id,
              accountId: accountOf(request).id,
              name: value.name ?? '',
              domains: [...(value.domains ?? [])],
              settings: initialSettings,
              webhookSecretCiphertext: webhookSecret === null ? null : sealWebhookSecret(app, id, webhookSecret),
            },
            MAX_SITES_PER_ACCOUNT,
          )
          if (result === undefined) return undefined
          const { site, secretKey } = result
          const details = { domains: site.domains, settings: nonDefaultSettingsOf(site) }
          await recordAudit(transaction, request, { action: 'site.created', site, details })
          const headers = { location: `/api/v1/sites/${site.id}`, etag: revisionTagOf(site) }
          return { statusCode: 201, headers, body: { ...siteView(site, 'owner'), secretKey } }
        }),
      )
      if (outcome === undefined) throw await creationRefused(app, request, `An account holds at most ${MAX_SITES_PER_ACCOUNT} sites; delete one first.`, 'site_limit_reached')
      if (!outcome.isReplayed) await app.siteCache.invalidate({ id: outcome.answer.body.id })
      return sendOutcome(reply, outcome)
    },
  )

  app.get(
    '/sites/:id',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'One site',
        security: dashboardSecurity,
        params: IdParams,
        response: { 200: Site, 404: ErrorResponse, ...authenticatedErrors },
        responseHeaders: { 200: etagHeader },
      },
    },
    async (request, reply) => {
      const { site, role } = await app.findSite(request, request.params.id, 'read')
      tagWithRevision(reply, site)
      return siteView(site, role)
    },
  )

  app.get(
    '/sites/:id/config',
    {
      schema: {
        tags: ['dashboard'],
        summary: "A site's configuration, as POST /sites takes it",
        description:
          'The body that creates this site again, on this instance or another (staging to production): ' +
          '`curl .../sites/{id}/config | curl -X POST .../api/v1/sites -H "Content-Type: application/json" -d @-`. ' +
          'Its name, domains and every setting (defaults included), in the create body\'s schema; no ids, timestamps, site key or secret key ' +
          '(the new site gets keys of its own, the secret key in the creation\'s answer). ' +
          'The webhook is left out: its secret is write-only and never shown, and its URL is set with it (a chat service\'s webhook URL is a credential too), ' +
          'so set both again on the new site: PUT /sites/{id} {"settings": {"webhookUrl": ..., "webhookSecret": ...}}. ' +
          'Any member of the site may read it, as GET /sites/{id}.',
        security: dashboardSecurity,
        params: IdParams,
        response: { 200: documentedBodies.CreateSiteBody, 404: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request) => {
      const { site } = await app.findSite(request, request.params.id, 'read')
      return siteConfigOf(site)
    },
  )

  app.delete(
    '/sites/:id',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Delete a site and its verification log',
        description: 'Only its owner may (403 forbidden for its members). ' +
          'Its site key and secret key stop working at once, on every instance, and its stats are gone. Its verification log is deleted in the background right after the answer, in batches, so that a site with millions of logged verifications is deleted as fast as an empty one.',
        security: dashboardSecurity,
        params: IdParams,
        response: { 204: Type.Null(), 404: ErrorResponse, ...siteChangeErrors, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const { site } = await app.findSite(request, request.params.id, 'own')
      await auditedSiteTransaction(app, request, site, 'own', async (transaction, locked) => {
        await createVerificationQueryRepository(transaction).deleteRollupsOf(site.id)
        // Of two deletions at once, the one that finds the site gone says so, as any later one does.
        if (!(await createSiteRepository(transaction).delete(site.id))) throw new ApiError('not_found', SITE_NOT_FOUND_MESSAGE)
        await recordSiteAudit(transaction, request, { action: 'site.deleted', site: locked })
      })
      await app.siteCache.invalidate(site)
      app.logRetention.sweepAfterDeletion()
      return reply.code(204).send(null)
    },
  )
}

export default manageSitesRoutes
