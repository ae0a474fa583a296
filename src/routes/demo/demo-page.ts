/**
 * The HTML of /demo. No inline script or style: the page runs under the strict
 * Content-Security-Policy that the SDK README recommends, to show that it is enough.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`)
}

function layout(title: string, body: string, script = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/demo/demo.css">
<link rel="icon" href="/dashboard/favicon.svg" type="image/svg+xml">
</head>
<body>
<main>
${body}
</main>
${script}
</body>
</html>
`
}

export function renderDemoPage(siteKey: string, serviceOrigin: string): string {
  const snippet = `<script src="${serviceOrigin}/sdk/v1/tollgate.js" data-site-key="${siteKey}" async defer></script>
<form method="post" action="/signup" data-tollgate>
  ...
</form>`
  // The code sample scrolls sideways on a narrow screen: a focusable, named region, so that the keyboard scrolls it too.
  return layout('Tollgate demo', `<h1>Tollgate demo</h1>
<p>Both forms are protected by the Tollgate SDK. When you submit one, the SDK solves a proof of work in
Web Workers, sends it with the browser signals, and puts the token in the form. This server then redeems the
token with Siteverify and shows you its answer.</p>
<section aria-labelledby="signup-title">
<h2 id="signup-title">Sign up</h2>
<form id="signup-form" method="post" action="/demo" data-tollgate>
<input type="hidden" name="form" value="signup">
<label for="signup-email">E-mail address</label>
<input id="signup-email" type="email" name="email" autocomplete="email" required>
<button type="submit">Sign up</button>
</form>
</section>
<section aria-labelledby="contact-title">
<h2 id="contact-title">Contact us</h2>
<form id="contact-form" method="post" action="/demo" data-tollgate>
<input type="hidden" name="form" value="contact">
<label for="contact-message">Message</label>
<textarea id="contact-message" name="message" rows="3" required></textarea>
<button type="submit">Send</button>
</form>
</section>
<h2>On your site</h2>
<pre tabindex="0" role="region" aria-label="Code sample"><code>${escapeHtml(snippet)}</code></pre>
<p>Your backend then posts <code>secret</code> and <code>response</code> (the <code>tollgate-token</code> field) to
<code>/api/v1/siteverify</code>. See <code>sdk/README.md</code>.</p>`,
  `<script src="/sdk/v1/tollgate.js" data-site-key="${escapeHtml(siteKey)}" async defer></script>`)
}

export function renderNoDemoSite(): string {
  return layout('Tollgate demo', `<h1>Tollgate demo</h1>
<p role="alert">There is no demo site in this environment. The demo site is created when the service runs in
development (<code>npm start</code> without <code>NODE_ENV</code>); its keys are printed at start.</p>`)
}

export interface DemoOutcome {
  form: string
  success: boolean
  errorCodes: string[]
  action: string | undefined
  riskScore: number | undefined
  hostname: string | undefined
  challengeTs: string | undefined
  /** Whether this server's view of the visitor's address is where the token was earned (null: not compared). */
  remoteipMatch: boolean | null | undefined
}

export function renderOutcome(outcome: DemoOutcome): string {
  const rows: [string, string][] = [
    ['Form', outcome.form],
    ['success', String(outcome.success)],
    ['error-codes', outcome.errorCodes.length === 0 ? '(none)' : outcome.errorCodes.join(', ')],
    ['action', outcome.action ?? '-'],
    ['riskScore', outcome.riskScore === undefined ? '-' : String(outcome.riskScore)],
    ['hostname', outcome.hostname ?? '-'],
    ['challenge_ts', outcome.challengeTs ?? '-'],
    ['remoteipMatch', outcome.remoteipMatch === undefined || outcome.remoteipMatch === null ? '- (not compared)' : String(outcome.remoteipMatch)],
  ]
  const verdict = outcome.success
    ? `Siteverify accepted the token; the recommended action is ${outcome.action ?? 'allow'}.`
    : 'Siteverify rejected the token.'
  return layout('Tollgate demo: result', `<h1>Result</h1>
<p id="verdict" role="status" class="${outcome.success ? 'ok' : 'failed'}">${escapeHtml(verdict)}</p>
<table>
<caption>The Siteverify answer this server received</caption>
${rows.map(([name, value]) => `<tr><th scope="row">${escapeHtml(name)}</th><td data-field="${escapeHtml(name)}">${escapeHtml(value)}</td></tr>`).join('\n')}
</table>
<p><a href="/demo">Back to the demo</a></p>`)
}

export const demoStyles = `body { font-family: system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1d2330; }
main { max-width: 42rem; margin: 2rem auto; padding: 0 1rem; }
section { background: #fff; border: 1px solid #d8dce3; border-radius: 8px; padding: 1rem 1.25rem; margin: 1rem 0; }
label { display: block; font-weight: 600; margin-bottom: .25rem; }
input, textarea { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; border: 1px solid #9aa3b2; border-radius: 4px; }
button { margin-top: .75rem; padding: .5rem 1rem; font: inherit; border: 1px solid transparent; border-radius: 4px; background: #1f5fbf; color: #fff; cursor: pointer; }
button:focus-visible, input:focus-visible, textarea:focus-visible, pre:focus-visible { outline: 3px solid #b45309; outline-offset: 2px; }
button[aria-disabled="true"] { cursor: progress; opacity: .75; }
.tollgate-status { min-height: 1.5em; margin-top: .5rem; color: #3a4252; }
pre { background: #1d2330; color: #f6f7f9; padding: 1rem; overflow-x: auto; border-radius: 6px; }
table { border-collapse: collapse; background: #fff; }
th, td { text-align: left; padding: .35rem .75rem; border: 1px solid #d8dce3; }
.ok { color: #126b2f; font-weight: 600; }
.failed { color: #a11d1d; font-weight: 600; }
`
