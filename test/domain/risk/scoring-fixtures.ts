import type { ScoringInput } from '../../../src/domain/risk/scoring-input.js'

/** A person in desktop Chrome: no anomaly at all. Tests change one thing at a time. */
export function humanInput(): ScoringInput {
  return {
    submission: {
      solveTimeMs: 420,
      fingerprint: {
        canvas: '5c2f9e1ab37d40c8',
        webgl: 'ANGLE (Intel, Mesa Intel(R) UHD Graphics 620, OpenGL 4.6)',
        // The rest of what the SDK collects (sdk/src/signals/fingerprint.ts).
        webglSoftware: false,
        webdriver: false,
        headlessUserAgent: false,
        automationMarkers: 0,
        pluginsLength: 5,
        languagesLength: 3,
        screenWidth: 1920,
        screenHeight: 1080,
        outerWidth: 1400,
        outerHeight: 950,
        platform: 'Win32',
        userAgentBrands: 'Google Chrome;Chromium;Not_A Brand',
      },
      behaviorData: { mouseMovements: 31, keystrokes: 9 },
    },
    request: {
      headers: {
        'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
        'accept-language': 'de-DE,de;q=0.9,en;q=0.8',
        'sec-fetch-mode': 'cors',
        'sec-fetch-site': 'cross-site',
        'sec-ch-ua': '"Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"',
        'sec-ch-ua-platform': '"Windows"',
      },
      hasOrigin: true,
    },
    proofOfWork: { difficulty: 18, observedSolveMs: 510, isSameClient: true },
    stepUps: 0,
  }
}
