/**
 * The script of the gate's page (src/routes/gate/gate-page.ts), served as `/sdk/v1/gate.js` and
 * loaded through the protected host, under the prefix its proxy forwards to Tollgate:
 *   <script src="/.tollgate/sdk/v1/gate.js" data-site-key="tgk_..." data-prefix="/.tollgate" async></script>
 * It checks the browser as any protected form does (the invisible proof of work, its signals and
 * step-ups), trades the token for the clearance cookie and loads the address again, now let through.
 */
import { TollgateError } from './index.js'
// From its own module: index.ts wraps it for servers, where this script never runs.
import { execute } from './execute.js'

const script = document.currentScript instanceof HTMLScriptElement ? document.currentScript : null
const siteKey = script?.dataset.siteKey ?? ''
const apiUrl = `${location.origin}${script?.dataset.prefix ?? '/.tollgate'}`
/** The method that brought the visitor here, when the proxy said (X-Forwarded-Method). */
const method = script?.dataset.method ?? 'GET'
const PROBE_COOKIE = 'tollgate_gate_probe'

/**
 * A browser that got its cookie and is back at the gate within this long did not keep it or
 * showed up from another address (cookies blocked, an address that changes with every
 * connection): after two such returns the page says so instead of checking it again and again.
 */
const RETURN_WINDOW_MS = 30_000
const MAX_RETURNS = 2
const RETURNS_KEY = 'tollgate-gate-returns'

/** The page's texts in its language, which the service rendered into it (src/routes/gate/gate-strings.ts). */
type GateText = 'passed' | 'denied' | 'rateLimited' | 'failed' | 'loop' | 'cookies'
const strings = ((): Partial<Record<string, string>> => {
  try {
    return JSON.parse(document.getElementById('tollgate-gate-strings')?.textContent ?? '{}') as Partial<Record<string, string>>
  } catch {
    return {}
  }
})()

/**
 * Shows one of the page's texts under its heading (`{code}` in it replaced by the error's code, isolated),
 * with the reference of a visitor turned away on a line of its own (isolated: one piece on a right-to-left page), which the site's owner looks
 * up in its log: inside the status, so that a screen reader announces it with the rest.
 */
function show(text: GateText, code = '', reference?: string): void {
  const heading = document.getElementById('tollgate-gate-title')
  const status = document.getElementById('tollgate-gate-status')
  if (heading !== null) heading.textContent = strings[`${text}Title`] ?? text
  if (status !== null) {
    // Both isolated (U+2068 to U+2069), so that each reads as one piece, left to right, on a right-to-left page.
    status.textContent = (strings[text] ?? code).replace('{code}', `\u2068${code}\u2069`)
    if (reference !== undefined) {
      const line = document.createElement('span')
      line.id = 'tollgate-gate-reference'
      line.textContent = (strings.reference ?? 'Reference: {reference}').replace('{reference}', `\u2068${reference}\u2069`)
      status.append(' ', line)
    }
    if (text === 'denied') offerHelp(status, reference)
  }
  document.title = heading?.textContent ?? document.title
  // The page's own "Still waiting?" (its CSS reveals it when this script never ran) is not needed now.
  document.getElementById('tollgate-gate-waiting')?.remove()
  if (text !== 'passed' && text !== 'denied') offerRetry(status)
}

/**
 * Reveals the site's help link for blocked visitors, when the page has one (gate-page.ts), with the
 * reference where the page's template says, inside the status: announced with it, and the page's
 * one link, reached by the first press of Tab.
 */
function offerHelp(status: HTMLElement, reference: string | undefined): void {
  const help = document.getElementById('tollgate-gate-help')
  if (!(help instanceof HTMLAnchorElement)) return
  const template = help.dataset.referenceHref
  if (reference !== undefined && template !== undefined) help.href = template.replace('{reference}', encodeURIComponent(reference))
  help.hidden = false
  status.append(' ', help)
}

/**
 * Puts a "Try again" button under the status (its texts say to load the page again) and moves the
 * focus to it, so that a keyboard or screen reader user lands on the way out of the error.
 */
