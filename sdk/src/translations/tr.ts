import type { TollgateStrings } from '../strings.js'

/** Turkish. */
export const tr: Required<TollgateStrings> = {
  solving: 'Tarayıcınız kontrol ediliyor…',
  verifying: 'Doğrulanıyor…',
  verified: 'Doğrulandı.',
  failed: 'Doğrulama başarısız oldu. Lütfen tekrar deneyin.',
  blocked: 'Bu istek engellendi. Bunun bir hata olduğunu düşünüyorsanız lütfen site sahibiyle iletişime geçin.',
  unreachable: 'Doğrulama hizmetine ulaşılamıyor. Bağlantınızı kontrol edip tekrar deneyin.',
  unavailable: 'Doğrulama hizmeti kısa bir süreliğine kullanılamıyor. Lütfen birazdan tekrar deneyin.',
  rateLimited: 'Çok fazla deneme yapıldı. Lütfen biraz bekleyip tekrar deneyin.',
  unsupported: 'Doğrulama bu tarayıcıda başlatılamadı. Bu durum tekrarlanırsa lütfen site sahibine bildirin.',
  timeout: 'Doğrulama çok uzun sürdü. Lütfen tekrar deneyin.',
  misconfigured: 'Bu form burada doğrulanamıyor: bu site için ayarlanmamış. Lütfen site sahibine bildirin.',
  reference: 'Referans: {reference}',
  slow: 'Kontrol hâlâ sürüyor; bazı cihazlarda bu bir dakikaya kadar sürebilir.',
  expired: 'Doğrulamanın süresi doldu.',
  refresh: 'Yeniden doğrula',
}
