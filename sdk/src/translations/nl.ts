import type { TollgateStrings } from '../strings.js'

/** Dutch. */
export const nl: Required<TollgateStrings> = {
  solving: 'Uw browser wordt gecontroleerd…',
  verifying: 'Bezig met verifiëren…',
  verified: 'Geverifieerd.',
  failed: 'De verificatie is mislukt. Probeer het opnieuw.',
  blocked: 'Dit verzoek is geblokkeerd. Denkt u dat dit een vergissing is, neem dan contact op met de eigenaar van de site.',
  unreachable: 'De verificatiedienst is niet bereikbaar. Controleer uw verbinding en probeer het opnieuw.',
  unavailable: 'De verificatiedienst is even niet beschikbaar. Probeer het zo dadelijk opnieuw.',
  rateLimited: 'Te veel pogingen. Wacht even en probeer het dan opnieuw.',
  unsupported: 'De verificatie kon in deze browser niet starten. Blijft dit gebeuren, laat het dan de eigenaar van de site weten.',
  timeout: 'De verificatie duurde te lang. Probeer het opnieuw.',
  misconfigured: 'Dit formulier kan hier niet worden geverifieerd: het is niet ingesteld voor deze site. Laat het de eigenaar van de site weten.',
  reference: 'Referentie: {reference}',
  slow: 'Nog steeds bezig met controleren — op sommige apparaten kan dit tot een minuut duren.',
  expired: 'De verificatie is verlopen.',
  refresh: 'Opnieuw verifiëren',
}
