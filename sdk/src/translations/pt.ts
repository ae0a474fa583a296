import type { TollgateStrings } from '../strings.js'

/**
 * Portuguese as Brazil writes it (most Portuguese-speaking visitors are pt-BR), in plain words a
 * reader in Portugal reads as easily; the gate's page (src/routes/gate/gate-translations.ts) too.
 */
export const pt: Required<TollgateStrings> = {
  solving: 'Verificando o seu navegador…',
  verifying: 'Verificando…',
  verified: 'Verificado.',
  failed: 'A verificação falhou. Tente novamente.',
  blocked: 'Esta solicitação foi bloqueada. Se achar que é um erro, entre em contato com o responsável pelo site.',
  unreachable: 'Não foi possível acessar o serviço de verificação. Verifique a sua conexão e tente novamente.',
  unavailable: 'O serviço de verificação está temporariamente indisponível. Tente novamente em instantes.',
  rateLimited: 'Muitas tentativas. Aguarde um momento e tente novamente.',
  unsupported: 'Não foi possível iniciar a verificação neste navegador. Se isso acontecer de novo, avise o responsável pelo site.',
  timeout: 'A verificação demorou demais. Tente novamente.',
  misconfigured: 'Este formulário não pode ser verificado aqui: ele não está configurado para este site. Avise o responsável pelo site.',
  reference: 'Referência: {reference}',
  slow: 'Ainda verificando — em alguns dispositivos isso pode levar até um minuto.',
  expired: 'A verificação expirou.',
  refresh: 'Verificar novamente',
}
