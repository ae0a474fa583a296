import type { FastifyReply } from 'fastify'
import type { Site } from '../../../domain/sites/site.js'

/**
 * Sets the ETag of the site the answer shows, for a later If-Match: its revision, a strong
 * validator (every change of the row counts it up).
 */
export function tagWithRevision(reply: FastifyReply, site: Site): void {
  reply.header('etag', revisionTagOf(site))
}

/** The ETag of the site as it is now. */
export function revisionTagOf(site: Pick<Site, 'revision'>): string {
  return `"${site.revision}"`
}

/**
 * The revisions an If-Match header accepts, or undefined when it sets no condition (absent, or
 * `*`, which any existing site meets). If-Match compares strongly (RFC 9110, 13.1.1), so weak
 * tags (`W/"3"`) and anything that is no tag match no revision: a list of only those is refused.
 */
export function revisionsAcceptedBy(header: string | undefined): string[] | undefined {
  if (header === undefined || header.trim() === '' || header.trim() === '*') return undefined
  return header.split(',').flatMap((each) => /^\s*"(\d{1,19})"\s*$/.exec(each)?.slice(1) ?? [])
}

/** The ETag header as the OpenAPI document lists it (schema.responseHeaders). */
export const etagHeader = {
  ETag: { type: 'string', description: 'The site\'s revision: send it as If-Match with a PUT to refuse the update if the site has changed since' },
} as const
