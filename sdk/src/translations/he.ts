import type { TollgateStrings } from '../strings.js'

/** Hebrew, written right to left; the visitor is addressed without gender (infinitives: נא לנסות שוב). */
export const he: Required<TollgateStrings> = {
  solving: 'בודקים את הדפדפן שלך…',
  verifying: 'מאמתים…',
  verified: 'האימות הושלם.',
  failed: 'האימות נכשל. נא לנסות שוב.',
  blocked: 'הבקשה נחסמה. אם נראה לך שזו טעות, נא לפנות לבעלי האתר.',
  unreachable: 'אין גישה לשירות האימות. נא לבדוק את החיבור ולנסות שוב.',
  unavailable: 'שירות האימות אינו זמין כרגע. נא לנסות שוב בעוד רגע.',
  rateLimited: 'יותר מדי ניסיונות. נא להמתין רגע ולנסות שוב.',
  unsupported: 'לא ניתן להתחיל את האימות בדפדפן הזה. אם זה חוזר על עצמו, נא לדווח לבעלי האתר.',
  timeout: 'האימות נמשך זמן רב מדי. נא לנסות שוב.',
  misconfigured: 'לא ניתן לאמת את הטופס הזה כאן: הוא לא הוגדר לאתר הזה. נא לדווח לבעלי האתר.',
  reference: 'אסמכתה: {reference}',
  slow: 'הבדיקה עדיין נמשכת. במכשירים מסוימים היא עשויה להימשך עד דקה.',
  expired: 'תוקף האימות פג.',
  refresh: 'לאמת שוב',
}
