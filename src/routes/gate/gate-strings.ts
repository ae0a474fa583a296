/**
 * What the gate's page says, in the languages it speaks. The page is rendered in the visitor's
 * language (Accept-Language), and its script reads the rest of its texts from the page, so a
 * visitor never sees the page switch languages half-way.
 */
export interface GateStrings {
  /** The page's title and first heading while the browser is checked. */
  title: string
  checking: string
  noscript: string
  passedTitle: string
  passed: string
  deniedTitle: string
  denied: string
  rateLimitedTitle: string
  rateLimited: string
  failedTitle: string
  /** `{code}` is replaced by the error's code. */
  failed: string
  loopTitle: string
  loop: string
  cookiesTitle: string
  cookies: string
  /** Under `denied`: `{reference}` is the verification's reference, which finds it in the site's log. */
  reference: string
}

const english: GateStrings = {
  title: 'Just a moment',
  checking: 'Checking that you are a person. This takes a second or two and needs nothing from you.',
  noscript: 'This site needs JavaScript to let you in: turn it on and load the page again.',
  passedTitle: 'Thank you',
  passed: 'Taking you to the page…',
  deniedTitle: 'Access denied',
  denied: "This site's protection turned this browser away. If you are a person, try another browser or network, or tell the site's owner.",
  rateLimitedTitle: 'Too many checks',
  rateLimited: 'Your network asked to be checked too often. Wait a minute, then load the page again.',
  failedTitle: 'Something went wrong',
  failed: 'Your browser could not be checked ({code}). Load the page again to retry.',
  loopTitle: 'Your browser keeps coming back',
  loop: 'It was checked, but the site does not see its pass: allow cookies for this site, or use a network whose address stays the same, then load the page again.',
  cookiesTitle: 'Cookies are blocked',
  cookies: 'This site lets browsers in with a cookie: allow cookies for this site, then load the page again.',
  reference: 'Reference: {reference}',
}

