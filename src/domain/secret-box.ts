import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

/**
 * Authenticated encryption for secrets the service must read back (webhook secrets):
 * AES-256-GCM with a random 96-bit nonce. The text form is `v1.<nonce>.<ciphertext>.<tag>`
 * in base64url; the version leaves room for key rotation. `context` is bound as associated
 * data (e.g. the site id), so a ciphertext copied to another row does not decrypt there.
 */
export function encryptSecret(key: Buffer, plaintext: string, context: string): string {
  const nonce = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, nonce)
  cipher.setAAD(Buffer.from(context, 'utf8'))
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return ['v1', nonce, ciphertext, cipher.getAuthTag()].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.')
}

/** Returns the plaintext, or throws when the box was tampered with or sealed under another key or context. */
export function decryptSecret(key: Buffer, sealed: string, context: string): string {
  const [version, nonce, ciphertext, tag] = sealed.split('.')
  if (version !== 'v1' || nonce === undefined || ciphertext === undefined || tag === undefined) {
    throw new Error('not a sealed secret')
  }
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'))
  decipher.setAAD(Buffer.from(context, 'utf8'))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8')
}
