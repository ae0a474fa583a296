import type { TollgateStrings } from '../strings.js'

/** German. */
export const de: Required<TollgateStrings> = {
  solving: 'Ihr Browser wird geprüft…',
  verifying: 'Wird überprüft…',
  verified: 'Überprüft.',
  failed: 'Die Überprüfung ist fehlgeschlagen. Bitte versuchen Sie es erneut.',
  blocked: 'Diese Anfrage wurde blockiert. Wenn Sie das für einen Irrtum halten, wenden Sie sich bitte an den Betreiber der Website.',
  unreachable: 'Der Prüfdienst ist nicht erreichbar. Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.',
  unavailable: 'Der Prüfdienst ist vorübergehend nicht verfügbar. Bitte versuchen Sie es gleich noch einmal.',
  rateLimited: 'Zu viele Versuche. Bitte warten Sie einen Moment und versuchen Sie es dann erneut.',
  unsupported: 'Die Überprüfung konnte in diesem Browser nicht starten. Wenn das wieder passiert, sagen Sie bitte dem Betreiber der Website Bescheid.',
  timeout: 'Die Überprüfung hat zu lange gedauert. Bitte versuchen Sie es erneut.',
  misconfigured: 'Dieses Formular kann hier nicht überprüft werden: Es ist für diese Website nicht eingerichtet. Bitte sagen Sie dem Betreiber der Website Bescheid.',
  reference: 'Referenz: {reference}',
  slow: 'Die Prüfung läuft noch – auf manchen Geräten kann sie bis zu einer Minute dauern.',
  expired: 'Die Überprüfung ist abgelaufen.',
  refresh: 'Erneut überprüfen',
}
