/**
 * The vocabulary of anomaly labels: every contribution to a risk score is one of these labels, and
 * the score is explainable from the labels alone (see scoreVerification). Labels are stable
 * public names: they reach Siteverify answers, webhooks and the verification log, so a label is
 * never renamed or given another meaning; weights may be recalibrated.
 *
 * Weights are calibrated so that one weak signal alone stays below the default challenge
 * threshold (40), a clear automation marker alone reaches the default block threshold (70), and
 * weak signals add up.
 */
export const anomalyVocabulary = {
  // Request headers and user agent (header-signals.ts, automation-signals.ts)
  missing_origin: {
    weight: 10,
    reason: 'Neither Origin nor Referer names the calling page\'s host (absent, `null` or not a host name; Referer is read only without Origin); browsers send one when a page calls the API.',
  },
  missing_user_agent: {
    weight: 40,
    reason: 'No User-Agent header; every browser sends one.',
  },
  bot_user_agent: {
    weight: 70,
    reason: 'The User-Agent names a crawler, an HTTP library or a command-line tool.',
  },
  headless_user_agent: {
    weight: 50,
    reason: 'The User-Agent says HeadlessChrome: a browser without a window, driven by a program.',
  },
  missing_accept_language: {
    weight: 15,
    reason: 'No Accept-Language header; browsers always send the user\'s languages.',
  },
  missing_fetch_metadata: {
    weight: 25,
    reason: 'No Sec-Fetch-Mode or Sec-Fetch-Site header on a request to a service reached over HTTPS or a loopback host (over plain http to another host browsers send none), unless the User-Agent names a browser from before them (Chrome below 76, Firefox below 90, Safari or iOS below 16.4): every later browser sends both, and a User-Agent that names no browser, or none, gets the label too.',
  },
  user_agent_mismatch: {
    weight: 30,
    reason: 'The User-Agent disagrees with the platform, the client hints (their platform, or the major version of their Chromium, Google Chrome or Microsoft Edge brand) or the brands the page reported.',
  },

  // Browser fingerprint (fingerprint-signals.ts, automation-signals.ts)
  incomplete_fingerprint: {
    weight: 25,
    reason: 'One of the fingerprint fields the Tollgate SDK sends from every current browser is missing or of another type: webdriver (boolean), pluginsLength, languagesLength, screenWidth, outerWidth (numbers), platform, userAgentBrands (strings). The submission was most likely written by hand (or comes from a browser too old to have them).',
  },
  canvas_missing: {
    weight: 15,
    reason: 'The fingerprint has no canvas value; real browsers can render a canvas.',
  },
  canvas_constant: {
    weight: 25,
    reason: 'The canvas value is a placeholder (empty-like or one repeated character), not a rendering.',
  },
  webgl_missing: {
    weight: 10,
    reason: 'The fingerprint has no WebGL value; most browsers expose WebGL.',
  },
  webgl_constant: {
    weight: 20,
    reason: 'The WebGL value is a placeholder (empty-like or one repeated character).',
  },
  webgl_software_renderer: {
    weight: 25,
    reason: 'WebGL renders in software (SwiftShader, llvmpipe), as in headless and virtual machines.',
  },
  webdriver_detected: {
    weight: 70,
    reason: 'navigator.webdriver is true: the browser says it is under automation.',
  },
  headless_detected: {
    weight: 50,
    reason: 'The SDK found headless-browser markers in the page.',
  },
  automation_markers: {
    weight: 60,
    reason: 'Globals that automation tools leave in the page (Selenium, ChromeDriver, PhantomJS, Playwright) are present.',
  },
  patched_natives: {
    weight: 40,
    reason: 'The SDK found patched natives: the navigator.webdriver, plugins or languages getter defined on navigator itself or not native, or WebGL getParameter, permissions.query or Function.prototype.toString not native. Stealth setups replace them to hide automation and pages have no reason to; an anti-fingerprinting extension that rewrites WebGL can, so the label alone challenges and does not block.',
  },
  no_plugins: {
    weight: 15,
    reason: 'A desktop Chrome or Firefox lists no PDF viewer plugin, as headless builds do (and browsers set to download PDFs).',
  },

  // Behaviour (behavior-signals.ts, automation-signals.ts)
  no_interaction: {
    weight: 15,
    reason: 'No mouse movement, key, touch or scroll before the solution was sent.',
  },
  synthetic_input: {
    weight: 25,
    reason: 'Input events dispatched by a script (Event.isTrusted false) are at least as many as the person\'s own pointer moves, keys, clicks and touches: a page dispatches a few itself (a scroll event for lazy loading, a password manager\'s fill), a script driving the page all of them.',
  },
  robotic_input: {
    weight: 20,
    reason: 'Twenty or more pointer or key events at machine-regular intervals, which human input never produces.',
  },

  // Proof of work (timing-signals.ts, solver-signals.ts)
  solve_time_impossible: {
    weight: 50,
    reason: 'The claimed solve time is longer than the time the server saw between issuing and submission.',
  },
  client_ip_changed: {
    weight: 10,
    reason: 'The solution came from another IP address than the one the challenge was issued to.',
  },
  foreign_solver: {
    weight: 20,
    reason: 'The nonce is not laid out the way the Tollgate SDK searches: another program did the proof of work.',
  },
  solve_too_fast: {
    weight: 40,
    reason: 'The proof of work was done faster than a browser can hash at this difficulty: a native or GPU solver.',
  },

  // Network (network-signals.ts, from the offline IP data)
  datacenter_ip: {
    weight: 30,
    reason: 'The IP address belongs to a hosting or cloud provider, not an access network.',
  },
  vpn_detected: {
    weight: 20,
    reason: 'The IP address belongs to a known VPN or proxy provider.',
  },
  tor_exit: {
    weight: 35,
    reason: 'The IP address is a Tor exit relay (from the operator-provided exit list).',
  },

  // History of the client on this site (history-signals.ts, kept in Redis)
  high_request_rate: {
    weight: 20,
    reason: 'More than 30 challenges requested from this address for this site within the current minute.',
  },
  very_high_request_rate: {
    weight: 20,
    reason: 'More than 60 challenges requested from this address for this site within the current minute: always given with high_request_rate, so that together they weigh 40, the default challenge threshold.',
  },
  recent_blocks: {
    weight: 30,
    reason: 'Two or more verifications from this address were blocked on this site in the current or the previous quarter hour, or one was labeled fraudulent there by the site\'s server or operator (each block or label counts for 15 to 30 minutes).',
  },
  fingerprint_many_ips: {
    weight: 25,
    reason: 'The same device fingerprint came from 20 or more addresses on this site within an hour, or on a busy site from 5% of its traffic or more (a replayed fingerprint).',
  },

  // The site's blocklist (domain/sites/blocklist.ts): the operator's verdict, not a signal. Either
  // label alone is the whole scale, so its verification is blocked whatever the thresholds.
  address_blocked: {
    weight: 100,
    reason: 'The address is on the site\'s blocklist (blockedAddresses): the operator turns it away, and the submission is not judged otherwise.',
  },
  country_blocked: {
    weight: 100,
    reason: 'The IP data places the address in a country on the site\'s blocklist (blockedCountries): the operator turns it away, and the submission is not judged otherwise.',
  },
} as const satisfies Record<string, { weight: number; reason: string }>

export type AnomalyLabel = keyof typeof anomalyVocabulary

/** Every label in vocabulary order; scores list their labels in this order. */
export const anomalyLabels = Object.keys(anomalyVocabulary) as AnomalyLabel[]

/** Points taken off the score for every step-up the client has solved (DESIGN section 5). */
export const STEP_UP_CREDIT = 15

/** Scores are capped here; the scale is 0 (no signal) to 100 (certainly automated). */
export const MAX_RISK_SCORE = 100
