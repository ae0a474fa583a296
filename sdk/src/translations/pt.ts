import type { TollgateStrings } from '../strings.js'

/** Portuguese (European, as the gate page speaks it; read in Brazil as well). */
export const pt: Required<TollgateStrings> = {
  solving: 'Verificação do navegador em curso…',
  verifying: 'Verificação em curso…',
  verified: 'Verificado.',
  failed: 'A verificação falhou. Tente novamente.',
  blocked: 'Este pedido foi bloqueado. Se acha que se trata de um erro, contacte o proprietário do site.',
  unreachable: 'Não é possível contactar o serviço de verificação. Verifique a sua conexão e tente novamente.',
  unavailable: 'O serviço de verificação está momentaneamente indisponível. Tente novamente dentro de instantes.',
  rateLimited: 'Muitas tentativas. Aguarde um momento e tente novamente.',
  unsupported: 'Não foi possível iniciar a verificação neste navegador. Se isto voltar a acontecer, avise o proprietário do site.',
  timeout: 'A verificação demorou demasiado tempo. Tente novamente.',
  misconfigured: 'Este formulário não pode ser verificado aqui: não está configurado para este site. Avise o proprietário do site.',
  reference: 'Referência: {reference}',
}
