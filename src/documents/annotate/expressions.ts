/**
 * docxtemplater's angular-expressions grammar, parsed into a tree and interpreted (nothing from a
 * template is ever evaluated as code): names and member access (a.b, a[0], a["b"], a[key]),
 * number/string/boolean/null literals, unary - + !, * / %, + -, comparisons, && ||, the ternary
 * `c ? a : b`, parentheses, and `|` filters with `:`-separated arguments. Only own properties of
 * plain data are readable (no __proto__, constructor or methods); there are no calls or assignments.
 */
import { FILTERS, textOf, UnknownFilterError, type FilterContext } from './filters.js';

type Node =
  | { kind: 'literal'; value: unknown }
  | { kind: 'this' }
  | { kind: 'name'; name: string }
  | { kind: 'member'; object: Node; key: Node }
  | { kind: 'unary'; op: '-' | '!' | '+'; arg: Node }
  | { kind: 'binary'; op: string; left: Node; right: Node }
  | { kind: 'conditional'; test: Node; then: Node; otherwise: Node }
  | { kind: 'filter'; name: string; input: Node; args: Node[] };

type Token = { type: 'num' | 'str' | 'id' | 'op'; value: string };

// Longest first, so "||" is not read as two filter pipes and "===" not as "==" "=".
const OPERATORS = ['===', '!==', '==', '!=', '>=', '<=', '&&', '||', '+', '-', '*', '/', '%', '>', '<', '!', '(', ')', '[', ']', '.', '|', '?', ':'];
const QUOTES: Record<string, string> = { '"': '"', "'": "'", '“': '”', '‘': '’', '”': '”', '’': '’' };
// Sticky (matched at lastIndex): the tokenizer never copies the rest of the tag, so it stays linear.
const NUMBER = /(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const IDENTIFIER = /[\p{L}_$][\p{L}\p{N}_$]*/uy;

function matchAt(pattern: RegExp, source: string, at: number): string | undefined {
  pattern.lastIndex = at;
  return pattern.exec(source)?.[0];
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', f: '\f', v: '\v', b: '\b', '0': '\0' };

/** A string literal from `start` (its opening quote) to its closing quote, with angular's backslash escapes. */
function readString(source: string, start: number, close: string): { value: string; end: number } {
  let value = '';
  for (let i = start + 1; i < source.length; i++) {
    const ch = source[i];
    if (ch === close) return { value, end: i };
    if (ch !== '\\') {
      value += ch;
      continue;
    }
    const next = source[++i];
    if (next === undefined) break;
    if (next === 'u') {
      const hex = source.slice(i + 1, i + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new SyntaxError(`invalid unicode escape in "${source}"`);
      value += String.fromCharCode(parseInt(hex, 16));
      i += 4;
    } else value += ESCAPES[next] ?? next;
  }
  throw new SyntaxError(`unterminated string in "${source}"`);
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i];
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const number = matchAt(NUMBER, source, i);
    if (number && !(ch === '.' && tokens.length && tokens[tokens.length - 1].type === 'id')) {
      tokens.push({ type: 'num', value: number });
      i += number.length;
      continue;
    }
    if (QUOTES[ch]) {
      const { value, end } = readString(source, i, QUOTES[ch]);
      tokens.push({ type: 'str', value });
      i = end + 1;
      continue;
    }
    const identifier = matchAt(IDENTIFIER, source, i);
    if (identifier) {
      tokens.push({ type: 'id', value: identifier });
      i += identifier.length;
      continue;
    }
    const op = OPERATORS.find((candidate) => source.startsWith(candidate, i));
    if (!op) throw new SyntaxError(`unexpected character "${ch}" in "${source}"`);
    tokens.push({ type: 'op', value: op });
    i += op.length;
  }
  return tokens;
}

const BINARY_LEVELS: string[][] = [['||'], ['&&'], ['==', '!=', '===', '!=='], ['<', '>', '<=', '>='], ['+', '-'], ['*', '/', '%']];
const LITERAL_NAMES: Record<string, unknown> = { true: true, false: false, null: null, undefined };

const MAX_NESTING = 100;
/** Evaluation recurses over the tree: a long operator chain is a deep tree too. */
const MAX_TREE_DEPTH = 1_000;

function children(node: Node): Node[] {
  switch (node.kind) {
    case 'member': return [node.object, node.key];
    case 'unary': return [node.arg];
    case 'binary': return [node.left, node.right];
    case 'conditional': return [node.test, node.then, node.otherwise];
    case 'filter': return [node.input, ...node.args];
    default: return [];
  }
}

/** Depth of the tree, without recursion (the tree may be deeper than the stack). */
function treeDepth(root: Node): number {
  let deepest = 0;
  const stack: Array<[Node, number]> = [[root, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    deepest = Math.max(deepest, depth);
    for (const child of children(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

class ExpressionParser {
  private pos = 0;
  private depth = 0;
  constructor(private readonly tokens: Token[], private readonly source: string) {}

  parse(): Node {
    const node = this.filtered();
    if (treeDepth(node) > MAX_TREE_DEPTH) throw new SyntaxError(`the expression is more than ${MAX_TREE_DEPTH} operations deep`);
    if (this.pos < this.tokens.length) throw new SyntaxError(`unexpected "${this.tokens[this.pos].value}" in "${this.source}"`);
    return node;
  }

  private peekOp(values: string[]): string | null {
    const token = this.tokens[this.pos];
    return token && token.type === 'op' && values.includes(token.value) ? token.value : null;
  }

  private expectOp(value: string): void {
    if (!this.peekOp([value])) throw new SyntaxError(`expected "${value}" in "${this.source}"`);
    this.pos++;
  }

  /** expression ( "|" filter ( ":" argument )* )* — filters bind loosest, as in angular. */
  private filtered(): Node {
    let node = this.conditional();
    while (this.peekOp(['|'])) {
      this.pos++;
      const name = this.tokens[this.pos++];
      if (!name || name.type !== 'id') throw new SyntaxError(`expected a filter name after "|" in "${this.source}"`);
      if (!Object.prototype.hasOwnProperty.call(FILTERS, name.value)) throw new UnknownFilterError(name.value, this.source);
      const args: Node[] = [];
      while (this.peekOp([':'])) {
        this.pos++;
        args.push(this.conditional());
      }
      node = { kind: 'filter', name: name.value, input: node, args };
    }
    return node;
  }

  /** Parentheses, brackets, ternaries and unary operators recurse: their nesting is bounded. */
  private nested<T>(read: () => T): T {
    if (++this.depth > MAX_NESTING) throw new SyntaxError(`the expression nests more than ${MAX_NESTING} levels deep`);
    try {
      return read();
    } finally {
      this.depth--;
    }
  }

  private conditional(): Node {
    const test = this.binary(0);
    if (!this.peekOp(['?'])) return test;
    this.pos++;
    const then = this.nested(() => this.conditional());
    this.expectOp(':');
    return { kind: 'conditional', test, then, otherwise: this.nested(() => this.conditional()) };
  }

  private binary(level: number): Node {
    if (level === BINARY_LEVELS.length) return this.unary();
    let left = this.binary(level + 1);
    for (let op = this.peekOp(BINARY_LEVELS[level]); op; op = this.peekOp(BINARY_LEVELS[level])) {
      this.pos++;
      left = { kind: 'binary', op, left, right: this.binary(level + 1) };
    }
    return left;
  }

  private unary(): Node {
    const op = this.peekOp(['-', '!', '+']);
    if (op) {
      this.pos++;
      return { kind: 'unary', op: op as '-' | '!' | '+', arg: this.nested(() => this.unary()) };
    }
    return this.members(this.primary());
  }

  private primary(): Node {
    const token = this.tokens[this.pos++];
    if (!token) throw new SyntaxError(`incomplete expression "${this.source}"`);
    if (token.type === 'num') return { kind: 'literal', value: Number(token.value) };
    if (token.type === 'str') return { kind: 'literal', value: token.value };
    if (token.type === 'op' && token.value === '(') {
      const inner = this.nested(() => this.filtered());
      this.expectOp(')');
      return inner;
    }
    if (token.type !== 'id') throw new SyntaxError(`unexpected "${token.value}" in "${this.source}"`);
    if (Object.prototype.hasOwnProperty.call(LITERAL_NAMES, token.value)) return { kind: 'literal', value: LITERAL_NAMES[token.value] };
    if (token.value === 'this') return { kind: 'this' };
    return { kind: 'name', name: token.value };
  }

  private members(base: Node): Node {
    let node = base;
    for (;;) {
      if (this.peekOp(['.'])) {
        this.pos++;
        const name = this.tokens[this.pos++];
        if (!name || (name.type !== 'id' && name.type !== 'num')) throw new SyntaxError(`expected a property name in "${this.source}"`);
        node = { kind: 'member', object: node, key: { kind: 'literal', value: name.value } };
      } else if (this.peekOp(['['])) {
        this.pos++;
        const key = this.nested(() => this.filtered());
        this.expectOp(']');
        node = { kind: 'member', object: node, key };
      } else if (this.peekOp(['('])) {
        throw new SyntaxError(`calls are not supported in "${this.source}"; use a filter ("value | upper")`);
      } else return node;
    }
  }
}

function readOwn(target: unknown, key: unknown): unknown {
  if (target === null || target === undefined || (typeof key !== 'string' && typeof key !== 'number')) return undefined;
  if ((typeof target === 'string' || Array.isArray(target)) && key === 'length') return target.length;
  if (typeof target !== 'object') return undefined;
  return Object.prototype.hasOwnProperty.call(target, key) ? (target as Record<string | number, unknown>)[key] : undefined;
}

export interface ScopeContext {
  scopeList?: unknown[];
  num?: number;
}

/** A name looked up from the innermost scope outwards (loops see their parents' data). */
export function lookupName(name: string, scope: unknown, context: ScopeContext): unknown {
  const own = readOwn(scope, name);
  if (own !== undefined) return own;
  const list = context.scopeList ?? [];
  for (let i = context.num ?? list.length - 1; i >= 0; i--) {
    const value = readOwn(list[i], name);
    if (value !== undefined) return value;
  }
  return undefined;
}

/**
 * Data as JavaScript's operators would see it, without ever calling into it: JSON data can carry a
 * "toString" or "valueOf" key, which JavaScript's own conversion would try to call.
 */
function primitive(value: unknown): unknown {
  return value === null || typeof value !== 'object' ? value : textOf(value);
}

function applyBinary(op: string, left: unknown, right: unknown): unknown {
  // Strict equality compares the data itself (an object equals only itself).
  if (op === '===') return left === right;
  if (op === '!==') return left !== right;
  const bothObjects = typeof left === 'object' && left !== null && typeof right === 'object' && right !== null;
  const a = primitive(left);
  const b = primitive(right);
  switch (op) {
    // Loose equality as in angular-expressions and JavaScript (two objects: the same object).
    case '==': return bothObjects ? left === right : a == b; // eslint-disable-line eqeqeq
    case '!=': return bothObjects ? left !== right : a != b; // eslint-disable-line eqeqeq
  }
  // A missing operand (null counts as missing, as in angular) makes arithmetic missing: the tag is
  // reported as having no value rather than showing 0, NaN or half a sentence.
  if (['+', '-', '*', '/', '%'].includes(op) && (a === undefined || a === null || b === undefined || b === null)) return undefined;
  if (a === undefined || b === undefined) return undefined;
  switch (op) {
    case '+': return typeof a === 'string' || typeof b === 'string' ? `${textOf(a)}${textOf(b)}` : Number(a) + Number(b);
    case '-': return Number(a) - Number(b);
    case '*': return Number(a) * Number(b);
    case '/': return Number(a) / Number(b);
    case '%': return Number(a) % Number(b);
    case '<': return (a as number) < (b as number);
    case '>': return (a as number) > (b as number);
    case '<=': return (a as number) <= (b as number);
    case '>=': return (a as number) >= (b as number);
  }
  throw new SyntaxError(`unknown operator ${op}`);
}

interface Evaluation {
  scope: unknown;
  context: ScopeContext;
  filters: FilterContext;
}

function evaluate(node: Node, run: Evaluation): unknown {
  switch (node.kind) {
    case 'literal': return node.value;
    case 'this': return run.scope;
    case 'name': return lookupName(node.name, run.scope, run.context);
    case 'member': return readOwn(evaluate(node.object, run), evaluate(node.key, run));
    case 'unary': {
      const value = evaluate(node.arg, run);
      if (node.op === '!') return !value;
      return value === undefined ? undefined : node.op === '-' ? -Number(primitive(value)) : Number(primitive(value));
    }
    case 'binary': {
      const left = evaluate(node.left, run);
      if (node.op === '&&') return left ? evaluate(node.right, run) : left;
      if (node.op === '||') return left ? left : evaluate(node.right, run);
      return applyBinary(node.op, left, evaluate(node.right, run));
    }
    case 'conditional': return evaluate(node.test, run) ? evaluate(node.then, run) : evaluate(node.otherwise, run);
    case 'filter': return FILTERS[node.name](evaluate(node.input, run), node.args.map((arg) => evaluate(arg, run)), run.filters);
  }
}

export type CompiledExpression = (scope: unknown, context?: ScopeContext, filters?: FilterContext) => unknown;

const NO_WARNINGS: FilterContext = { warn: () => undefined };

/**
 * Compiles one tag into an evaluator. Throws SyntaxError on a syntax error and UnknownFilterError
 * for a filter that does not exist (docxtemplater reports both with the tag's place).
 */
export function compileExpression(tag: string): CompiledExpression {
  const source = tag.trim();
  if (source === '' || source === '.') return (scope) => scope;
  const tree = new ExpressionParser(tokenize(source), source).parse();
  return (scope, context = {}, filters = NO_WARNINGS) => evaluate(tree, { scope, context, filters });
}

/** The first identifier of a tag expression (the data key it starts from), if any. */
export function rootIdentifier(tag: string): string | null {
  const match = /^\s*([\p{L}_$][\p{L}\p{N}_$]*)/u.exec(tag);
  return match ? match[1] : null;
}
