import type { TollgateStrings } from '../strings.js'

/** Italian. */
export const it: Required<TollgateStrings> = {
  solving: 'Verifica del browser in corso…',
  verifying: 'Verifica in corso…',
  verified: 'Verificato.',
  failed: 'Verifica non riuscita. Riprova.',
  blocked: 'Questa richiesta è stata bloccata. Se pensi che sia un errore, contatta il proprietario del sito.',
  unreachable: 'Impossibile raggiungere il servizio di verifica. Controlla la connessione e riprova.',
  unavailable: 'Il servizio di verifica non è disponibile al momento. Riprova tra poco.',
  rateLimited: 'Troppi tentativi. Attendi un momento e riprova.',
  unsupported: 'Non è stato possibile avviare la verifica in questo browser. Se il problema si ripete, avvisa il proprietario del sito.',
  timeout: 'La verifica ha richiesto troppo tempo. Riprova.',
  misconfigured: 'Questo modulo non può essere verificato qui: non è configurato per questo sito. Avvisa il proprietario del sito.',
  reference: 'Riferimento: {reference}',
  slow: 'Verifica ancora in corso: su alcuni dispositivi può richiedere fino a un minuto.',
  expired: 'La verifica è scaduta.',
  refresh: 'Verifica di nuovo',
}
