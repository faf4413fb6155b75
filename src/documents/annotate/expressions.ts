/**
 * A small, safe expression language for docxtemplater tags: property paths (a.b, a[0], a["b"]),
 * number/string/boolean literals, + - * / %, comparisons, && || !, and parentheses.
 * It is parsed into a tree and interpreted; nothing from the template is ever evaluated as code,
 * and only own properties of plain data are readable (no __proto__, constructor, methods).
 */
type Node =
  | { kind: 'literal'; value: unknown }
  | { kind: 'this' }
  | { kind: 'path'; root: string; keys: Array<string | number> }
  | { kind: 'unary'; op: '-' | '!' | '+'; arg: Node }
  | { kind: 'binary'; op: string; left: Node; right: Node };

type Token = { type: 'num' | 'str' | 'id' | 'op'; value: string };

const OPERATORS = ['===', '!==', '==', '!=', '>=', '<=', '&&', '||', '+', '-', '*', '/', '%', '>', '<', '!', '(', ')', '[', ']', '.'];

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i];
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const number = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(source.slice(i));
    if (number && !(ch === '.' && tokens.length && tokens[tokens.length - 1].type === 'id')) {
      tokens.push({ type: 'num', value: number[0] });
      i += number[0].length;
      continue;
    }
    if (ch === '"' || ch === "'" || ch === '“' || ch === '‘') {
      const close = ch === '“' ? '”' : ch === '‘' ? '’' : ch;
      const end = source.indexOf(close, i + 1);
      if (end < 0) throw new Error(`unterminated string in "${source}"`);
      tokens.push({ type: 'str', value: source.slice(i + 1, end) });
      i = end + 1;
      continue;
    }
    const identifier = /^[\p{L}_$][\p{L}\p{N}_$]*/u.exec(source.slice(i));
    if (identifier) {
      tokens.push({ type: 'id', value: identifier[0] });
      i += identifier[0].length;
      continue;
    }
    const op = OPERATORS.find((candidate) => source.startsWith(candidate, i));
    if (!op) throw new Error(`unexpected character "${ch}" in "${source}"`);
    tokens.push({ type: 'op', value: op });
    i += op.length;
  }
  return tokens;
}

const BINARY_LEVELS: string[][] = [['||'], ['&&'], ['==', '!=', '===', '!=='], ['<', '>', '<=', '>='], ['+', '-'], ['*', '/', '%']];

class ExpressionParser {
  private pos = 0;
  constructor(private readonly tokens: Token[], private readonly source: string) {}

  parse(): Node {
    const node = this.binary(0);
    if (this.pos < this.tokens.length) throw new Error(`unexpected "${this.tokens[this.pos].value}" in "${this.source}"`);
    return node;
  }

  private peekOp(values: string[]): string | null {
    const token = this.tokens[this.pos];
    return token && token.type === 'op' && values.includes(token.value) ? token.value : null;
  }

  private expectOp(value: string): void {
    if (!this.peekOp([value])) throw new Error(`expected "${value}" in "${this.source}"`);
    this.pos++;
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
      return { kind: 'unary', op: op as '-' | '!' | '+', arg: this.unary() };
    }
    return this.primary();
  }

  private primary(): Node {
    const token = this.tokens[this.pos++];
    if (!token) throw new Error(`incomplete expression "${this.source}"`);
    if (token.type === 'num') return { kind: 'literal', value: Number(token.value) };
    if (token.type === 'str') return { kind: 'literal', value: token.value };
    if (token.type === 'op' && token.value === '(') {
      const inner = this.binary(0);
      this.expectOp(')');
      return inner;
    }
    if (token.type === 'op' && token.value === '.' && this.pos === this.tokens.length) return { kind: 'this' };
    if (token.type !== 'id') throw new Error(`unexpected "${token.value}" in "${this.source}"`);
    if (token.value === 'true' || token.value === 'false') return { kind: 'literal', value: token.value === 'true' };
    if (token.value === 'null') return { kind: 'literal', value: null };
    if (token.value === 'this') return this.accessors({ kind: 'this' });
    return this.accessors({ kind: 'path', root: token.value, keys: [] });
  }

  private accessors(base: Node): Node {
    const keys: Array<string | number> = [];
    for (;;) {
      if (this.peekOp(['.'])) {
        this.pos++;
        const name = this.tokens[this.pos++];
        if (!name || (name.type !== 'id' && name.type !== 'num')) throw new Error(`expected a property name in "${this.source}"`);
        keys.push(name.value);
      } else if (this.peekOp(['['])) {
        this.pos++;
        const key = this.tokens[this.pos++];
        if (!key || (key.type !== 'num' && key.type !== 'str')) throw new Error(`only literal indexes are allowed in "${this.source}"`);
        keys.push(key.type === 'num' ? Number(key.value) : key.value);
        this.expectOp(']');
      } else break;
    }
    if (base.kind === 'this') return keys.length ? { kind: 'path', root: '', keys } : base;
    return { kind: 'path', root: (base as { root: string }).root, keys };
  }
}