function offerRetry(status: HTMLElement | null): void {
  const button = document.createElement('button')
  button.type = 'button'
  button.id = 'tollgate-gate-retry'
  button.textContent = strings.retry ?? 'Try again'
  button.addEventListener('click', loadAgain)
  status?.after(button)
  button.focus()
}

/**
 * Loads the address again, with a GET. Replacing the address with itself is only a jump within
 * the page when it has a fragment: reached with a GET, such an address is reloaded; reached with a
 * POST (a form's action may have a fragment), a reload would post the form again, so it is left
 * without its fragment.
 */
function loadAgain(): void {
  if (location.hash === '') location.replace(location.href)
  else if (method === 'GET' || method === 'HEAD') location.reload()
  else location.replace(location.href.slice(0, location.href.indexOf('#')))
}

interface Returns {
  count: number
  clearedAt: number
}

/** The returns counted in this tab (sessionStorage may be off or full: then nothing is counted). */
function readReturns(): Returns {
  try {
    const saved = JSON.parse(sessionStorage.getItem(RETURNS_KEY) ?? 'null') as Returns | null
    return saved !== null && Date.now() - saved.clearedAt < RETURN_WINDOW_MS ? saved : { count: 0, clearedAt: 0 }
  } catch {
    return { count: 0, clearedAt: 0 }
  }
}

function saveReturns(returns: Returns): void {
  try {
    sessionStorage.setItem(RETURNS_KEY, JSON.stringify(returns))
  } catch {
    // Without sessionStorage the page cannot tell a loop from a first visit; it checks as usual.
  }
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

/**
 * Whether the browser keeps this site's cookies: a browser that blocks them (and with them its
 * storage) would otherwise be checked and sent back here for ever.
 */
function keepsCookies(): boolean {
  try {
    document.cookie = `${PROBE_COOKIE}=1; path=/; SameSite=Lax`
    const isKept = document.cookie.split('; ').includes(`${PROBE_COOKIE}=1`)
    document.cookie = `${PROBE_COOKIE}=; path=/; max-age=0; SameSite=Lax`
    return isKept
  } catch {
    return false
  }
}

/** Loads the address again, with a GET, now that the cookie is set. */
function goOn(returns: Returns): void {
  saveReturns({ count: returns.count, clearedAt: Date.now() })
  show('passed')
  loadAgain()
}

/** One check and trade; a token spent on the way (the call answered but its answer lost) gets one more try. */
async function pass(returns: Returns, triesLeft: number): Promise<void> {
  // The page action names the gate in the site's log and stats, beside its forms' actions.
  const { token } = await execute({ siteKey, apiUrl, assetsUrl: `${apiUrl}/sdk/v1/`, action: 'gate' })
  const answer = await fetch(`${apiUrl}/gate/v1/clearance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ siteKey, token }),
    credentials: 'same-origin',
  })
  if (answer.ok) return goOn(returns)
  const code = await codeOf(answer)
  if (code === 'token_spent' && triesLeft > 0) return pass(returns, triesLeft - 1)
  throw new TollgateError(code === 'rate_limited' ? 'rate_limited' : 'server_error', `The clearance was refused (${code}).`)
}

/** What the visitor is told when the check ends without a cookie. */
function explain(error: unknown): void {
  const typed = error instanceof TollgateError ? error : undefined
  const code = typed?.code ?? 'error'
  if (code === 'blocked' || code === 'challenge_failed') show('denied', code, typed?.reference)
  else if (code === 'rate_limited') show('rateLimited', code)
  else show('failed', code)
}

const returns = readReturns()
if (!keepsCookies()) {
  show('cookies')
} else if (returns.clearedAt > 0 && returns.count + 1 >= MAX_RETURNS) {
  saveReturns({ count: 0, clearedAt: 0 })
  show('loop')
} else {
  pass({ count: returns.clearedAt > 0 ? returns.count + 1 : 0, clearedAt: returns.clearedAt }, 1).catch(explain)
}
