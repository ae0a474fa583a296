import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { buildFeedbackFigures } from '../../../domain/analytics/feedback-figures.js'
import { buildScoreDistribution } from '../../../domain/analytics/score-distribution.js'
import { buildSeries, maxRangeMs, resolveStatsRange, wholeHoursOf, type StatsRange } from '../../../domain/analytics/stats-range.js'
import { createSiteverifyCountRepository, REPORTED_MISMATCH_OUTCOME } from '../../../storage/sql/siteverify-count-repository.js'
import { createVerificationLabelRepository } from '../../../storage/sql/verification-label-repository.js'
import { OTHER_ROLLUP_VALUE, ROLLUP_VALUES_PER_HOUR } from '../../../storage/sql/rollup-values.js'
import { createVerificationQueryRepository } from '../../../storage/sql/verification-query-repository.js'
import { invalidRequest } from '../../../errors.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, IdParams, RangeTimeQuery } from '../dashboard-schemas.js'

const TOP_LIMIT = 10

const actionCounts = {
  allow: Type.Integer(),
  challenge: Type.Integer(),
  block: Type.Integer(),
  rejected: Type.Integer({ description: 'Submissions refused before scoring (bad solution, expired challenge, ...)' }),
}

const feedbackCount = (description: string) => Type.Integer({ description })
const listLabels = (decided: string) =>
  Type.Object({ legitimate: Type.Integer(), fraudulent: Type.Integer() }, { description: `Labeled verifications ${decided}, by label` })

const Feedback = Type.Object(
  {
    legitimate: feedbackCount('Verifications of the range labeled legitimate'),
    fraudulent: feedbackCount('Verifications of the range labeled fraudulent'),
    missed: feedbackCount(
      "Fraudulent ones the risk model allowed (the action logged, step-ups included); not those a site's list decided (byList)",
    ),
    falseAlarms: feedbackCount(
      "Legitimate ones the risk model challenged or blocked (the action logged); not those a site's list decided (byList)",
    ),
    byList: Type.Object(
      {
        allowlist: listLabels('the address allowlist let in (allowed at 0, unjudged): a fraudulent one is an entry to review'),
        blocklist: listLabels('the blocklist turned away (its addresses or countries): a legitimate one is an entry to review'),
      },
      {
        description:
          "The labeled ones a site's own list decided instead of the risk model (the log's decidedBy), counted in legitimate and fraudulent but never " +
          'in missed or falseAlarms. Rows logged before migration 030: the blocklist\'s are known by their anomalies, the allowlist\'s count as the model\'s.',
      },
    ),
    buckets: Type.Array(Type.Object({ min: Type.Integer(), max: Type.Integer(), legitimate: Type.Integer(), fraudulent: Type.Integer() }), {
      description: "The labels by risk score, in the buckets of scoreDistribution; not those a site's list decided (byList): the list set their score, not the model",
    }),
  },
  {
    description:
      "What the site's backend (Siteverify feedback) and its operators said of the range's verifications, against what happened to them " +
      '(the actions logged, whatever the thresholds are now); the buckets, by logged score, are what tuning the thresholds reads. Read from the labeled rows only.',
  },
)

/** What the reserved value of topHostnames and topPageActions means (migration 042). */
const otherValuesNote = (values: string, madeUp: string) =>
  `A site's hourly counts keep at most ${ROLLUP_VALUES_PER_HOUR} new distinct ${values} per UTC hour, besides the previous hour's ${ROLLUP_VALUES_PER_HOUR} most counted; ` +
  `the verifications with any further one in that hour are counted together under "${OTHER_ROLLUP_VALUE}" (no real one can be spelt so), ranked as any other: ` +
  `many there means many made-up ${madeUp} (a flood), which puts there too a real one new in that hour that first comes after it (not one of the previous hour's most counted); the totals stay whole. ` +
  'A part of an hour read from the log (an unaligned from, a past to) counts each one as itself.'

