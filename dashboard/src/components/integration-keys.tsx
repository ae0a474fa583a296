import type { RefObject } from 'preact'
import { buildSnippet } from '../lib/snippet.js'
import { SecretBox } from './secret-box.js'

interface IntegrationKeysProps {
  siteKey: string
  /** Present only right after creation or rotation: the API never shows it again. */
  secretKey?: string
  secretKeyInput?: RefObject<HTMLInputElement | null>
}

/** The site key, the one-time secret key and the snippet, each with a copy button. */
export function IntegrationKeys({ siteKey, secretKey, secretKeyInput }: IntegrationKeysProps) {
  const origin = window.location.origin
  return (
    <div class="stack">
      <SecretBox id="site-key" label="Site key" value={siteKey} />
      {secretKey === undefined ? null : (
        <div class="one-time">
          <SecretBox id="secret-key" label="Secret key" value={secretKey} inputRef={secretKeyInput} />
          <p class="one-time__warning">
            <strong>Copy the secret key now.</strong> It is shown only once; your server uses it for Siteverify. If you
            lose it, rotate the secret.
          </p>
        </div>
      )}
      <SecretBox id="snippet" label="Snippet" value={buildSnippet(origin, siteKey)} isMultiline />
      <p class="muted">
        Paste the snippet into the page with your form. Your server then redeems the <code>tollgate-token</code> field
        once with <code>POST {origin}/api/v1/siteverify</code> and the fields <code>secret</code> and{' '}
        <code>response</code>.
      </p>
      <p class="muted">
        Moving from Turnstile, reCAPTCHA or hCaptcha? The page may stay as it is: change its script's host to{' '}
        <code>{origin}</code> (<code>{origin}/turnstile/v0/api.js</code>, <code>/recaptcha/api.js</code>,{' '}
        <code>/recaptcha/enterprise.js</code>, <code>/1/api.js</code>, or <code>/sdk/v1/compat.js</code> for all three) and
        its site key to this one, and your server calls the same Siteverify path on <code>{origin}</code> with the secret
        key. A reCAPTCHA Enterprise server keeps its createAssessment call, <code>POST {origin}/v1/projects/…/assessments</code>,
        with the secret key as its API key (<code>?key=</code>).
        If the page sends a Content-Security-Policy, swapping the vendor's host for <code>{origin}</code> is not
        enough: add <code>worker-src blob:</code> (without it no token comes; Turnstile's error callback gets{' '}
        <code>110500</code>) and <code>'wasm-unsafe-eval'</code> to <code>script-src</code> (without it solving is
        about five times slower), and name <code>{origin}</code> in <code>connect-src</code> when the policy has one
        or a <code>default-src</code>. A checkbox widget gets its token as soon as it is shown: a callback that
        submits the form would submit it on load.
      </p>
      <p class="muted">
        Testing with a headless or automated browser (Playwright, Selenium)? It is scored as the bot it is, and
        blocked. In those tests use the test site key <code>1x00000000000000000000AA</code> with the test secret{' '}
        <code>1x0000000000000000000000000000000AA</code> (Turnstile's, reCAPTCHA's and hCaptcha's own test keys work
        too), or put the test machine's addresses in this site's Allowed
        addresses (<code>127.0.0.1</code> and <code>::1</code> when it runs beside Tollgate; <code>sdk/README.md</code>,
        "In your own browser tests", in Tollgate's repository).
      </p>
      <p class="muted">
        A whole site, without changing its code? Your reverse proxy (nginx, Caddy, Traefik) asks{' '}
        <code>
          {origin}/gate/v1/check?sitekey={siteKey}
        </code>{' '}
        about every request, and browsers it has not seen get a page that checks them first (<code>docs/gate.md</code>{' '}
        in Tollgate's repository has the configurations).
      </p>
    </div>
  )
}
