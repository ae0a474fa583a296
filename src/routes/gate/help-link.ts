/** Where a help link's reference goes: gate.js replaces it with the verification's reference, percent-encoded. */
export const REFERENCE_PLACEHOLDER = '{reference}'

/**
 * A site's help link for blocked visitors (settings.blockedHelpUrl, normalized by the URL parser)
 * with a place for the verification's reference, which the site's owner looks up in its log: the
 * `ref` query parameter of an http(s) URL, after the URL's own query and before its fragment; for
 * a mailto: address a line of the message's body (`Reference: <ref>`), after a body the address
 * already has, beside its other fields (subject, cc).
 */
export function helpLinkTemplateOf(url: string): string {
  const hashAt = url.indexOf('#')
  const [base, fragment] = hashAt === -1 ? [url, ''] : [url.slice(0, hashAt), url.slice(hashAt)]
  const queryAt = base.indexOf('?')
  const [path, query] = queryAt === -1 ? [base, ''] : [base.slice(0, queryAt), base.slice(queryAt + 1)]
  const fields = query.split('&').filter((field) => field !== '')
  if (/^mailto:/i.test(url)) {
    const line = `Reference:%20${REFERENCE_PLACEHOLDER}`
    const bodyAt = fields.findIndex((field) => /^body=/i.test(field))
    if (bodyAt === -1) fields.push(`body=${line}`)
    else fields[bodyAt] = `${fields[bodyAt]}%0A%0A${line}`
  } else {
    fields.push(`ref=${REFERENCE_PLACEHOLDER}`)
  }
  return `${path}?${fields.join('&')}${fragment}`
}
