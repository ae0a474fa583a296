import type { TollgateStrings } from '../strings.js'

/** Arabic (Modern Standard Arabic), written right to left. */
export const ar: Required<TollgateStrings> = {
  solving: 'جارٍ فحص متصفحك…',
  verifying: 'جارٍ التحقق…',
  verified: 'تم التحقق.',
  failed: 'تعذّر التحقق. يُرجى المحاولة مرة أخرى.',
  blocked: 'تم حظر هذا الطلب. إذا كنت تعتقد أن هذا خطأ، فيُرجى التواصل مع مالك الموقع.',
  unreachable: 'تعذّر الوصول إلى خدمة التحقق. تحقّق من اتصالك وحاول مرة أخرى.',
  unavailable: 'خدمة التحقق غير متاحة مؤقتًا. يُرجى المحاولة مرة أخرى بعد قليل.',
  rateLimited: 'محاولات كثيرة جدًا. يُرجى الانتظار قليلًا ثم المحاولة مرة أخرى.',
  unsupported: 'تعذّر بدء التحقق في هذا المتصفح. إذا تكرر ذلك، فيُرجى إبلاغ مالك الموقع.',
  timeout: 'استغرق التحقق وقتًا أطول من اللازم. يُرجى المحاولة مرة أخرى.',
  misconfigured: 'لا يمكن التحقق من هذا النموذج هنا: فهو غير مُعَدّ لهذا الموقع. يُرجى إبلاغ مالك الموقع.',
  reference: 'المرجع: {reference}',
}
