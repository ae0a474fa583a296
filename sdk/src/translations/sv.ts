import type { TollgateStrings } from '../strings.js'

/** Swedish. */
export const sv: Required<TollgateStrings> = {
  solving: 'Kontrollerar din webbläsare…',
  verifying: 'Verifierar…',
  verified: 'Verifierad.',
  failed: 'Verifieringen misslyckades. Försök igen.',
  blocked: 'Begäran blockerades. Om du tror att det är ett misstag kan du kontakta webbplatsens ägare.',
  unreachable: 'Det går inte att nå verifieringstjänsten. Kontrollera din anslutning och försök igen.',
  unavailable: 'Verifieringstjänsten är tillfälligt otillgänglig. Försök igen om en liten stund.',
  rateLimited: 'För många försök. Vänta en stund och försök sedan igen.',
  unsupported: 'Verifieringen kunde inte starta i den här webbläsaren. Om det fortsätter att hända, meddela webbplatsens ägare.',
  timeout: 'Verifieringen tog för lång tid. Försök igen.',
  misconfigured: 'Formuläret kan inte verifieras här: det är inte konfigurerat för den här webbplatsen. Meddela webbplatsens ägare.',
  reference: 'Referens: {reference}',
  slow: 'Kontrollen pågår fortfarande – på vissa enheter kan det ta upp till en minut.',
  expired: 'Verifieringen har gått ut.',
  refresh: 'Verifiera igen',
}
