/**
 * Names people give things (a site, an API key) and read back in lists. Control characters, line
 * breaks and text-direction overrides would let a name hide or disguise what sits beside it ("invoice‮fdp.exe"
 * shows as "invoiceexe.pdf"), and a name of nothing but blanks and invisible fillers shows as an
 * empty row: both are refused. Joiners inside emoji sequences stay allowed.
 */
const CONTROL_OR_DIRECTION = /[\p{Cc}\p{Zl}\p{Zp}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u
/**
 * White space, zero-width characters, the Hangul fillers (letters that render blank) and the
 * blank Braille pattern (a symbol that renders blank).
 */
const BLANK = /[\s\u034F\u115F\u1160\u180E\u200B-\u200D\u2060\u2800\u3164\uFEFF\uFFA0]/gu
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u

/**
 * The name as stored: without surrounding white space, in Unicode NFC. One name typed on two
 * systems ("Müller" as one character, or as "u" and a combining diaeresis, as macOS file names and
 * some keyboards give it) is then one name: it is the same in lists, sorts and searches, and a
 * rename to it again changes nothing. Lengths are counted after, so a name within its limit
 * composed is within it decomposed too.
 */
export function normalizeDisplayName(name: string): string {
  return name.trim().normalize('NFC')
}

/** Why a normalized name cannot be used, in words for the field's error, or undefined. Lengths count characters (code points), as people do. */
export function findDisplayNameProblem(name: string, maxLength: number): string | undefined {
  const length = [...name].length
  if (length === 0) return 'must not be empty'
  if (length > maxLength) return `must be at most ${maxLength} characters`
  if (CONTROL_OR_DIRECTION.test(name)) return 'must not contain control or text-direction characters'
  if (!VISIBLE.test(name.replace(BLANK, ''))) return 'must contain a visible character'
  return undefined
}
