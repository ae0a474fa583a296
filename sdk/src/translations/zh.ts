import type { TollgateStrings } from '../strings.js'

/** Chinese (Simplified). */
export const zh: Required<TollgateStrings> = {
  solving: '正在检查您的浏览器…',
  verifying: '正在验证…',
  verified: '验证成功。',
  failed: '验证失败，请重试。',
  blocked: '此请求已被拦截。如果您认为这是误判，请联系网站所有者。',
  unreachable: '无法连接验证服务。请检查网络连接后重试。',
  unavailable: '验证服务暂时不可用，请稍后重试。',
  rateLimited: '尝试次数过多，请稍候再试。',
  unsupported: '无法在此浏览器中启动验证。如果问题持续出现，请告知网站所有者。',
  timeout: '验证超时，请重试。',
  misconfigured: '无法在此处验证此表单：它未针对本网站进行设置。请告知网站所有者。',
  reference: '参考编号：{reference}',
  slow: '仍在检查中。在某些设备上可能需要长达一分钟。',
  expired: '验证已过期。',
  refresh: '重新验证',
}
