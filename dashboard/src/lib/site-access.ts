import type { Site } from '../api/types.js'

/**
 * What the account's role lets the page offer. The API checks every request on its own (a
 * viewer's change is a 403 whatever the page shows): these only keep the page from offering
 * controls that could not work.
 */
export function canChangeSite(site: Pick<Site, 'role'>): boolean {
  return site.role !== 'viewer'
}

/** Deleting a site is its owner's alone: an admin may do all else. */
export function canDeleteSite(site: Pick<Site, 'role'>): boolean {
  return site.role === 'owner'
}
