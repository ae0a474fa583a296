import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { statsActions, type StatsAction } from '../../../domain/analytics/stats-range.js'
import { idRangeOf, REFERENCE_PATTERN } from '../../../domain/analytics/verification-reference.js'
import { LABEL_REASONS, VERIFICATION_LABELS, type VerificationLabel } from '../../../domain/feedback/verification-label.js'
import { LIST_DECISIONS, type ListDecision } from '../../../domain/sites/list-decision.js'
import { addressFormsOf, truncateAddress } from '../../../domain/network/address-forms.js'
import { EPHEMERAL_ID_PATTERN } from '../../../domain/token/ephemeral-id-pattern.js'
import { invalidRequest } from '../../../errors.js'
import { accountOf, siteScopeOf } from '../../../plugins/authentication.js'
import { createSiteMemberRepository } from '../../../storage/sql/site-member-repository.js'
import { createVerificationQueryRepository, type LogEntry } from '../../../storage/sql/verification-query-repository.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams } from '../dashboard-schemas.js'
import { LOG_PAGE_SIZE, logPageQuery, orNull, pageOf, positionOf, rowPosition } from '../log-pages.js'
import { named } from '../named-schemas.js'
import { stringEnum } from '../public-schemas.js'

const { default: DEFAULT_PAGE_SIZE, maximum: MAX_PAGE_SIZE } = LOG_PAGE_SIZE

export const Verification = Type.Object({
  id: Type.String({ format: 'uuid' }),
  siteId: Type.String({ format: 'uuid' }),
  createdAt: Type.String({ format: 'date-time' }),
  action: stringEnum(statsActions, { description: 'allow, challenge, block, or rejected (refused before scoring; see errorCode)' }),
  errorCode: orNull(Type.String()),
  riskScore: orNull(Type.Integer()),
  anomalies: Type.Array(Type.String()),
  countryCode: orNull(Type.String()),
  clientIp: orNull(Type.String()),
  hostname: orNull(Type.String()),
  pageAction: orNull(Type.String({ description: "The page's action ('login') a scored verification came with (the SDK's action)" })),
  userAgent: orNull(Type.String()),
  difficulty: orNull(Type.Integer()),
  solveTimeMs: orNull(Type.Integer()),
  device: orNull(
    Type.String({
      description: "The visitor's device on this site, as Siteverify answered it (metadata.ephemeral_id): the same device has the same one all week, from any address",
    }),
  ),
  verificationId: orNull(Type.String({ format: 'uuid', description: "Siteverify's metadata.verification_id of the row's token (its challenge); null for rejected rows" })),
  label: orNull(stringEnum(VERIFICATION_LABELS, { description: "What the site's backend (Siteverify feedback) or its operator said the visitor was; null without a label" })),
  labelReason: orNull(stringEnum(LABEL_REASONS)),
  labelNote: orNull(Type.String()),
  labeledAt: orNull(Type.String({ format: 'date-time' })),
  labelSource: orNull(stringEnum(['siteverify', 'dashboard'], { description: 'siteverify: the backend with its secret; dashboard: an operator' })),
  decidedBy: orNull(
    stringEnum(LIST_DECISIONS, {
      description:
        "The site's own list that decided the verdict instead of the risk model: allowlist (allowed at 0, unjudged) or blocklist (blocked at 100); " +
        "null when the model decided, and for rejected rows; a blocklisted row logged before this field is the blocklist's by its anomalies (address_blocked, country_blocked), an allowlisted one is null. Such rows' labels are not counted as the model's missed or false alarms (stats feedback.byList)",
    }),
  ),
})

/** A row of a site's log, as its listing answers it (components.schemas.Verification). */
const VerificationRow = named('Verification', Verification)

const AccountVerification = named('AccountVerification', Type.Object({ ...Verification.properties, siteName: Type.String({ description: 'The name of the site it was shown on' }) }))

export function verificationView<Entry extends LogEntry>({ createdAtMicros: _micros, createdAt, labeledAt, ...entry }: Entry) {
  return { ...entry, createdAt: createdAt.toISOString(), labeledAt: labeledAt?.toISOString() ?? null }
}

const referenceQuery = (description: string) => Type.String({ pattern: REFERENCE_PATTERN, description })

/** The filters of a site's log, which its listing and its export take alike. */
export const VerificationFilterQuery = {
  action: Type.Optional(Type.Union(statsActions.map((action) => Type.Literal(action)))),
  reference: Type.Optional(
    referenceQuery(
      "Only the rows whose id begins with these hexadecimal digits (at least 8; dashes optional): a visitor's reference, such as 1a2b3c4d-5e6f, or a whole id",
    ),
  ),
  device: Type.Optional(
    Type.String({
      pattern: EPHEMERAL_ID_PATTERN,
      description: "Only the rows of this device: an ephemeral id as Siteverify answered it (metadata.ephemeral_id), 24 hexadecimal digits",
    }),
  ),
  clientIp: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        "Only the rows of this visitor address (the row's `clientIp`): an IPv4 or IPv6 address, not a range, in any spelling. " +
        'It finds the rows logged under the address itself (LOG_CLIENT_IP=full) and those logged under its network, ' +
        'its /24 or /48 (LOG_CLIENT_IP=truncated), whatever the mode is now: rows keep the form they were logged in, ' +
        "so the network's rows, which may be other visitors' of that network, are found too. " +
        'An IPv4 address finds its rows logged as ::ffff:a.b.c.d too. Anything else, a zone (%eth0) included, answers 400. ' +
        'Reads every row of the site in its log: for a visitor\'s access or erasure request, not for browsing',
    }),
  ),
  label: Type.Optional(stringEnum([...VERIFICATION_LABELS, 'none'], { description: 'Only the rows labeled legitimate, or fraudulent, or (none) those without a label' })),
  verificationId: Type.Optional(
    Type.String({
      format: 'uuid',
      description:
        "Only the row with this id (a verification.blocked webhook's data.verificationId) or the scored row Siteverify answered this metadata.verification_id for (the row's `verificationId`); exact",
    }),
  ),
  decidedBy: Type.Optional(stringEnum(LIST_DECISIONS, { description: "Only the rows the site's allowlist, or its blocklist, decided (the row's `decidedBy`: a row blocklisted before migration 030 too, by its anomalies)" })),
}

