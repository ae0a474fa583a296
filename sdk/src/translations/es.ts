import type { TollgateStrings } from '../strings.js'

/** Spanish. */
export const es: Required<TollgateStrings> = {
  solving: 'Comprobando su navegador…',
  verifying: 'Verificando…',
  verified: 'Verificado.',
  failed: 'La verificación ha fallado. Inténtelo de nuevo.',
  blocked: 'Esta solicitud se ha bloqueado. Si cree que es un error, póngase en contacto con el propietario del sitio.',
  unreachable: 'No se puede conectar con el servicio de verificación. Compruebe su conexión e inténtelo de nuevo.',
  unavailable: 'El servicio de verificación no está disponible en este momento. Inténtelo de nuevo en unos instantes.',
  rateLimited: 'Demasiados intentos. Espere un momento e inténtelo de nuevo.',
  unsupported: 'La verificación no ha podido iniciarse en este navegador. Si vuelve a ocurrir, avise al propietario del sitio.',
  timeout: 'La verificación ha tardado demasiado. Inténtelo de nuevo.',
  misconfigured: 'Este formulario no se puede verificar aquí: no está configurado para este sitio. Avise al propietario del sitio.',
  reference: 'Referencia: {reference}',
  slow: 'Seguimos comprobando: en algunos dispositivos puede tardar hasta un minuto.',
  expired: 'La verificación ha caducado.',
  refresh: 'Verificar de nuevo',
}
