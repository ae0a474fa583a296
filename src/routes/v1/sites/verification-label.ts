import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { findLabelNoteProblem, findReasonProblem, LABEL_NOTE_MAX_LENGTH, LABEL_REASONS, VERIFICATION_LABELS } from '../../../domain/feedback/verification-label.js'
import type { Site } from '../../../domain/sites/site.js'
import { ApiError, throwIfInvalid } from '../../../errors.js'
import { createVerificationLabelRepository, type LabelTarget } from '../../../storage/sql/verification-label-repository.js'
import { auditedSiteTransaction, recordSiteAudit } from '../audit-log/audit-trail.js'
import { authenticatedErrors, dashboardSecurity, ErrorResponse, siteChangeErrors } from '../dashboard-schemas.js'
import { stringEnum } from '../public-schemas.js'
import { followLabel } from '../verification-labels.js'

const LabelParams = Type.Object({
  id: Type.String({ description: "The site's id (UUID)" }),
  rowId: Type.String({ description: "The row's id in the site's log (`id` in the listing, not Siteverify's verificationId; UUID)" }),
})

const LabelBody = Type.Object(
  {
    label: stringEnum(VERIFICATION_LABELS, { description: 'What the visitor turned out to be' }),
    reason: Type.Optional(Type.Union([stringEnum(LABEL_REASONS), Type.Null()], { description: 'Why, from a fixed list' })),
    note: Type.Optional(Type.Union([Type.String({ maxLength: LABEL_NOTE_MAX_LENGTH }), Type.Null()], { description: `Up to ${LABEL_NOTE_MAX_LENGTH} characters` })),
  },
  { additionalProperties: false },
)

const LabelView = Type.Object({
  verificationId: Type.String({ format: 'uuid', description: "Siteverify's metadata.verification_id of the row" }),
  label: stringEnum(VERIFICATION_LABELS),
  labelReason: Type.Union([stringEnum(LABEL_REASONS), Type.Null()]),
  labelNote: Type.Union([Type.String(), Type.Null()]),
  labeledAt: Type.String({ format: 'date-time' }),
  labelSource: Type.Literal('dashboard'),
})

/** An operator's labels on the rows of a site's log, as the site's backend sets them through Siteverify's feedback. */
const verificationLabelRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const notFound = () => new ApiError('not_found', 'There is no scored verification with this id in the site\'s log.')

  /** The site and the labelable row the path names; one spot for the site's access check. */
  async function targetOf(request: FastifyRequest<{ Params: Type.Static<typeof LabelParams> }>): Promise<{ site: Site; target: LabelTarget }> {
    const site = (await app.findSite(request, request.params.id, 'manage')).site
    const target = await createVerificationLabelRepository(app.database).findTarget(site.id, { rowId: request.params.rowId.toLowerCase() })
    if (target === undefined) throw notFound()
    return { site, target }
  }

  app.put(
    '/sites/:id/verifications/:rowId/label',
    {
      schema: {
        tags: ['dashboard'],
        summary: 'Label a verification legitimate or fraudulent',
        description:
          'Replaces any label it had (from the site\'s backend too). Only scored rows (allow, challenge, block) take one. ' +
          'A fraudulent label on a verification younger than 30 minutes makes the next challenges of its client harder for up to 30 minutes ' +
          '(an older one\'s address may have changed hands).',
        security: dashboardSecurity,
        params: LabelParams,
        body: LabelBody,
        response: { 200: LabelView, 400: ErrorResponse, 404: ErrorResponse, ...siteChangeErrors, ...authenticatedErrors },
      },
    },
    async (request) => {
      const { label: wanted, reason, note } = request.body
      const problems = [
        { field: 'reason', message: reason === undefined || reason === null ? undefined : findReasonProblem(wanted, reason) },
        { field: 'note', message: typeof note === 'string' ? findLabelNoteProblem(note) : undefined },
      ].flatMap(({ field, message }) => (message === undefined ? [] : [{ field, message }]))
      throwIfInvalid(problems)
      const { site, target } = await targetOf(request)
      const { id: rowId, verificationId } = target
      const label = { label: request.body.label, reason: request.body.reason ?? null, note: request.body.note || null, source: 'dashboard' as const }
      const labeledAt = new Date()
      const change = await auditedSiteTransaction(app, request, site, 'manage', async (transaction, locked) => {
        const changed = await createVerificationLabelRepository(transaction).setLabel(site.id, rowId, label, labeledAt)
        if (changed === undefined) throw notFound()
        await recordSiteAudit(transaction, request, { action: 'verification.labeled', site: locked, details: { rowId, verificationId, label: label.label, reason: label.reason } })
        return changed
      })
      await followLabel(app, site.id, target, label, change.previous)
      return { verificationId, label: label.label, labelReason: label.reason, labelNote: label.note, labeledAt: labeledAt.toISOString(), labelSource: 'dashboard' as const }
    },
  )

  app.delete(
    '/sites/:id/verifications/:rowId/label',
    {
      schema: {
        tags: ['dashboard'],
        summary: "Remove a verification's label",
        description: 'Answers 204, also when it had none. What a fraudulent label added to its client\'s history stays until its window ends.',
        security: dashboardSecurity,
        params: LabelParams,
        response: { 204: Type.Null(), 404: ErrorResponse, ...siteChangeErrors, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const { site, target } = await targetOf(request)
      const { id: rowId, verificationId } = target
      await auditedSiteTransaction(app, request, site, 'manage', async (transaction, locked) => {
        if (await createVerificationLabelRepository(transaction).clearLabel(site.id, rowId)) {
          await recordSiteAudit(transaction, request, { action: 'verification.label_removed', site: locked, details: { rowId, verificationId } })
        }
      })
      return reply.code(204).send(null)
    },
  )
}

export default verificationLabelRoutes
