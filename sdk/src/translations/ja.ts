import type { TollgateStrings } from '../strings.js'

/** Japanese. */
export const ja: Required<TollgateStrings> = {
  solving: 'ブラウザを確認しています…',
  verifying: '確認中です…',
  verified: '確認が完了しました。',
  failed: '確認に失敗しました。もう一度お試しください。',
  blocked: 'このリクエストはブロックされました。誤りと思われる場合は、サイトの運営者にお問い合わせください。',
  unreachable: '確認サービスに接続できません。接続状況を確認して、もう一度お試しください。',
  unavailable: '確認サービスは一時的に利用できません。しばらくしてからもう一度お試しください。',
  rateLimited: '試行回数が多すぎます。少し待ってから、もう一度お試しください。',
  unsupported: 'このブラウザでは確認を開始できませんでした。繰り返し発生する場合は、サイトの運営者にお知らせください。',
  timeout: '確認に時間がかかりすぎました。もう一度お試しください。',
  misconfigured: 'このフォームはここでは確認できません（このサイト用に設定されていません）。サイトの運営者にお知らせください。',
  reference: '参照ID：{reference}',
  slow: '確認を続けています。端末によっては最大で1分ほどかかることがあります。',
  expired: '確認の有効期限が切れました。',
  refresh: 'もう一度確認する',
}
