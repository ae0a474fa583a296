import type { TollgateStrings } from '../strings.js'

/** French (with the non-breaking space French typography puts before a colon). */
export const fr: Required<TollgateStrings> = {
  solving: 'Vérification de votre navigateur…',
  verifying: 'Vérification en cours…',
  verified: 'Vérifié.',
  failed: 'La vérification a échoué. Veuillez réessayer.',
  blocked: 'Cette demande a été bloquée. Si vous pensez qu’il s’agit d’une erreur, veuillez contacter le propriétaire du site.',
  unreachable: 'Le service de vérification est injoignable. Vérifiez votre connexion et réessayez.',
  unavailable: 'Le service de vérification est momentanément indisponible. Veuillez réessayer dans un instant.',
  rateLimited: 'Trop de tentatives. Veuillez patienter un instant, puis réessayer.',
  unsupported: 'La vérification n’a pas pu démarrer dans ce navigateur. Si cela se reproduit, veuillez prévenir le propriétaire du site.',
  timeout: 'La vérification a pris trop de temps. Veuillez réessayer.',
  misconfigured: 'Ce formulaire ne peut pas être vérifié ici\u00a0: il n’est pas configuré pour ce site. Veuillez prévenir le propriétaire du site.',
  reference: 'Référence\u00a0: {reference}',
  slow: 'Vérification toujours en cours — cela peut prendre jusqu’à une minute sur certains appareils.',
  expired: 'La vérification a expiré.',
  refresh: 'Vérifier à nouveau',
}
