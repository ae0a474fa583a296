import { ROUND_CONSTANTS } from '../src/solver/sha256.js'

/**
 * Generates the WebAssembly text of the SIMD solver: one fully unrolled SHA-256 compression of
 * the nonce block (see sdk/src/solver/nonce-layout.ts) over four lanes of i32x4.
 *
 * The compression is first built as an expression graph in which every value is known at one of
 * three times: when generating (the constant words 4-15 of the nonce block and everything
 * computed only from them, folded here), once per search call (the midstate and the prefix
 * words, so rounds 0-2 and two schedule words move out of the loop), or once per attempt (what
 * depends on the suffix word). Only the last kind is emitted inside the loop. Values read
 * more than once get a local; locals are reused once their last reader is emitted, which keeps
 * the frame small for the baseline compiler that runs the first calls.
 *
 * Memory layout (shared with sdk/src/solver/wasm-engine.ts): bytes 0-31 the midstate (8 words),
 * bytes 32-79 the prefix words, word i of lanes 0-3 at 32 + 16 i.
 */

type Level = 0 | 1 | 2 // 0: generation time, 1: per call, 2: per attempt

type Operation =
  | 'const' | 'splat-load' | 'load' | 'suffix' | 'threshold'
  | 'add' | 'xor' | 'or' | 'shr' | 'shl' | 'bitselect' | 'below'

interface GraphNode {
  id: number
  operation: Operation
  args: GraphNode[]
  level: Level
  /** The constant (for 'const'), the shift count, or the memory offset. */
  immediate: number
}

const MIDSTATE_OFFSET = 0
const PREFIX_OFFSET = 32
const MESSAGE_BITS = (64 + 16) * 8

function foldConstant(operation: Operation, values: number[], immediate: number): number {
  const [a = 0, b = 0, c = 0] = values
  switch (operation) {
    case 'add': return (a + b) >>> 0
    case 'xor': return (a ^ b) >>> 0
    case 'or': return (a | b) >>> 0
    case 'shr': return a >>> immediate
    case 'shl': return (a << immediate) >>> 0
    case 'bitselect': return ((a & c) | (b & ~c)) >>> 0
    default: throw new Error(`cannot fold ${operation}`)
  }
}

class Graph {
  private readonly nodes = new Map<string, GraphNode>()
  private nextId = 0

  private intern(operation: Operation, args: GraphNode[], level: Level, immediate: number): GraphNode {
    const key = `${operation}:${immediate}:${args.map((arg) => arg.id).join(',')}`
    let node = this.nodes.get(key)
    if (node === undefined) {
      node = { id: this.nextId++, operation, args, level, immediate }
      this.nodes.set(key, node)
    }
    return node
  }

  constant(value: number): GraphNode {
    return this.intern('const', [], 0, value >>> 0)
  }

  input(operation: 'splat-load' | 'load' | 'suffix' | 'threshold', level: Level, immediate = 0): GraphNode {
    return this.intern(operation, [], level, immediate)
  }

  apply(operation: Operation, args: GraphNode[], immediate = 0): GraphNode {
    if (args.every((arg) => arg.level === 0)) {
      return this.constant(foldConstant(operation, args.map((arg) => arg.immediate), immediate))
    }
    // Identities that the constant words of the nonce block make common.
    if (operation === 'add' || operation === 'xor' || operation === 'or') {
      const [a, b] = args as [GraphNode, GraphNode]
      if (a.level === 0 && a.immediate === 0) return b
      if (b.level === 0 && b.immediate === 0) return a
    }
    const level = Math.max(...args.map((arg) => arg.level)) as Level
    return this.intern(operation, args, level, immediate)
  }

  /** A sum ordered so that constants fold and per-call terms are added before per-attempt ones. */
  sum(...terms: GraphNode[]): GraphNode {
    const sorted = [...terms].sort((x, y) => x.level - y.level)
    return sorted.reduce((total, term) => this.apply('add', [total, term]))
  }

  xorAll(...terms: GraphNode[]): GraphNode {
    // A balanced tree leaves independent work for the CPU to overlap.
    while (terms.length > 1) {
      const next: GraphNode[] = []
      for (let i = 0; i < terms.length; i += 2) {
        const [a, b] = [terms[i] as GraphNode, terms[i + 1]]
        next.push(b === undefined ? a : this.apply('xor', [a, b]))
      }
      terms = next
    }
    return terms[0] as GraphNode
  }

