import { TollgateError } from './errors.js'
import { defaultWorkerCount, runVerification, type FlowOptions, type Solved } from './verify-flow.js'
import type { ExecuteOptions, ExecuteResult } from './types.js'

/**
 * Step-ups the SDK goes through before giving up: the most a site may set (maxStepUps, 0-5). The
 * service ends a sequence after the site's own number of rounds with allow or block, so this only
 * guards against a service that never does.
 */
const DEFAULT_MAX_STEP_UPS = 5

interface Defaults {
  apiUrl?: string
  assetsUrl?: string
}

let defaults: Defaults = {}
/** Every verification in flight, with the form it is for (declarative.ts), so reset() can stop them. */
const running = new Map<AbortController, Node | undefined>()
const resetListeners = new Set<(target?: ResetTarget) => void>()

/** What reset() may be given: a form, or an element or shadow root whose forms to reset. */
export type ResetTarget = Element | ShadowRoot

/** The script-tag build calls this with the origin it was loaded from. */
export function setDefaults(next: Defaults): void {
  defaults = { ...next }
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '')
}

/** An absolute URL, or invalid_options: a page's mistake must reach it as a TollgateError too. */
function absoluteUrl(name: string, url: string): string {
  try {
    return new URL(url, location.href).href
  } catch {
    throw new TollgateError('invalid_options', `Tollgate's ${name} is invalid.`)
  }
}

/**
 * The service (`apiUrl`, without a trailing slash) and the folder of the SDK's files (`assetsUrl`:
 * the worker, the WebAssembly and the translations), or invalid_options.
 */
function locate(options: Pick<ExecuteOptions, 'apiUrl' | 'assetsUrl'>): { apiUrl: string; assetsUrl: string } {
  const apiUrl = options.apiUrl ?? defaults.apiUrl
  if (apiUrl === undefined || apiUrl === '') {
    // The module build, or a script tag served from elsewhere (sdk/README.md, the table of codes).
    throw new TollgateError('invalid_options', 'Tollgate needs an apiUrl.')
  }
  const base = trimSlash(absoluteUrl('apiUrl', apiUrl))
  const assetsUrl = options.assetsUrl ?? (options.apiUrl === undefined ? defaults.assetsUrl : undefined) ?? `${base}/sdk/v1/`
  return { apiUrl: base, assetsUrl: absoluteUrl('assetsUrl', assetsUrl.endsWith('/') ? assetsUrl : `${assetsUrl}/`) }
}

/** The folder of the SDK's files for these options, or undefined while the page has named no service (the module build before bindForms({ apiUrl })). */
export function assetsFolderOf(options: Pick<ExecuteOptions, 'apiUrl' | 'assetsUrl'>): string | undefined {
  try {
    return locate(options).assetsUrl
  } catch {
    return undefined
  }
}

/**
 * Validates options (`undefined` from a page script that passed none); the flow runs on
 * `controller`'s signal, which reset() can abort too.
 */
export function resolveOptions(options: ExecuteOptions | undefined, controller: AbortController): FlowOptions {
  if (typeof options?.siteKey !== 'string' || options.siteKey === '') {
    throw new TollgateError('invalid_options', 'Tollgate needs a siteKey.')
  }
  const { apiUrl, assetsUrl } = locate(options)
  if (options.signal?.aborted === true) controller.abort()
  // Whole numbers in range; the texts in Turnstile's limits, which the service holds them to: refused here, before any request.
  const checked = <T extends number | string>(name: string, value: T | undefined, min: number, max: number | RegExp): T | undefined => {
    if (value !== undefined && !(typeof max === 'number' ? Number.isInteger(value) && (value as number) >= min && (value as number) <= max : max.test(value as string))) {
      throw new TollgateError('invalid_options', `Tollgate's ${name} is invalid.`)
    }
    return value
  }
  checked('workers', options.workers, 1, 64)
  checked('timeoutMs', options.timeoutMs, 1, 3_600_000)
  checked('maxStepUps', options.maxStepUps, 0, 100)
  return {
    siteKey: options.siteKey,
    apiUrl,
    assetsUrl,
    workers: options.workers ?? defaultWorkerCount(),
    timeoutMs: options.timeoutMs,
    maxStepUps: options.maxStepUps ?? DEFAULT_MAX_STEP_UPS,
    pageAction: checked('action', options.action, 0, /^[\w/-]{1,32}$/),
    cData: checked('cData', options.cData, 0, /^[\w-]{0,255}$/),
    signal: controller.signal,
    onStatus: (status) => options.onStatus?.(status),
  }
}