const Stats = Type.Object({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  interval: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
  series: Type.Array(Type.Object({ bucket: Type.String({ format: 'date-time', description: 'Start of the UTC hour or day' }), ...actionCounts }), {
    description:
      'One bucket per UTC hour or UTC day (interval) the range overlaps, oldest first, zeros included. Whatever time zone from and to were given in, ' +
      'the first bucket starts at the UTC hour or day that holds from, and may start before it; the last may end after to. The counts are of from <= time < to only.',
  }),
  topAnomalies: Type.Array(Type.Object({ label: Type.String(), count: Type.Integer() })),
  topCountries: Type.Array(Type.Object({ countryCode: Type.String(), count: Type.Integer() })),
  topHostnames: Type.Array(Type.Object({ hostname: Type.String(), count: Type.Integer() }), {
    description:
      'The hosts of the pages scored verifications came from (their Origin, else Referer); rejected submissions (whose host costs nothing to make up) and verifications that named none are not counted. ' +
      otherValuesNote('hostnames', 'subdomains'),
  }),
  topPageActions: Type.Array(Type.Object({ pageAction: Type.String(), count: Type.Integer() }), {
    description:
      "The page actions ('login', 'signup': the SDK's action) scored verifications came with, as the hostnames: which form is asked most, and which is attacked. " +
      otherValuesNote('page actions', 'page actions'),
  }),
  scoreDistribution: Type.Array(
    Type.Object({
      min: Type.Integer({ description: 'Lowest risk score of the bucket' }),
      max: Type.Integer({ description: 'Highest risk score of the bucket, included (100 for the last)' }),
      count: Type.Integer(),
    }),
    {
      description:
        'Scored verifications by risk score in buckets of ten (0-9, 10-19, ... 90-100), all ten, lowest first, zeros included; ' +
        "rejected submissions have no score and are not counted. Against the site's challengeThreshold and blockThreshold, " +
        'it shows how many verifications a threshold would catch.',
    },
  ),
  totals: Type.Object({ ...actionCounts, total: Type.Integer() }),
  feedback: Feedback,
  siteverify: Type.Object(
    {
      from: Type.String({ format: 'date-time', description: 'Start of the first UTC hour counted: from, or the start of its hour' }),
      to: Type.String({ format: 'date-time', description: 'End of the last UTC hour counted: to, or the end of its hour' }),
      issued: Type.Integer({
        description: 'Tokens the site issued (its allowed verifications) in the part of the range since countedSince: what redeemed is measured against',
      }),
      redeemed: Type.Integer({ description: "The site's tokens redeemed (success: true; a retry with the first call's idempotency_key is not counted again)" }),
      redeemedFromOtherAddress: Type.Integer({
        description:
          'Of redeemed, those whose remoteip was outside the address (IPv4) or /64 (IPv6) that earned the token, on a site whose tokenAddressCheck is report: ' +
          'what refuse would have refused (tokens farmed elsewhere, or visitors whose address changed, or a proxy\'s address sent as remoteip)',
      }),
      refused: Type.Array(Type.Object({ errorCode: Type.String(), count: Type.Integer() }), {
        description:
          "The site's backend's calls that Siteverify refused, by error code, most first: invalid-input-secret (a secret key that a rotation " +
          'replaced, its grace period over: a backend not yet updated), timeout-or-duplicate (spent already, or expired), invalid-input-response (another site key named), ' +
          'remoteip-mismatch (a remoteip outside the address that earned the token, on a site whose tokenAddressCheck is refuse; answered invalid-input-response). ' +
          "Calls with any other wrong secret (anyone holding a token can make those), tokens that are no site's (made up, damaged) and test secrets are not counted.",
      }),
      countedSince: Type.String({
        format: 'date-time',
        description: 'When Tollgate began counting (its upgrade to a version that counts): a range that starts earlier has tokens issued before it and no redemptions counted for them',
      }),
    },
    {
      description:
        "How the site's tokens fared at Siteverify, counted per UTC hour: the hours the range overlaps, whole (from, to), which are wider than the range when " +
        'either end falls inside an hour: redeemed and refused count the whole window, issued the range itself, so redeemed can exceed issued. ' +
        'Against totals.allow (each allowed verification issued a token) it shows whether the backend redeems them: one that redeems none checks nothing.',
    },
  ),
})

const days = (ms: number) => ms / 86_400_000

const siteStatsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const verifications = createVerificationQueryRepository(app.database)
  const siteverifyCounts = createSiteverifyCountRepository(app.database)
  const labels = createVerificationLabelRepository(app.database)
  /**
   * The tokens issued (allowed verifications) in the part of the range since Siteverify's counting
   * began: those issued before were never counted when redeemed. Read apart only for a range
   * that starts before then (the first days after the upgrade).
   */
  async function issuedSince(siteId: string, range: StatsRange, allowedInRange: number, countedFrom: Date): Promise<number> {
    if (countedFrom <= range.from) return allowedInRange
    if (countedFrom >= range.to) return 0
    const counts = await verifications.countByBucket(siteId, { ...range, from: countedFrom })
    return counts.reduce((sum, { action, count }) => sum + (action === 'allow' ? count : 0), 0)
  }

  app.get(
    '/sites/:id/stats',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Verifications by action over time, top anomalies, countries, hostnames and page actions, the risk score distribution, Siteverify\'s outcomes',
        description:
          `Counts verifications with from <= time < to in UTC buckets: hours, or UTC days with interval=day (there is no time-zone parameter), ` +
          "so the first bucket may start before from and the last end after to. Siteverify's outcomes are counted per whole UTC hour (siteverify.from and siteverify.to). " +
          'Defaults: the current UTC hour so far and the 23 before it, hourly (to: now). ' +
          'Whole UTC hours, and the hour a range ending now or later ends in, are read from hourly counts, at a cost that does not grow with the verifications in them; ' +
          'a part of an hour cut off by an unaligned from (or a past to) is counted from the log itself, row by row. ' +
          `At most ${days(maxRangeMs.hour)} days hourly or ${days(maxRangeMs.day)} days daily.`,
        security: dashboardSecurity,
        params: IdParams,
        querystring: Type.Object({
          from: RangeTimeQuery("The range's start (inclusive)"),
          to: RangeTimeQuery("The range's end (exclusive); after from"),
          interval: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day')])),
        }),
        response: { 200: Stats, 400: ErrorResponse, 404: ErrorResponse, ...authenticatedErrors },
      },
    },
    async (request) => {
      const { site } = await app.findSite(request, request.params.id, 'read')
      const resolved = resolveStatsRange(request.query, new Date())
      if ('issues' in resolved) throw invalidRequest(resolved.issues)
      const { range } = resolved
      const siteverifyHours = wholeHoursOf(range)
      const [counts, anomalies, countries, hostnames, pageActions, scores, redemptions, countingStartedAt, labeled] = await Promise.all([
        verifications.countByBucket(site.id, range),
        verifications.topAnomalies(site.id, range, TOP_LIMIT),
        verifications.topCountries(site.id, range, TOP_LIMIT),
        verifications.topHostnames(site.id, range, TOP_LIMIT),
        verifications.topPageActions(site.id, range, TOP_LIMIT),
        verifications.countByScoreBucket(site.id, range),
        siteverifyCounts.countsOf(site.id, siteverifyHours.from, siteverifyHours.to),
        siteverifyCounts.countingStartedAt(),
        labels.countLabeledScores(site.id, range.from, range.to),
      ])
      const { series, totals } = buildSeries(counts, range)
      const issued = await issuedSince(site.id, range, totals.allow, countingStartedAt)
      return {
        from: range.from.toISOString(),
        to: range.to.toISOString(),
        interval: range.interval,
        series: series.map(({ bucketMs, ...counted }) => ({ bucket: new Date(bucketMs).toISOString(), ...counted })),
        topAnomalies: anomalies,
        topCountries: countries.map(({ label, count }) => ({ countryCode: label, count })),
        topHostnames: hostnames.map(({ label, count }) => ({ hostname: label, count })),
        topPageActions: pageActions.map(({ label, count }) => ({ pageAction: label, count })),
        scoreDistribution: buildScoreDistribution(scores),
        totals: { ...totals, total: totals.allow + totals.challenge + totals.block + totals.rejected },
        feedback: buildFeedbackFigures(labeled),
        siteverify: {
          from: siteverifyHours.from.toISOString(),
          to: siteverifyHours.to.toISOString(),
          issued,
          redeemed: redemptions.find(({ outcome }) => outcome === 'success')?.count ?? 0,
          redeemedFromOtherAddress: redemptions.find(({ outcome }) => outcome === REPORTED_MISMATCH_OUTCOME)?.count ?? 0,
          refused: redemptions
            .filter(({ outcome }) => outcome !== 'success' && outcome !== REPORTED_MISMATCH_OUTCOME)
            .map(({ outcome, count }) => ({ errorCode: outcome, count })),
          countedSince: countingStartedAt.toISOString(),
        },
      }
    },
  )
}

export default siteStatsRoutes
