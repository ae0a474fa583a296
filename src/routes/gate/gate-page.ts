/** What the gate's page says while the browser is checked, and the ids its script fills in. */
export interface GatePageInput {
  siteKey: string
  /** Where the protected host forwards to Tollgate (`/.tollgate`): the page loads the SDK and calls the API there. */
  prefix: string
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

function escapeAttribute(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
}

/**
 * The page a visitor without a clearance gets instead of the protected one: gate.js checks the
 * browser (the SDK's invisible proof of work and signals), trades the token for the clearance
 * cookie and loads the address again. Without JavaScript it says what is missing.
 */
export function renderGatePage({ siteKey, prefix }: GatePageInput): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>Just a moment</title>
<style>
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; font: 16px/1.5 system-ui, sans-serif; color: #1f2328; background: #f6f8fa; }
  main { max-width: 32rem; padding: 2rem; text-align: center; }
  h1 { font-size: 1.4rem; margin: 0 0 .5rem; }
  @media (prefers-color-scheme: dark) { body { color: #e6edf3; background: #0d1117; } }
</style>
</head>
<body>
<main>
<h1 id="tollgate-gate-title">Just a moment</h1>
<p id="tollgate-gate-status" role="status">Checking that you are a person. This takes a second or two and needs nothing from you.</p>
<noscript><p>This site needs JavaScript to let you in: turn it on and load the page again.</p></noscript>
</main>
<script src="${escapeAttribute(prefix)}/sdk/v1/gate.js" data-site-key="${escapeAttribute(siteKey)}" data-prefix="${escapeAttribute(prefix)}" async></script>
</body>
</html>
`
}
