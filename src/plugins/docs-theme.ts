/**
 * Swagger UI's colours where they fail WCAG 1.4.3 (text at 4.5:1): the methods' white labels on
 * their light badges (GET's 2.4:1), the version's badge, the document's links, the Authorize
 * button's green, Execute's blue, Cancel's red and the download button's grey. Each is darkened
 * within its hue, so GET stays blue and DELETE red. Checked by test/e2e/api-docs-accessibility.test.ts.
 */
export const DOCS_THEME_CSS = `
.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1d5fa0; }
.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #17794a; }
.swagger-ui .opblock.opblock-put .opblock-summary-method { background: #995400; }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #c21f1f; }
.swagger-ui .opblock.opblock-patch .opblock-summary-method { background: #0f7562; }
.swagger-ui .opblock.opblock-head .opblock-summary-method { background: #7a10d8; }
.swagger-ui .info .title small.version-stamp { background-color: #3b6e00; }
.swagger-ui .info .title small pre { color: #ffffff; }
.swagger-ui .info .url { color: #3b4151; }
.swagger-ui .info a, .swagger-ui a.nostyle:not(.opblock-summary-path a) { color: #1d5fa0; }
.swagger-ui .btn.authorize { color: #17794a; border-color: #17794a; }
.swagger-ui .btn.authorize svg { fill: #17794a; }
.swagger-ui .btn.execute { background-color: #1d5fa0; border-color: #1d5fa0; }
.swagger-ui .try-out__btn.cancel, .swagger-ui .btn.cancel { color: #c21f1f; border-color: #c21f1f; }
.swagger-ui .download-contents { background: #50545f; }
`

/**
 * Names Swagger UI leaves wrong or out, set as it renders the elements: the authorization
 * dialog's submit buttons say "Authorize" and are named "Apply credentials" (aria-label), so a
 * speech user who says what they see is not understood (WCAG 2.5.3, Label in Name); its close
 * button is an icon without a name (WCAG 4.1.2).
 */
export const DOCS_THEME_JS = `
new MutationObserver(function () {
  document.querySelectorAll('.auth-btn-wrapper .authorize[aria-label="Apply credentials"]').forEach(function (button) {
    button.setAttribute('aria-label', 'Authorize: apply the credentials')
  })
  document.querySelectorAll('.dialog-ux .close-modal:not([aria-label])').forEach(function (button) {
    button.setAttribute('aria-label', 'Close')
  })
}).observe(document.documentElement, { childList: true, subtree: true })
`