/**
 * The texts a query's clientIp may be logged under (addressFormsOf), whatever LOG_CLIENT_IP is now:
 * the address itself, logged under full, and its network (truncateAddress), logged under
 * truncated. A row stays as it was logged until retention removes it, so after the mode changed
 * (either way) the log holds both for up to its retention, and a visitor's erasure must find both.
 * A network's rows may be other visitors' of that network too (as under truncated they always
 * are). 400 for one that is not an IP address (a zone, `%`, included).
 */
export function clientIpsOf(clientIp: string | undefined): string[] | undefined {
  if (clientIp === undefined) return undefined
  const forms = addressFormsOf(clientIp)
  if (forms === undefined) throw invalidRequest([{ field: 'querystring.clientIp', message: 'must be an IPv4 or IPv6 address, such as 203.0.113.7 or 2001:db8::1' }])
  return [...new Set([...forms, ...(addressFormsOf(truncateAddress(clientIp) ?? clientIp) ?? [])])]
}

/**
 * The repository's filter for those of a query: the reference as a range of ids, the device and
 * the verification id in lower case, the address in every form it may be logged under.
 */
export function verificationFilterOf(query: {
  action?: StatsAction
  reference?: string
  device?: string
  clientIp?: string
  label?: VerificationLabel | 'none'
  verificationId?: string
  decidedBy?: ListDecision
}) {
  return {
    decidedBy: query.decidedBy,
    verificationId: query.verificationId?.toLowerCase(),
    label: query.label,
    action: query.action,
    ids: query.reference === undefined ? undefined : idRangeOf(query.reference),
    device: query.device?.toLowerCase(),
    clientIps: clientIpsOf(query.clientIp),
  }
}

const siteVerificationsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const verifications = createVerificationQueryRepository(app.database)
  const members = createSiteMemberRepository(app.database)

  app.get(
    '/sites/:id/verifications',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'The verification log, newest first',
        description:
          'Pass nextCursor back as cursor for the next page; it is null on the last page. ' +
          'reference finds the row of the reference a turned-away visitor was shown (the first 13 characters of the verify request\'s X-Request-Id, which is the row\'s id).',
        security: dashboardSecurity,
        params: IdParams,
        querystring: Type.Object({
          ...logPageQuery(DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
          ...VerificationFilterQuery,
        }),
        response: {
          200: Type.Object({ items: Type.Array(VerificationRow), nextCursor: orNull(Type.String()) }),
          400: ErrorResponse,
          404: ErrorResponse,
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const { site } = await app.findSite(request, request.params.id, 'read')
      const limit = request.query.limit ?? DEFAULT_PAGE_SIZE
      const after = positionOf(request.query.cursor)
      const rows = await verifications.listPage(site.id, { ...verificationFilterOf(request.query), limit: limit + 1, after })
      const { page, nextCursor } = pageOf(rows, limit, rowPosition)
      return { items: page.map(verificationView), nextCursor }
    },
  )

  app.get(
    '/verifications',
    {
      schema: {
        tags: ['dashboard'],
        summary: "Find a visitor's reference in the logs of all the sites the account owns or is a member of",
        description:
          'For a reference quoted by a visitor who did not say which site turned them away: the rows of any site the ' +
          "account owns or is a member of (as any role) whose id begins with it, newest first, each with its site's id and name. Pages as the log of one site does. " +
          'With an API key made for some sites only (siteIds), the rows of those sites only. ' +
          "Not those of sites whose owners require two-factor authentication of their members while the account has it off (GET /api/v1/sites names them).",
        security: dashboardSecurity,
        querystring: Type.Object({
          ...logPageQuery(DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
          reference: referenceQuery("A visitor's reference, such as 1a2b3c4d-5e6f: at least 8 hexadecimal digits from the start of an id (dashes optional), or a whole id"),
        }),
        response: {
          200: Type.Object({ items: Type.Array(AccountVerification), nextCursor: orNull(Type.String()) }),
          400: ErrorResponse,
          ...authenticatedErrors,
        },
      },
    },
    async (request) => {
      const accountId = accountOf(request).id
      const limit = request.query.limit ?? DEFAULT_PAGE_SIZE
      const after = positionOf(request.query.cursor)
      const closed = (await members.closedForTwoFactor(accountId)).map((site) => site.id)
      const query = { limit: limit + 1, ids: idRangeOf(request.query.reference), after, siteIds: siteScopeOf(request), withoutSiteIds: closed }
      const rows = await verifications.listAccountPage(accountId, query)
      const { page, nextCursor } = pageOf(rows, limit, rowPosition)
      return { items: page.map(verificationView), nextCursor }
    },
  )
}

export default siteVerificationsRoutes
