import { escapeHtml } from '../demo/demo-page.js'
import { directionOf, type Language } from '../../../sdk/src/choose-language.js'
import type { GateStrings } from './gate-strings.js'
import { helpLinkTemplateOf } from './help-link.js'

/** What the gate's page is rendered from. */
export interface GatePageInput {
  siteKey: string
  /** Where the protected host forwards to Tollgate (`/.tollgate`): the page loads the SDK and calls the API there. */
  prefix: string
  /** The method of the visitor's request, when the proxy said (X-Forwarded-Method). */
  method: string | undefined
  /** The page's language (gate-strings.ts), which also sets its direction (right to left for Arabic, Hebrew, Persian), and its texts. */
  language: Language
  strings: GateStrings
  /** The site's help link for blocked visitors (settings.blockedHelpUrl), or null. */
  helpUrl: string | null
}

/**
 * The page's own policy: everything from the protected host itself (the SDK, its worker and the
 * API, all under the prefix), its one inline style, and nothing that could frame or post it.
 */
export const GATE_PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "style-src 'unsafe-inline'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** JSON that cannot end the script element it is in (no `<`: no `</script>`, no `<!--`). */
function inertJson(value: unknown): string {
  return JSON.stringify(value).replaceAll('<', '\\u003c')
}

/** The hidden help link (helpLinkTemplateOf says where the reference goes), or nothing without one. */
function helpLinkOf(helpUrl: string | null, strings: GateStrings): string {
  if (helpUrl === null) return ''
  return `\n<a id="tollgate-gate-help" href="${escapeHtml(helpUrl)}" data-reference-href="${escapeHtml(helpLinkTemplateOf(helpUrl))}" hidden>${escapeHtml(strings.contactOwner)}</a>`
}

/**
 * The page a visitor without a clearance gets instead of the protected one: gate.js checks the
 * browser (the SDK's invisible proof of work and signals), trades the token for the clearance
 * cookie and loads the address again, saying so in the page's language (its texts ride in a JSON
 * block, which no policy counts as script). Without JavaScript it says only what is missing, as its
 * one heading: the heading and the status that wait for the script are hidden (an inline style,
 * which the policy allows).
 * When the script never comes (blocked, a network lost on the way), the page's CSS alone (the
 * policy forbids inline script) reveals a link that loads the address again after
 * `--tollgate-gate-wait` (15 s): an animation of visibility, not motion, so it shows under
 * prefers-reduced-motion too; gate.js removes it once it has something to say.
 * A site's help link for blocked visitors waits hidden: when the visitor is turned away, gate.js
 * puts its reference in it and moves it into the status, which announces it with the rest, as the
 * page's one link (the first stop of the Tab key).
 */
export function renderGatePage({ siteKey, prefix, method, language, strings, helpUrl }: GatePageInput): string {
  // Its script reloads an address with a fragment only when the visitor came with a GET.
  const methodAttribute = method === undefined || !/^[A-Z]{1,20}$/.test(method) ? '' : ` data-method="${method}"`
  return `<!doctype html>
<html lang="${escapeHtml(language)}" dir="${directionOf(language)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(strings.title)}</title>
<style>
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; font: 16px/1.5 system-ui, sans-serif; color: #1f2328; background: #f6f8fa; }
  main { max-width: 32rem; padding: 2rem; text-align: center; }
  h1 { font-size: 1.4rem; margin: 0 0 .5rem; }
  #tollgate-gate-reference { display: block; margin-top: .5rem; font-size: .875rem; opacity: .8; }
  #tollgate-gate-help:not([hidden]) { display: block; margin-top: .75rem; }
  #tollgate-gate-retry { margin-top: 1rem; padding: .4rem 1.2rem; font: inherit; }
  #tollgate-gate-waiting { visibility: hidden; animation: tollgate-gate-reveal 0s var(--tollgate-gate-wait, 15s) forwards; }
  @keyframes tollgate-gate-reveal { to { visibility: visible; } }
  a { color: #0550ae; }
  @media (prefers-color-scheme: dark) { a { color: #79c0ff; } }
  @media (prefers-color-scheme: dark) { body { color: #e6edf3; background: #0d1117; } }
</style>
<noscript><style>#tollgate-gate-title, #tollgate-gate-status, #tollgate-gate-waiting { display: none; }</style></noscript>
</head>
<body>
<main>
<h1 id="tollgate-gate-title">${escapeHtml(strings.title)}</h1>
<p id="tollgate-gate-status" role="status">${escapeHtml(strings.checking)}</p>
<p id="tollgate-gate-waiting" role="status">${escapeHtml(strings.stillWaiting)} <a href="">${escapeHtml(strings.reloadLink)}</a></p>
<noscript><h1>${escapeHtml(strings.noscript)}</h1></noscript>${helpLinkOf(helpUrl, strings)}
</main>
<script type="application/json" id="tollgate-gate-strings">${inertJson(strings)}</script>
<script src="${escapeHtml(prefix)}/sdk/v1/gate.js" data-site-key="${escapeHtml(siteKey)}" data-prefix="${escapeHtml(prefix)}"${methodAttribute} async></script>
</body>
</html>
`
}
