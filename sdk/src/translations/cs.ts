import type { TollgateStrings } from '../strings.js'

/** Czech. */
export const cs: Required<TollgateStrings> = {
  solving: 'Kontrolujeme váš prohlížeč…',
  verifying: 'Probíhá ověření…',
  verified: 'Ověřeno.',
  failed: 'Ověření se nezdařilo. Zkuste to prosím znovu.',
  blocked: 'Tento požadavek byl zablokován. Pokud si myslíte, že jde o omyl, obraťte se prosím na provozovatele webu.',
  unreachable: 'K ověřovací službě se nelze připojit. Zkontrolujte připojení a zkuste to znovu.',
  unavailable: 'Ověřovací služba je na chvíli nedostupná. Zkuste to prosím za okamžik.',
  rateLimited: 'Příliš mnoho pokusů. Chvíli počkejte a zkuste to znovu.',
  unsupported: 'Ověření se v tomto prohlížeči nepodařilo spustit. Pokud se to opakuje, dejte prosím vědět provozovateli webu.',
  timeout: 'Ověření trvalo příliš dlouho. Zkuste to prosím znovu.',
  misconfigured: 'Tento formulář zde nelze ověřit: není pro tento web nastaven. Dejte prosím vědět provozovateli webu.',
  reference: 'Referenční kód: {reference}',
  slow: 'Kontrola stále probíhá – na některých zařízeních může trvat až minutu.',
  expired: 'Platnost ověření vypršela.',
  refresh: 'Ověřit znovu',
}
