/**
 * The punycode package's ES module build, which the dashboard imports so that its bundle keeps only
 * the functions it uses (the CommonJS build is one object). @types/node types Node's own punycode
 * module, not this file.
 */
declare module 'punycode/punycode.es6.js' {
  /** The Unicode of a domain whose labels may be punycode (xn--bcher-kva.example: bücher.example); throws on bad punycode. */
  export function toUnicode(domain: string): string
}
