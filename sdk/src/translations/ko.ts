import type { TollgateStrings } from '../strings.js'

/** Korean. */
export const ko: Required<TollgateStrings> = {
  solving: '브라우저를 확인하는 중…',
  verifying: '인증하는 중…',
  verified: '인증되었습니다.',
  failed: '인증에 실패했습니다. 다시 시도해 주세요.',
  blocked: '이 요청은 차단되었습니다. 오류라고 생각되시면 사이트 운영자에게 문의해 주세요.',
  unreachable: '인증 서비스에 연결할 수 없습니다. 연결 상태를 확인한 후 다시 시도해 주세요.',
  unavailable: '인증 서비스를 잠시 사용할 수 없습니다. 잠시 후 다시 시도해 주세요.',
  rateLimited: '시도 횟수가 너무 많습니다. 잠시 기다린 후 다시 시도해 주세요.',
  unsupported: '이 브라우저에서 인증을 시작할 수 없습니다. 문제가 계속되면 사이트 운영자에게 알려 주세요.',
  timeout: '인증이 너무 오래 걸렸습니다. 다시 시도해 주세요.',
  misconfigured: '이 양식은 이 사이트에 맞게 설정되어 있지 않아 여기에서 인증할 수 없습니다. 사이트 운영자에게 알려 주세요.',
  reference: '참조 번호: {reference}',
  slow: '아직 확인하는 중입니다. 일부 기기에서는 최대 1분 정도 걸릴 수 있습니다.',
  expired: '인증이 만료되었습니다.',
  refresh: '다시 인증하기',
}
