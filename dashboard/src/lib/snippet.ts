/** The HTML a site owner pastes into a page: the SDK and a form it protects. */
export function buildSnippet(origin: string, siteKey: string): string {
  return [
    `<script src="${origin}/sdk/v1/tollgate.js" data-site-key="${siteKey}" async defer></script>`,
    '<form data-tollgate method="post" action="/your-endpoint">',
    '  <!-- your fields; the SDK adds a hidden tollgate-token field -->',
    '  <button type="submit">Send</button>',
    '</form>',
  ].join('\n')
}

/** Entries of a list field (domains, addresses) typed one per line, or separated by commas or spaces. */
export function parseListEntries(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((domain) => domain.trim())
    .filter((domain) => domain !== '')
}