function readOwn(target: unknown, key: string | number): unknown {
  if (target === null || target === undefined) return undefined;
  if ((typeof target === 'string' || Array.isArray(target)) && key === 'length') return target.length;
  if (typeof target !== 'object') return undefined;
  return Object.prototype.hasOwnProperty.call(target, key) ? (target as Record<string | number, unknown>)[key] : undefined;
}

interface ScopeContext {
  scopeList?: unknown[];
  num?: number;
}

function lookupRoot(root: string, scope: unknown, context: ScopeContext): unknown {
  const own = readOwn(scope, root);
  if (own !== undefined) return own;
  const list = context.scopeList ?? [];
  for (let i = (context.num ?? list.length - 1); i >= 0; i--) {
    const value = readOwn(list[i], root);
    if (value !== undefined) return value;
  }
  return undefined;
}

function applyBinary(op: string, a: unknown, b: unknown): unknown {
  switch (op) {
    case '&&': return a && b;
    case '||': return a || b;
    case '==': case '===': return a === b;
    case '!=': case '!==': return a !== b;
  }
  if (a === undefined || b === undefined) return undefined;
  switch (op) {
    case '+': return typeof a === 'string' || typeof b === 'string' ? `${a}${b}` : Number(a) + Number(b);
    case '-': return Number(a) - Number(b);
    case '*': return Number(a) * Number(b);
    case '/': return Number(a) / Number(b);
    case '%': return Number(a) % Number(b);
    case '<': return (a as number) < (b as number);
    case '>': return (a as number) > (b as number);
    case '<=': return (a as number) <= (b as number);
    case '>=': return (a as number) >= (b as number);
  }
  throw new Error(`unknown operator ${op}`);
}

function evaluate(node: Node, scope: unknown, context: ScopeContext): unknown {
  switch (node.kind) {
    case 'literal': return node.value;
    case 'this': return scope;
    case 'path': {
      let value = node.root === '' ? scope : lookupRoot(node.root, scope, context);
      for (const key of node.keys) value = readOwn(value, key);
      return value;
    }
    case 'unary': {
      const value = evaluate(node.arg, scope, context);
      if (node.op === '!') return !value;
      return value === undefined ? undefined : node.op === '-' ? -Number(value) : Number(value);
    }
    case 'binary': {
      const left = evaluate(node.left, scope, context);
      if (node.op === '&&' && !left) return left;
      if (node.op === '||' && left) return left;
      return applyBinary(node.op, left, evaluate(node.right, scope, context));
    }
  }
}

/** Compiles one tag into an evaluator; throws a plain Error on a syntax error (docxtemplater reports it). */
export function compileExpression(tag: string): (scope: unknown, context?: ScopeContext) => unknown {
  const source = tag.trim();
  if (source === '' || source === '.') return (scope) => scope;
  const tree = new ExpressionParser(tokenize(source), source).parse();
  return (scope, context = {}) => evaluate(tree, scope, context);
}

/** docxtemplater `parser` option. */
export function safeExpressionParser(tag: string) {
  const run = compileExpression(tag);
  return {
    get(scope: unknown, context: ScopeContext) {
      // The innermost scope is looked up first; parents come from context.scopeList.
      return run(scope, context);
    },
  };
}

/** The first identifier of a tag expression (the data key it starts from), if any. */
export function rootIdentifier(tag: string): string | null {
  const match = /^\s*([\p{L}_$][\p{L}\p{N}_$]*)/u.exec(tag);
  return match ? match[1] : null;
}