/**
 * Whether a node is in the document (a shadow root's, through its host): through the prototype,
 * as a control named `isConnected` shadows a form's own (DOM clobbering).
 */
export function isConnected(node: Node): boolean {
  return Reflect.get(Node.prototype, 'isConnected', node)
}

/**
 * Aborts `controller` when `node` leaves the document (a single-page app's view that went away
 * without reset()), until the function it returns is called. A node not in the document yet (a
 * widget's container the page attaches later) is watched from when it comes. The check follows
 * each change, so a node moved within the page (a list sorted again) is not removed.
 */
export function abortIfRemoved(node: Node, controller: AbortController): () => void {
  let wasIn = isConnected(node)
  const observer = new MutationObserver(() => {
    const isIn = isConnected(node)
    if (wasIn && !isIn) controller.abort()
    wasIn = isIn
  })
  // A removal inside a shadow root is seen by an observer of that root only.
  const rootOf = (inner: Node) => Node.prototype.getRootNode.call(inner)
  const options = { childList: true, subtree: true }
  observer.observe(document, options)
  for (let root = rootOf(node); root instanceof ShadowRoot; root = rootOf(root.host)) observer.observe(root, options)
  return () => observer.disconnect()
}

/**
 * Runs `work` as a tracked verification that reset() can abort, and reset(target) too when `form`
 * is in the target, as does the form's leaving the document.
 */
export async function track<T>(work: (controller: AbortController) => Promise<T>, form?: Node): Promise<T> {
  const controller = new AbortController()
  running.set(controller, form)
  const release = form && abortIfRemoved(form, controller)
  try {
    return await work(controller)
  } finally {
    running.delete(controller)
    release?.()
  }
}

/** Gets a token: solves a fresh challenge in workers, submits it with the signals, follows step-ups. */
export function execute(options: ExecuteOptions): Promise<ExecuteResult> {
  return executeWith(options, undefined)
}

/**
 * The same, starting from a challenge solved earlier when it is still fresh (declarative forms);
 * `onSearch` is told when each solve's search begins (FlowOptions).
 */
export function executeWith(options: ExecuteOptions | undefined, presolved: Solved | undefined, onSearch?: () => void): Promise<ExecuteResult> {
  return track(async (controller) => {
    // The caller's signal aborts this run; the listener goes when the run ends, so a signal
    // reused for many runs collects no listeners.
    const onAbort = () => controller.abort()
    try {
      const flow = resolveOptions(options, controller)
      options?.signal?.addEventListener('abort', onAbort, { once: true })
      return await runVerification({ ...flow, onSearch }, presolved)
    } catch (error) {
      options?.onStatus?.('error')
      throw error
    } finally {
      options?.signal?.removeEventListener('abort', onAbort)
    }
  })
}

/**
 * Aborts every verification in flight and forgets solved challenges and filled tokens; with a
 * target, only those of the forms in it (or of that form), as a component that leaves the page
 * does in its cleanup: the page's other forms and execute() calls go on.
 */
export function reset(target?: ResetTarget): void {
  for (const [controller, form] of running) {
    // Through the prototype: a control named `contains` shadows a form's own (DOM clobbering).
    // An execute() call has no form: the DOM takes undefined as null (WebIDL), which no node contains.
    if (!target || Node.prototype.contains.call(target, form as Node | null)) controller.abort()
  }
  for (const listener of resetListeners) listener(target)
}

/** Called on every reset(), with its target when there is one. */
export function onReset(listener: (target?: ResetTarget) => void): void {
  resetListeners.add(listener)
}
