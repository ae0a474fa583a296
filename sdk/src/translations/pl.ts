import type { TollgateStrings } from '../strings.js'

/** Polish. */
export const pl: Required<TollgateStrings> = {
  solving: 'Sprawdzanie przeglądarki…',
  verifying: 'Trwa weryfikacja…',
  verified: 'Zweryfikowano.',
  failed: 'Weryfikacja nie powiodła się. Spróbuj ponownie.',
  blocked: 'To żądanie zostało zablokowane. Jeśli uważasz, że to pomyłka, skontaktuj się z właścicielem witryny.',
  unreachable: 'Nie można połączyć się z usługą weryfikacji. Sprawdź połączenie i spróbuj ponownie.',
  unavailable: 'Usługa weryfikacji jest chwilowo niedostępna. Spróbuj ponownie za chwilę.',
  rateLimited: 'Zbyt wiele prób. Odczekaj chwilę i spróbuj ponownie.',
  unsupported: 'Nie udało się uruchomić weryfikacji w tej przeglądarce. Jeśli problem się powtarza, powiadom właściciela witryny.',
  timeout: 'Weryfikacja trwała zbyt długo. Spróbuj ponownie.',
  misconfigured: 'Tego formularza nie można tutaj zweryfikować: nie jest skonfigurowany dla tej witryny. Powiadom właściciela witryny.',
  reference: 'Numer referencyjny: {reference}',
  slow: 'Sprawdzanie wciąż trwa — na niektórych urządzeniach może to potrwać do minuty.',
  expired: 'Weryfikacja wygasła.',
  refresh: 'Zweryfikuj ponownie',
}