  /** The shifted halves of rotate-right by n, to be XORed with other terms. */
  rotateTerms(x: GraphNode, n: number): GraphNode[] {
    return [this.apply('shr', [x], n), this.apply('shl', [x], 32 - n)]
  }
}

function buildCompression(graph: Graph): GraphNode {
  const midstate = Array.from({ length: 8 }, (_, i) => graph.input('splat-load', 1, MIDSTATE_OFFSET + 4 * i))
  const w: GraphNode[] = [0, 1, 2].map((i) => graph.input('load', 1, PREFIX_OFFSET + 16 * i))
  w.push(graph.input('suffix', 2), graph.constant(0x80000000))
  for (let t = 5; t < 15; t++) w.push(graph.constant(0))
  w.push(graph.constant(MESSAGE_BITS))
  for (let t = 16; t < 64; t++) {
    const x = w[t - 15] as GraphNode
    const y = w[t - 2] as GraphNode
    const sigma0 = graph.xorAll(...graph.rotateTerms(x, 7), ...graph.rotateTerms(x, 18), graph.apply('shr', [x], 3))
    const sigma1 = graph.xorAll(...graph.rotateTerms(y, 17), ...graph.rotateTerms(y, 19), graph.apply('shr', [y], 10))
    w.push(graph.sum(sigma1, w[t - 7] as GraphNode, sigma0, w[t - 16] as GraphNode))
  }
  let [a, b, c, d, e, f, g, h] = midstate as [GraphNode, GraphNode, GraphNode, GraphNode, GraphNode, GraphNode, GraphNode, GraphNode]
  for (let t = 0; t < 64; t++) {
    const bigSigma1 = graph.xorAll(...graph.rotateTerms(e, 6), ...graph.rotateTerms(e, 11), ...graph.rotateTerms(e, 25))
    // bitselect measured faster than the xor/and forms of Ch and Maj in V8.
    const choose = graph.apply('bitselect', [f, g, e])
    const t1 = graph.sum(h, bigSigma1, choose, graph.constant(ROUND_CONSTANTS[t] ?? 0), w[t] as GraphNode)
    const bigSigma0 = graph.xorAll(...graph.rotateTerms(a, 2), ...graph.rotateTerms(a, 13), ...graph.rotateTerms(a, 22))
    // Majority: where a and b differ, c decides; where they agree, either does.
    const majority = graph.apply('bitselect', [c, b, graph.apply('xor', [a, b])])
    const t2 = graph.sum(bigSigma0, majority)
    h = g
    g = f
    f = e
    e = graph.sum(d, t1)
    d = c
    c = b
    b = a
    a = graph.sum(t1, t2)
  }
  const firstWord = graph.sum(a, midstate[0] as GraphNode)
  return graph.apply('below', [firstWord, graph.input('threshold', 1)])
}

const simdInstruction: Partial<Record<Operation, string>> = {
  add: 'i32x4.add', xor: 'v128.xor', or: 'v128.or', shr: 'i32x4.shr_u', shl: 'i32x4.shl',
  bitselect: 'v128.bitselect', below: 'i32x4.lt_u',
}

function hex(value: number): string {
  return `0x${value.toString(16).padStart(8, '0')}`
}

class Emitter {
  private readonly uses = new Map<GraphNode, number>()
  private readonly readers = new Map<GraphNode, GraphNode[]>()
  private readonly locals = new Map<GraphNode, string>()
  private readonly freeLocals: string[] = []
  private localCount = 0

  constructor(private readonly root: GraphNode) {
    const seen = new Set<GraphNode>()
    const visit = (node: GraphNode): void => {
      if (seen.has(node)) return
      seen.add(node)
      for (const arg of node.args) {
        this.uses.set(arg, (this.uses.get(arg) ?? 0) + 1)
        this.readers.set(arg, [...(this.readers.get(arg) ?? []), node])
        visit(arg)
      }
    }
    visit(root)
  }

  private isMaterialized(node: GraphNode): boolean {
    if (node.level === 0) return false
    if (node === this.root) return true
    if (node.level === 1) return (this.readers.get(node) ?? []).some((reader) => reader.level === 2) || (this.uses.get(node) ?? 0) > 1
    return (this.uses.get(node) ?? 0) > 1
  }

  private allocate(): string {
    return this.freeLocals.pop() ?? `$v${this.localCount++}`
  }

