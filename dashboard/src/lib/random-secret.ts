/**
 * A webhook secret in the Standard Webhooks form, `whsec_` + padded base64 of 32 random bytes (50
 * characters): what that scheme's libraries take unchanged (`new Webhook(secret)` decodes it), and
 * what Tollgate signs with as those bytes there and as the string itself in X-Service-Signature
 * (docs/webhooks.md), so a receiver passes it as it is to either scheme's verifier.
 */
export function generateSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return `whsec_${btoa(binary)}`
}
