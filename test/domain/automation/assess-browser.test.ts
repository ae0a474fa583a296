import { describe, expect, it } from 'vitest'
import { assessBrowser } from '../../../src/domain/automation/assess-browser.js'
import { hashTextCompact } from '../../../sdk/src/signals/hash-text.js'
import { chromeUserAgent, evidenceWith, firefoxUserAgent, headlessUserAgent, iphoneUserAgent } from './fixtures.js'

describe('assessBrowser', () => {
  it('finds nothing wrong with a person in Chrome', () => {
    expect(assessBrowser(evidenceWith())).toEqual([])
  })

  it('finds nothing wrong with Firefox and iPhone Safari, which send no client hints', () => {
    const noHints = { 'sec-ch-ua': undefined, 'sec-ch-ua-mobile': undefined, 'sec-ch-ua-platform': undefined }
    expect(assessBrowser(evidenceWith({ headers: { ...noHints, 'user-agent': firefoxUserAgent }, fingerprint: { userAgentBrands: '' } }))).toEqual([])
    const iphone = evidenceWith({
      headers: { ...noHints, 'user-agent': iphoneUserAgent },
      fingerprint: { userAgentBrands: '', platform: 'iPhone', pluginsLength: 0, maxTouchPoints: 5 },
    })
    expect(assessBrowser(iphone)).toEqual([])
  })

  describe('request', () => {
    it('flags a request without fetch metadata', () => {
      expect(assessBrowser(evidenceWith({ headers: { 'sec-fetch-mode': undefined } }))).toEqual(['missing_fetch_metadata'])
      expect(assessBrowser(evidenceWith({ headers: { 'sec-fetch-site': undefined } }))).toEqual(['missing_fetch_metadata'])
    })

    it('accepts a request without fetch metadata from a browser older than fetch metadata (an iPhone kept on iOS 15)', () => {
      const noFetchMetadata = { 'sec-fetch-mode': undefined, 'sec-fetch-site': undefined, 'sec-fetch-dest': undefined }
      const noHints = { 'sec-ch-ua': undefined, 'sec-ch-ua-mobile': undefined, 'sec-ch-ua-platform': undefined }
      const iphoneOn = (userAgent: string) =>
        assessBrowser(evidenceWith({
          headers: { ...noFetchMetadata, ...noHints, 'user-agent': userAgent },
          fingerprint: { userAgentBrands: '', platform: 'iPhone', pluginsLength: 0, maxTouchPoints: 5 },
        }))
      expect(iphoneOn(iphoneUserAgent.replaceAll('18_5', '15_8').replace('Version/18.5', 'Version/15.6'))).toEqual([])
      expect(iphoneOn(iphoneUserAgent.replaceAll('18_5', '16_3').replace('Version/18.5', 'Version/16.3'))).toEqual([])
      // From 16.4 on, Safari sends it: its absence counts again.
      expect(iphoneOn(iphoneUserAgent.replaceAll('18_5', '16_4').replace('Version/18.5', 'Version/16.4'))).toEqual(['missing_fetch_metadata'])
      expect(iphoneOn(iphoneUserAgent)).toEqual(['missing_fetch_metadata'])
      // A Chrome 75, before fetch metadata and client hints both; a Chrome 88 sends the one, not the other.
      const chromeOf = (major: number) => ({ ...noFetchMetadata, ...noHints, 'user-agent': chromeUserAgent.replace('Chrome/140', `Chrome/${major}`) })
      expect(assessBrowser(evidenceWith({ headers: chromeOf(75), fingerprint: { userAgentBrands: '' } }))).toEqual([])
      expect(assessBrowser(evidenceWith({ headers: chromeOf(88), fingerprint: { userAgentBrands: '' } }))).toEqual(['missing_fetch_metadata'])
      expect(assessBrowser(evidenceWith({ headers: chromeOf(89), fingerprint: { userAgentBrands: '' } }))).toEqual(['missing_fetch_metadata', 'user_agent_mismatch'])
    })

    it('accepts a request without fetch metadata over plain HTTP, where browsers send none', () => {
      const noFetchMetadata = { 'sec-fetch-mode': undefined, 'sec-fetch-site': undefined, 'sec-fetch-dest': undefined }
      const noHints = { 'sec-ch-ua': undefined, 'sec-ch-ua-mobile': undefined, 'sec-ch-ua-platform': undefined }
      const lan = evidenceWith({ headers: { ...noFetchMetadata, ...noHints }, fingerprint: { userAgentBrands: '' }, isTrustworthyDestination: false, isSecurePage: false })
      expect(assessBrowser(lan)).toEqual([])
    })
  })

  describe('automation', () => {
    it('flags a headless browser by what the page and the client hints report', () => {
      const labels = assessBrowser(evidenceWith({
        headers: { 'user-agent': headlessUserAgent, 'sec-ch-ua': '"HeadlessChrome";v="140"', 'sec-ch-ua-platform': '"Linux"' },
        fingerprint: { headlessUserAgent: true, platform: 'Linux x86_64', userAgentBrands: 'HeadlessChrome' },
      }))
      expect(labels).toEqual(['headless_user_agent'])
    })

    it('flags automation properties left on the page', () => {
      expect(assessBrowser(evidenceWith({ fingerprint: { automationMarkers: 2 } }))).toEqual(['automation_markers'])
    })

    it('flags natives that a script replaced, and not a page that reports none or an SDK from before the signal', () => {
      expect(assessBrowser(evidenceWith({ fingerprint: { patchedNatives: 2 } }))).toEqual(['patched_natives'])
      expect(assessBrowser(evidenceWith({ fingerprint: { patchedNatives: 0 } }))).toEqual([])
      expect(assessBrowser(evidenceWith({ fingerprint: { patchedNatives: undefined } }))).toEqual([])
    })

    it('flags headless markers: no languages, a 0 x 0 screen', () => {
      expect(assessBrowser(evidenceWith({ fingerprint: { languagesLength: 0 } }))).toEqual(['headless_detected'])
      expect(assessBrowser(evidenceWith({ fingerprint: { screenWidth: 0, screenHeight: 0 } }))).toEqual(['headless_detected'])
    })

    it('takes a 0 x 0 window for what it is in a real browser: a page opened in a background tab, or a view inside an app', () => {
      expect(assessBrowser(evidenceWith({ fingerprint: { outerWidth: 0, outerHeight: 0 } }))).toEqual([])
    })

    it('flags a desktop Chrome without plugins, but not a phone', () => {
      expect(assessBrowser(evidenceWith({ fingerprint: { pluginsLength: 0 } }))).toEqual(['no_plugins'])
    })

    it('flags a software WebGL renderer', () => {
      expect(assessBrowser(evidenceWith({ fingerprint: { webglSoftware: true } }))).toEqual(['webgl_software_renderer'])
    })

    it('flags a known constant canvas', () => {
    })

    it('flags a fingerprint without the fields the SDK always sends', () => {
      expect(assessBrowser(evidenceWith({ fingerprint: { pluginsLength: undefined } }))).toEqual(['incomplete_fingerprint'])
      expect(assessBrowser(evidenceWith({ fingerprint: { canvas: 'ab12cd34ef56ab12cd34ef56ab12cd34', webgl: '' }, replaceFingerprint: true }))).toEqual(['incomplete_fingerprint'])
      // SHA-256 of 'data:,' (toDataURL of an unreadable canvas), truncated as the SDK does.
      expect(assessBrowser(evidenceWith({ fingerprint: { canvas: '4ff286857945d8713fd2e6744ee452fb' } }))).toEqual(['canvas_constant'])
      expect(assessBrowser(evidenceWith({ fingerprint: { canvas: '0'.repeat(32) } }))).toEqual(['canvas_constant'])
      // The same blank canvases as a plain-HTTP page hashes them (no crypto.subtle: the SDK's compact hash).
      expect(assessBrowser(evidenceWith({ fingerprint: { canvas: hashTextCompact('data:,') } }))).toEqual(['canvas_constant'])
      expect(assessBrowser(evidenceWith({ fingerprint: { canvas: hashTextCompact('data:image/png;base64,') } }))).toEqual(['canvas_constant'])
    })
  })

  describe('identity consistency', () => {
    it('flags a Windows user agent on a Linux platform', () => {
      expect(assessBrowser(evidenceWith({ fingerprint: { platform: 'Linux x86_64' } }))).toEqual(['user_agent_mismatch'])
    })

    it('flags client hints naming another platform', () => {
      expect(assessBrowser(evidenceWith({ headers: { 'sec-ch-ua-platform': '"macOS"' } }))).toEqual(['user_agent_mismatch'])
    })

    it('flags a Chrome user agent without client hints where Chrome must send them', () => {
      expect(assessBrowser(evidenceWith({ headers: { 'sec-ch-ua': undefined } }))).toEqual(['user_agent_mismatch'])
      expect(assessBrowser(evidenceWith({ fingerprint: { userAgentBrands: '' } }))).toEqual(['user_agent_mismatch'])
    })

    it('accepts an Android in-app browser (a WebView whose app changed its User-Agent) without client hints', () => {
      const facebookApp = 'Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/127.0.6533.103 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/476.0.0.49.74;]'
      const noHints = { 'sec-ch-ua': undefined, 'sec-ch-ua-mobile': undefined, 'sec-ch-ua-platform': undefined }
      const inApp = evidenceWith({ headers: { ...noHints, 'user-agent': facebookApp }, fingerprint: { userAgentBrands: '', platform: 'Linux aarch64', pluginsLength: 0 } })
      expect(assessBrowser(inApp)).toEqual([])
      // What it does send must still agree: a WebView claiming Android on a Windows platform does not.
      expect(assessBrowser(evidenceWith({ headers: { ...noHints, 'user-agent': facebookApp }, fingerprint: { userAgentBrands: '', platform: 'Win32', pluginsLength: 0 } }))).toEqual(['user_agent_mismatch'])
      // Chrome on the same phone is no WebView: without hints it is a spoofed User-Agent.
      const chromeOnAndroid = facebookApp.replace('; wv)', ')').replace(' [FB_IAB/FB4A;FBAV/476.0.0.49.74;]', '')
      expect(assessBrowser(evidenceWith({ headers: { ...noHints, 'user-agent': chromeOnAndroid }, fingerprint: { userAgentBrands: '', platform: 'Linux aarch64', pluginsLength: 0 } }))).toEqual(['user_agent_mismatch'])
    })

    it('accepts the platform hint of ChromeOS builds that call it Chromium OS', () => {
      const chromebook = 'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36'
      expect(assessBrowser(evidenceWith({ headers: { 'user-agent': chromebook, 'sec-ch-ua-platform': '"Chromium OS"' }, fingerprint: { platform: 'Linux x86_64' } }))).toEqual([])
    })

    it('accepts a Chrome user agent without client hints over plain HTTP', () => {
      const plainHttp = evidenceWith({ headers: { 'sec-ch-ua': undefined, 'sec-ch-ua-platform': undefined }, fingerprint: { userAgentBrands: '' }, isTrustworthyDestination: false, isSecurePage: false })
      expect(assessBrowser(plainHttp)).toEqual([])
    })

    it('flags client hints under a Firefox user agent', () => {
      expect(assessBrowser(evidenceWith({ headers: { 'user-agent': firefoxUserAgent } }))).toEqual(['user_agent_mismatch'])
    })

    it('flags header brands that differ from the brands the page reported', () => {
      expect(assessBrowser(evidenceWith({ fingerprint: { userAgentBrands: 'Chromium;Not=A?Brand;Microsoft Edge' } }))).toEqual(['user_agent_mismatch'])
      // The GREASE brand's spelling does not matter.
      expect(assessBrowser(evidenceWith({ fingerprint: { userAgentBrands: 'Chromium;Not_A Brand;Google Chrome' } }))).toEqual([])
    })

    // Chromium spells the GREASE brand "Not" + c[v % 11] + "A" + c[(v + 1) % 11] + "Brand" over
    // ` (:-./);=?_`: at majors with v % 11 of 6 or 7 it holds a `;`, as Chrome 116 and 150 send it.
    it.each([
      ['Not)A;Brand', '"Chromium";v="150", "Not)A;Brand";v="24", "Google Chrome";v="150"', 'Chromium;Not)A;Brand;Google Chrome'],
      ['Not;A=Brand', '"Not;A=Brand";v="8", "Chromium";v="139", "Google Chrome";v="139"', 'Not;A=Brand;Chromium;Google Chrome'],
      ['one with punctuation before it (Chrome 89, Edge 95)', '"Google Chrome";v="89", "Chromium";v="89", ";Not A Brand";v="99"', 'Google Chrome;Chromium;;Not A Brand'],
      ['.Not/A)Brand (Chrome 103)', '".Not/A)Brand";v="99", "Google Chrome";v="103", "Chromium";v="103"', '.Not/A)Brand;Google Chrome;Chromium'],
      ['an escaped quote (Chrome 84)', '"\\\\Not\\"A;Brand";v="99", "Chromium";v="84", "Google Chrome";v="84"', '\\Not"A;Brand;Chromium;Google Chrome'],
    ])('accepts a real Chrome whose GREASE brand is %s', (_case, header, reported) => {
      const major = /"Chromium";v="(\d+)"/.exec(header)?.[1] ?? ''
      const headers = { 'sec-ch-ua': header, 'user-agent': chromeUserAgent.replace('Chrome/140', `Chrome/${major}`) }
      expect(assessBrowser(evidenceWith({ headers, fingerprint: { userAgentBrands: reported } }))).toEqual([])
      // And still tells another browser's brands from them (a Chrome before 89 is not held to its brands).
      const anotherBrowsers = assessBrowser(evidenceWith({ headers, fingerprint: { userAgentBrands: reported.replace('Google Chrome', 'Microsoft Edge') } }))
      expect(anotherBrowsers).toEqual(Number(major) >= 89 ? ['user_agent_mismatch'] : [])
      // And a User-Agent naming another Chrome version than the hints (a User-Agent override).
      expect(assessBrowser(evidenceWith({ headers: { ...headers, 'user-agent': chromeUserAgent.replace('Chrome/140', 'Chrome/131') }, fingerprint: { userAgentBrands: reported } }))).toEqual(['user_agent_mismatch'])
    })

    it('flags a User-Agent whose Chrome version is not the one the client hints give (a User-Agent override)', () => {
      // What Playwright's Chromium 156 sent with only its userAgent option set.
      const linuxChrome131 = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'
      const overridden = evidenceWith({
        headers: { 'user-agent': linuxChrome131, 'sec-ch-ua': '"Not:A-Brand";v="8", "Chromium";v="156"', 'sec-ch-ua-platform': '"Linux"' },
        fingerprint: { platform: 'Linux x86_64', userAgentBrands: 'Not:A-Brand;Chromium' },
      })
      expect(assessBrowser(overridden)).toEqual(['user_agent_mismatch'])
      // The same browser without the override: the GREASE brand's version (8) is no Chrome version.
      const itself = evidenceWith({
        headers: { 'user-agent': linuxChrome131.replace('Chrome/131', 'Chrome/156'), 'sec-ch-ua': '"Not:A-Brand";v="8", "Chromium";v="156"', 'sec-ch-ua-platform': '"Linux"' },
        fingerprint: { platform: 'Linux x86_64', userAgentBrands: 'Not:A-Brand;Chromium' },
      })
      expect(assessBrowser(itself)).toEqual([])
      // Google Chrome's brand against its Chrome/ token, Edge's against its Edg/ token.
      expect(assessBrowser(evidenceWith({ headers: { 'sec-ch-ua': '"Chromium";v="140", "Not=A?Brand";v="24", "Google Chrome";v="139"' } }))).toEqual(['user_agent_mismatch'])
      const edgeHeaders = { 'user-agent': `${chromeUserAgent} Edg/140.0.0.0`, 'sec-ch-ua': '"Chromium";v="140", "Not=A?Brand";v="24", "Microsoft Edge";v="140"' }
      const edgeReport = { userAgentBrands: 'Chromium;Not=A?Brand;Microsoft Edge' }
      expect(assessBrowser(evidenceWith({ headers: edgeHeaders, fingerprint: edgeReport }))).toEqual([])
      expect(assessBrowser(evidenceWith({ headers: { ...edgeHeaders, 'user-agent': `${chromeUserAgent} Edg/138.0.0.0` }, fingerprint: edgeReport }))).toEqual(['user_agent_mismatch'])
    })

    it('accepts the versions real Chromium browsers send', () => {
      // Opera: its own brand and OPR/ token run on another version than its Chromium.
      const opera = { 'user-agent': `${chromeUserAgent} OPR/124.0.0.0`, 'sec-ch-ua': '"Chromium";v="140", "Not=A?Brand";v="24", "Opera";v="124"' }
      expect(assessBrowser(evidenceWith({ headers: opera, fingerprint: { userAgentBrands: 'Chromium;Not=A?Brand;Opera' } }))).toEqual([])
      // Edge on a site of its compatibility list gets a plain Chrome User-Agent, its hints unchanged.
      const edgeAsChrome = { 'sec-ch-ua': '"Chromium";v="140", "Not=A?Brand";v="24", "Microsoft Edge";v="140"' }
      expect(assessBrowser(evidenceWith({ headers: edgeAsChrome, fingerprint: { userAgentBrands: 'Chromium;Not=A?Brand;Microsoft Edge' } }))).toEqual([])
      // The ForceMajorVersionToMinorPosition policy's frozen major: Chrome/99.140.
      const frozen = { 'user-agent': chromeUserAgent.replace('Chrome/140.0', 'Chrome/99.140') }
      expect(assessBrowser(evidenceWith({ headers: frozen }))).toEqual([])
    })
  })

  describe('behavior', () => {
    it('flags input that is all or mostly dispatched by a script, and machine-regular rhythm', () => {
      // A page driven by dispatchEvent alone: every counted event is untrusted.
      const scripted = { mouseMovements: 30, keystrokes: 12, clicks: 2, scrolls: 0, touches: 0, untrustedEvents: 44 }
      expect(assessBrowser(evidenceWith({ behavior: scripted }))).toEqual(['synthetic_input'])
      // Untrusted events as many as the trusted ones; or reported without any input counted.
      expect(assessBrowser(evidenceWith({ behavior: { ...scripted, mouseMovements: 52, untrustedEvents: 33 } }))).toEqual(['synthetic_input'])
      expect(assessBrowser(evidenceWith({ behavior: { untrustedEvents: 4 }, replaceBehavior: true }))).toEqual(['synthetic_input'])
      // A script's scrollBy() makes trusted scroll events: scrolling itself does not outweigh dispatched input.
      expect(assessBrowser(evidenceWith({ behavior: { mouseMovements: 25, keystrokes: 25, clicks: 0, touches: 0, scrolls: 76, untrustedEvents: 50 } }))).toEqual(['synthetic_input'])
      expect(assessBrowser(evidenceWith({ behavior: { mouseMovements: 40, mouseIntervalStdMs: 0 } }))).toEqual(['robotic_input'])
      expect(assessBrowser(evidenceWith({ behavior: { keystrokes: 25, keyIntervalStdMs: 0 } }))).toEqual(['robotic_input'])
      // Too few events to judge a rhythm.
      expect(assessBrowser(evidenceWith({ behavior: { mouseMovements: 5, mouseIntervalStdMs: 0 } }))).toEqual([])
    })

    it('accepts a person on a page that dispatches a few events itself (lazy-load scrolls, a password manager)', () => {
      // Two scroll events the page dispatched, counted in scrolls and in untrustedEvents.
      expect(assessBrowser(evidenceWith({ behavior: { scrolls: 4, untrustedEvents: 2 } }))).toEqual([])
      // A password manager's keyboard events outnumbered by a phone user's own touches and scrolls.
      const phone = { mouseMovements: 0, clicks: 3, keystrokes: 6, scrolls: 25, touches: 4, untrustedEvents: 6 }
      expect(assessBrowser(evidenceWith({ behavior: phone }))).toEqual([])
    })

    it('accepts touch-only and keyboard-only people', () => {
      expect(assessBrowser(evidenceWith({ behavior: { mouseMovements: 0, keystrokes: 0, clicks: 0, scrolls: 0, touches: 6 } }))).toEqual([])
      expect(assessBrowser(evidenceWith({ behavior: { mouseMovements: 0, clicks: 0, scrolls: 0, keystrokes: 12 } }))).toEqual([])
    })
  })

  it('gives a scripted client with a made-up body the labels it earns', () => {
    const scripted = evidenceWith({
      headers: { 'user-agent': 'node', 'accept-language': undefined, 'sec-fetch-mode': undefined, 'sec-fetch-site': undefined, 'sec-ch-ua': undefined, 'sec-ch-ua-platform': undefined },
      fingerprint: { canvas: 'x', webgl: 'y' },
      replaceFingerprint: true,
      behavior: { mouseMovements: 0, keystrokes: 0 },
      replaceBehavior: true,
    })
    expect(assessBrowser(scripted)).toEqual(['missing_fetch_metadata', 'incomplete_fingerprint', 'canvas_constant'])
  })
})