export const gateStrings: Record<string, GateStrings> = {
  en: english,
  de: {
    title: 'Einen Moment bitte',
    checking: 'Wir prüfen, ob Sie ein Mensch sind. Das dauert ein, zwei Sekunden, und Sie müssen nichts tun.',
    noscript: 'Diese Website braucht JavaScript, um Sie hereinzulassen: Schalten Sie es ein und laden Sie die Seite neu.',
    passedTitle: 'Danke',
    passed: 'Sie werden zur Seite weitergeleitet…',
    deniedTitle: 'Zugriff verweigert',
    denied: 'Der Schutz dieser Website hat diesen Browser abgewiesen. Wenn Sie ein Mensch sind, versuchen Sie es mit einem anderen Browser oder Netz, oder wenden Sie sich an den Betreiber der Website.',
    rateLimitedTitle: 'Zu viele Prüfungen',
    rateLimited: 'Aus Ihrem Netz kamen zu viele Prüfungen. Warten Sie eine Minute und laden Sie die Seite dann neu.',
    failedTitle: 'Etwas ist schiefgelaufen',
    failed: 'Ihr Browser konnte nicht geprüft werden ({code}). Laden Sie die Seite neu, um es noch einmal zu versuchen.',
    loopTitle: 'Ihr Browser kommt immer wieder hierher',
    loop: 'Er wurde geprüft, aber die Website sieht seinen Ausweis nicht: Erlauben Sie Cookies für diese Website oder nutzen Sie ein Netz mit gleichbleibender Adresse, und laden Sie die Seite dann neu.',
    cookiesTitle: 'Cookies sind blockiert',
    cookies: 'Diese Website lässt Browser mit einem Cookie herein: Erlauben Sie Cookies für diese Website und laden Sie die Seite dann neu.',
    reference: 'Referenz: {reference}',
  },
  fr: {
    title: 'Un instant',
    checking: 'Nous vérifions que vous êtes une personne. Cela prend une ou deux secondes et ne vous demande rien.',
    noscript: 'Ce site a besoin de JavaScript pour vous laisser entrer : activez-le et rechargez la page.',
    passedTitle: 'Merci',
    passed: 'Redirection vers la page…',
    deniedTitle: 'Accès refusé',
    denied: 'La protection de ce site a refusé ce navigateur. Si vous êtes une personne, essayez un autre navigateur ou un autre réseau, ou prévenez le propriétaire du site.',
    rateLimitedTitle: 'Trop de vérifications',
    rateLimited: 'Votre réseau a demandé trop de vérifications. Attendez une minute, puis rechargez la page.',
    failedTitle: 'Un problème est survenu',
    failed: "Votre navigateur n'a pas pu être vérifié ({code}). Rechargez la page pour réessayer.",
    loopTitle: 'Votre navigateur revient sans cesse ici',
    loop: "Il a été vérifié, mais le site ne voit pas son laissez-passer : autorisez les cookies pour ce site ou utilisez un réseau dont l'adresse ne change pas, puis rechargez la page.",
    cookiesTitle: 'Les cookies sont bloqués',
    cookies: 'Ce site laisse entrer les navigateurs grâce à un cookie : autorisez les cookies pour ce site, puis rechargez la page.',
    reference: 'Référence : {reference}',
  },
  es: {
    title: 'Un momento',
    checking: 'Estamos comprobando que es usted una persona. Tarda uno o dos segundos y no tiene que hacer nada.',
    noscript: 'Este sitio necesita JavaScript para dejarle entrar: actívelo y vuelva a cargar la página.',
    passedTitle: 'Gracias',
    passed: 'Le llevamos a la página…',
    deniedTitle: 'Acceso denegado',
    denied: 'La protección de este sitio ha rechazado este navegador. Si es usted una persona, pruebe con otro navegador u otra red, o avise al propietario del sitio.',
    rateLimitedTitle: 'Demasiadas comprobaciones',
    rateLimited: 'Su red ha pedido demasiadas comprobaciones. Espere un minuto y vuelva a cargar la página.',
    failedTitle: 'Algo ha fallado',
    failed: 'No se ha podido comprobar su navegador ({code}). Vuelva a cargar la página para intentarlo de nuevo.',
    loopTitle: 'Su navegador vuelve una y otra vez',
    loop: 'Se ha comprobado, pero el sitio no ve su pase: permita las cookies de este sitio o use una red cuya dirección no cambie, y vuelva a cargar la página.',
    cookiesTitle: 'Las cookies están bloqueadas',
    cookies: 'Este sitio deja entrar a los navegadores con una cookie: permita las cookies de este sitio y vuelva a cargar la página.',
    reference: 'Referencia: {reference}',
  },
  it: {
    title: 'Un momento',
    checking: 'Stiamo verificando che tu sia una persona. Ci vogliono un paio di secondi e non devi fare nulla.',
    noscript: 'Questo sito ha bisogno di JavaScript per farti entrare: attivalo e ricarica la pagina.',
    passedTitle: 'Grazie',
    passed: 'Ti stiamo portando alla pagina…',
    deniedTitle: 'Accesso negato',
    denied: 'La protezione di questo sito ha respinto questo browser. Se sei una persona, prova un altro browser o un’altra rete, oppure avvisa il proprietario del sito.',
    rateLimitedTitle: 'Troppe verifiche',
    rateLimited: 'La tua rete ha chiesto troppe verifiche. Aspetta un minuto, poi ricarica la pagina.',
    failedTitle: 'Qualcosa è andato storto',
    failed: 'Non è stato possibile verificare il tuo browser ({code}). Ricarica la pagina per riprovare.',
    loopTitle: 'Il tuo browser continua a tornare qui',
    loop: 'È stato verificato, ma il sito non vede il suo lasciapassare: consenti i cookie per questo sito o usa una rete con un indirizzo che non cambia, poi ricarica la pagina.',
    cookiesTitle: 'I cookie sono bloccati',
    cookies: 'Questo sito fa entrare i browser con un cookie: consenti i cookie per questo sito, poi ricarica la pagina.',
    reference: 'Riferimento: {reference}',
  },
  pt: {
    title: 'Um momento',
    checking: 'Estamos a verificar que é uma pessoa. Demora um ou dois segundos e não precisa de fazer nada.',
    noscript: 'Este site precisa de JavaScript para o deixar entrar: ative-o e volte a carregar a página.',
    passedTitle: 'Obrigado',
    passed: 'A levá-lo para a página…',
    deniedTitle: 'Acesso negado',
    denied: 'A proteção deste site recusou este navegador. Se é uma pessoa, experimente outro navegador ou outra rede, ou avise o proprietário do site.',
    rateLimitedTitle: 'Demasiadas verificações',
    rateLimited: 'A sua rede pediu demasiadas verificações. Aguarde um minuto e volte a carregar a página.',
    failedTitle: 'Algo correu mal',
    failed: 'Não foi possível verificar o seu navegador ({code}). Volte a carregar a página para tentar de novo.',
    loopTitle: 'O seu navegador volta sempre aqui',
    loop: 'Foi verificado, mas o site não vê o seu passe: permita cookies para este site ou use uma rede cujo endereço não mude, e volte a carregar a página.',
    cookiesTitle: 'Os cookies estão bloqueados',
    cookies: 'Este site deixa entrar os navegadores com um cookie: permita cookies para este site e volte a carregar a página.',
    reference: 'Referência: {reference}',
  },
  nl: {
    title: 'Een ogenblik',
    checking: 'We controleren of u een mens bent. Dat duurt een seconde of twee en u hoeft niets te doen.',
    noscript: 'Deze site heeft JavaScript nodig om u binnen te laten: zet het aan en laad de pagina opnieuw.',
    passedTitle: 'Dank u',
    passed: 'U gaat naar de pagina…',
    deniedTitle: 'Toegang geweigerd',
    denied: 'De beveiliging van deze site heeft deze browser geweigerd. Bent u een mens, probeer dan een andere browser of een ander netwerk, of laat het de eigenaar van de site weten.',
    rateLimitedTitle: 'Te veel controles',
    rateLimited: 'Uw netwerk vroeg te vaak om een controle. Wacht een minuut en laad de pagina dan opnieuw.',
    failedTitle: 'Er ging iets mis',
    failed: 'Uw browser kon niet worden gecontroleerd ({code}). Laad de pagina opnieuw om het nog eens te proberen.',
    loopTitle: 'Uw browser komt steeds terug',
    loop: 'Hij is gecontroleerd, maar de site ziet zijn toegangsbewijs niet: sta cookies toe voor deze site of gebruik een netwerk met een vast adres, en laad de pagina dan opnieuw.',
    cookiesTitle: 'Cookies zijn geblokkeerd',
    cookies: 'Deze site laat browsers binnen met een cookie: sta cookies toe voor deze site en laad de pagina dan opnieuw.',
    reference: 'Referentie: {reference}',
  },
}

/** The page's texts in a language negotiateLanguage chose. */
export function gateStringsIn(language: string): GateStrings {
  return (Object.hasOwn(gateStrings, language) ? gateStrings[language] : undefined) ?? english
}

/**
 * The language of the visitor's Accept-Language that the page speaks, by preference (q) and
 * then by order; English when none.
 */
export function negotiateLanguage(acceptLanguage: string | undefined): string {
  if (acceptLanguage === undefined) return 'en'
  const ranges = acceptLanguage
    .split(',')
    .slice(0, 32)
    .map((part, index) => {
      const [tag = '', ...parameters] = part.trim().split(';')
      const quality = parameters.map((parameter) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/.exec(parameter)?.[1]).find((value) => value !== undefined)
      return { language: tag.trim().toLowerCase().split('-')[0] ?? '', quality: quality === undefined ? 1 : Number(quality), index }
    })
    .filter((range) => range.quality > 0 && Object.hasOwn(gateStrings, range.language))
    .sort((first, second) => second.quality - first.quality || first.index - second.index)
  return ranges[0]?.language ?? 'en'
}
