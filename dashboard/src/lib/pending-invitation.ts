/**
 * An invitation link's token (`/dashboard/invite#tgi_...`) from the moment the page opens until
 * the invitee accepts or declines it. It is taken out of the address at once (a screenshot, a
 * shared screen or a bookmark would carry it), and kept in this tab's sessionStorage so that it
 * survives the log-in or sign-up on the way (which may change the page's path), then the invite
 * page opens again. It never goes to the server in a URL: only in the body of preview and accept.
 */
const STORAGE_KEY = 'tollgate:invitation'

/** Whether the address carried a token (kept from now on, in place of any earlier one). */
export function takeInvitationFromAddress(): boolean {
  const { hash, pathname, search } = window.location
  if (!hash.startsWith('#tgi_')) return false
  window.sessionStorage.setItem(STORAGE_KEY, hash.slice(1))
  window.history.replaceState(window.history.state, '', pathname + search)
  return true
}

export function pendingInvitation(): string | undefined {
  return window.sessionStorage.getItem(STORAGE_KEY) ?? undefined
}

export function forgetInvitation(): void {
  window.sessionStorage.removeItem(STORAGE_KEY)
}
