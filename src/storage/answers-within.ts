/** What a probe that waited too long fails with: "no answer within N ms" (/ready shows it as it is). */
export class NoAnswerInTime extends Error {}

/** `work`, or a rejection (NoAnswerInTime) if it has not settled within `ms`. */
export function answersWithin<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoAnswerInTime(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}