  private expression(node: GraphNode, out: string[], reads: Set<GraphNode>, top: boolean): void {
    if (node.level === 0) {
      const v = hex(node.immediate)
      out.push(`v128.const i32x4 ${v} ${v} ${v} ${v}`)
      return
    }
    if (!top && this.isMaterialized(node)) {
      out.push(`local.get ${this.locals.get(node) ?? '$missing'}`)
      reads.add(node)
      return
    }
    switch (node.operation) {
      case 'splat-load': out.push('i32.const 0', `v128.load32_splat offset=${node.immediate}`); return
      case 'load': out.push('i32.const 0', `v128.load offset=${node.immediate}`); return
      case 'threshold': out.push('local.get $threshold', 'i32x4.splat'); return
      case 'suffix':
        // Four ASCII digits of $i, most significant first, as one big-endian word.
        out.push(
          'local.get $i', 'i32.const 1000', 'i32.div_u', 'i32.const 24', 'i32.shl',
          'local.get $i', 'i32.const 100', 'i32.div_u', 'i32.const 10', 'i32.rem_u', 'i32.const 16', 'i32.shl', 'i32.or',
          'local.get $i', 'i32.const 10', 'i32.div_u', 'i32.const 10', 'i32.rem_u', 'i32.const 8', 'i32.shl', 'i32.or',
          'local.get $i', 'i32.const 10', 'i32.rem_u', 'i32.or',
          'i32.const 0x30303030', 'i32.or', 'i32x4.splat',
        )
        return
      default:
        for (const arg of node.args) this.expression(arg, out, reads, false)
        if (node.operation === 'shr' || node.operation === 'shl') out.push(`i32.const ${node.immediate}`)
        out.push(simdInstruction[node.operation] ?? `;; unknown ${node.operation}`)
    }
  }

  emit(): { locals: string[]; prologue: string[]; body: string[] } {
    const ordered = [...this.uses.keys(), this.root].filter((node) => this.isMaterialized(node)).sort((x, y) => x.id - y.id)
    const prologue: string[] = []
    const perCall = ordered.filter((node) => node.level === 1)
    for (const node of perCall) {
      const name = `$c${this.locals.size}`
      this.expression(node, prologue, new Set(), true)
      prologue.push(`local.set ${name}`)
      this.locals.set(node, name)
    }
    const statements = ordered.filter((node) => node.level === 2)
    const lastRead = new Map<GraphNode, number>()
    const bodies: string[][] = []
    // Dry run to learn the statement at which each per-attempt local is last read.
    statements.forEach((node, index) => {
      const reads = new Set<GraphNode>()
      this.expression(node, [], reads, true)
      for (const read of reads) if (read.level === 2) lastRead.set(read, index)
      if (node !== this.root) this.locals.set(node, '$pending')
    })
    for (const node of statements) if (node !== this.root) this.locals.delete(node)
    statements.forEach((node, index) => {
      const out: string[] = []
      const reads = new Set<GraphNode>()
      this.expression(node, out, reads, true)
      for (const read of reads) {
        const name = this.locals.get(read)
        if (read.level === 2 && lastRead.get(read) === index && name !== undefined) this.freeLocals.push(name)
      }
      if (node !== this.root) {
        const name = this.allocate()
        this.locals.set(node, name)
        out.push(`local.set ${name}`)
      }
      bodies.push(out)
    })
    const locals = [
      ...perCall.map((_, i) => `$c${i}`),
      ...Array.from({ length: this.localCount }, (_, i) => `$v${i}`),
    ]
    return { locals, prologue, body: bodies.flat() }
  }
}

export function generateSolverWat(): string {
  const graph = new Graph()
  const root = buildCompression(graph)
  const { locals, prologue, body } = new Emitter(root).emit()
  const indent = (lines: string[], depth: number) => lines.map((line) => `${'  '.repeat(depth)}${line}`).join('\n')
  return `;; Generated by sdk/wasm/generate-solver-wat.ts; do not edit.
(module
  (memory (export "memory") 1)
  (func (export "search") (param $start i32) (param $end i32) (param $threshold i32) (result i32)
    (local $i i32)
${locals.map((name) => `    (local ${name} v128)`).join('\n')}
${indent(prologue, 2)}
    local.get $start
    local.set $i
    block $done
      local.get $i
      local.get $end
      i32.ge_u
      br_if $done
      loop $next
${indent(body, 4)}
        v128.any_true
        if
          local.get $i
          return
        end
        local.get $i
        i32.const 1
        i32.add
        local.tee $i
        local.get $end
        i32.lt_u
        br_if $next
      end
    end
    i32.const -1))
`
}
