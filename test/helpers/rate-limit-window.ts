/**
 * Budgets count in fixed windows of the wall clock (src/domain/rate-limit.ts), so a test that
 * spends one and expects the refusal must spend it within one window: across a window's end the
 * count starts again. If the current window ends within `neededMs`, this waits for the next.
 * Windows follow one another from `firstWindowStart` (the epoch, as the budgets' do).
 */
export async function startWithinOneWindow(windowMs: number, neededMs = 5_000, firstWindowStart = 0): Promise<void> {
  const left = windowMs - ((Date.now() - firstWindowStart) % windowMs)
  if (left < neededMs) await new Promise((resolve) => setTimeout(resolve, left + 50))
}
