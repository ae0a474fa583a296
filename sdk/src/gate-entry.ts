/**
 * The script of the gate's page (src/routes/gate/gate-page.ts), served as `/sdk/v1/gate.js` and
 * loaded through the protected host, under the prefix its proxy forwards to Tollgate:
 *   <script src="/.tollgate/sdk/v1/gate.js" data-site-key="tgk_..." data-prefix="/.tollgate" async></script>
 * It checks the browser as any protected form does (the invisible proof of work, its signals and
 * step-ups), trades the token for the clearance cookie and loads the address again, now let through.
 */
import { execute, TollgateError } from './index.js'

const script = document.currentScript instanceof HTMLScriptElement ? document.currentScript : null
const siteKey = script?.dataset.siteKey ?? ''
const apiUrl = `${location.origin}${script?.dataset.prefix ?? '/.tollgate'}`

function show(title: string, text: string): void {
  const heading = document.getElementById('tollgate-gate-title')
  const status = document.getElementById('tollgate-gate-status')
  if (heading !== null) heading.textContent = title
  if (status !== null) status.textContent = text
}

/** The error code of a refused clearance, from the service's JSON error body. */
async function codeOf(answer: Response): Promise<string> {
  try {
    const body = (await answer.json()) as { error?: { code?: unknown } }
    return typeof body.error?.code === 'string' ? body.error.code : `HTTP ${answer.status}`
  } catch {
    return `HTTP ${answer.status}`
  }
}

/** One check and trade; a token that was spent on the way (a second tab) gets one more try. */
async function pass(triesLeft: number): Promise<void> {
  const { token } = await execute({ siteKey, apiUrl, assetsUrl: `${apiUrl}/sdk/v1/` })
  const answer = await fetch(`${apiUrl}/gate/v1/clearance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ siteKey, token }),
    credentials: 'same-origin',
  })
  if (answer.ok) {
    show('Thank you', 'Taking you to the page…')
    // A GET of the same address, whatever method brought the visitor here.
    location.replace(location.href)
    return
  }
  const code = await codeOf(answer)
  if (code === 'token_spent' && triesLeft > 0) return pass(triesLeft - 1)
  throw new TollgateError('server_error', `The clearance was refused (${code}).`)
}

pass(1).catch((error: unknown) => {
  if (error instanceof TollgateError && error.code === 'blocked') {
    show('Access denied', "This site's protection turned this browser away. If you are a person, try another browser or network, or tell the site's owner.")
    return
  }
  const reason = error instanceof TollgateError ? error.code : 'error'
  show('Something went wrong', `Your browser could not be checked (${reason}). Load the page again to retry.`)
})
