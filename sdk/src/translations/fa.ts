import type { TollgateStrings } from '../strings.js'

/** Persian, written right to left, with the zero-width non-joiner (U+200C) where Persian spelling wants it. */
export const fa: Required<TollgateStrings> = {
  solving: 'در حال بررسی مرورگر شما…',
  verifying: 'در حال تأیید…',
  verified: 'تأیید شد.',
  failed: 'تأیید انجام نشد. لطفاً دوباره تلاش کنید.',
  blocked: 'این درخواست مسدود شد. اگر فکر می\u200cکنید اشتباهی رخ داده است، لطفاً با مالک وب\u200cسایت تماس بگیرید.',
  unreachable: 'دسترسی به سرویس تأیید ممکن نیست. اتصال خود را بررسی کنید و دوباره تلاش کنید.',
  unavailable: 'سرویس تأیید موقتاً در دسترس نیست. لطفاً کمی بعد دوباره تلاش کنید.',
  rateLimited: 'تعداد تلاش\u200cها بیش از حد است. لطفاً کمی صبر کنید و دوباره تلاش کنید.',
  unsupported: 'تأیید در این مرورگر آغاز نشد. اگر این مشکل تکرار شد، لطفاً به مالک وب\u200cسایت اطلاع دهید.',
  timeout: 'تأیید بیش از حد طول کشید. لطفاً دوباره تلاش کنید.',
  misconfigured: 'این فرم را اینجا نمی\u200cتوان تأیید کرد: برای این وب\u200cسایت تنظیم نشده است. لطفاً به مالک وب\u200cسایت اطلاع دهید.',
  reference: 'کد پیگیری: {reference}',
}
