/** At this many recovery codes left or fewer, the Account page says to make new ones. */
export const FEW_RECOVERY_CODES = 2

/** "JBSW Y3DP EHPK 3PXP": a base32 setup key in groups of four, easier to type in by hand. */
export function groupSecretKey(secret: string): string {
  return (secret.match(/.{1,4}/g) ?? []).join(' ')
}

/**
 * A code as it is sent: without the spaces an authenticator app shows in it ("123 456") or a
 * copy from a file brings along. Neither an authenticator code nor a recovery code has any.
 */
export function cleanCode(text: string): string {
  return text.replace(/\s+/g, '')
}

interface RecoveryCodesFile {
  /** The account's e-mail address. */
  email: string
  /** The dashboard's origin: someone may have accounts on several Tollgate servers. */
  origin: string
  codes: readonly string[]
  madeAt: Date
}

/** The text file the Account page offers for download: which account the codes are for, and the codes. */
export function recoveryCodesText({ email, origin, codes, madeAt }: RecoveryCodesFile): string {
  return [
    `Tollgate recovery codes for ${email} at ${origin}`,
    `Made ${madeAt.toISOString()}. Each code logs you in once, in place of an authentication code;`,
    'new codes made on the Account page replace all of these.',
    '',
    ...codes,
    '',
  ].join('\n')
}
