import { compileExpression, lookupName, type CompiledExpression, type ScopeContext } from './expressions.js';
import { textOf, UnknownFilterError, type FilterContext } from './filters.js';
import { IMAGE_MODULE_NAME } from './image-module.js';
import { checkRawXml } from './raw-xml.js';
import { PreparedVisual } from './visuals.js';

/** Characters that only make sense in an expression: a tag holding them that does not parse is a mistake, not a name. */
const EXPRESSION_ONLY = /[|"'“”‘’]/;
/** The name a filter chain is applied to, as an identifier no template writes. */
const INPUT = '$docprocFilterInput';

interface TagContext extends ScopeContext {
  meta?: { part?: { module?: string } };
}

/** Index of the first `|` that starts a filter (not inside quotes, not part of `||`), or -1. */
function firstFilterPipe(source: string): number {
  let quote: string | null = null;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '|') {
      if (source[i + 1] === '|') i++;
      else if (source[i - 1] !== '|') return i;
    }
  }
  return -1;
}

function tryCompile(source: string): { compiled: CompiledExpression | null; error: unknown } {
  try {
    return { compiled: compileExpression(source), error: null };
  } catch (error) {
    if (error instanceof UnknownFilterError) throw error;
    return { compiled: null, error };
  }
}

/** `{head | filters…}` whose head is a name: the filters, applied to the value found under that name. */
interface NamedFilterChain {
  head: string;
  apply(input: unknown, context: ScopeContext, filters: FilterContext): unknown;
}

function namedFilterChain(name: string): { chain: NamedFilterChain | null; error: unknown } {
  const pipe = firstFilterPipe(name);
  const head = pipe > 0 ? name.slice(0, pipe).trim() : '';
  if (!head) return { chain: null, error: null };
  const { compiled, error } = tryCompile(`${INPUT} ${name.slice(pipe)}`);
  if (!compiled) return { chain: null, error };
  return { chain: { head, apply: (input, context, filters) => compiled({ [INPUT]: input }, context, filters) }, error: null };
}

/**
 * docxtemplater's `parser` option. A tag is first a name, as docxtemplater's default parser reads
 * it: `{first-name}`, `{customer.name}`, `{Customer Name}`, `{附件列表：附件的字段名}` are looked up
 * as written, from the innermost loop outwards; `{first-name | upper}` filters the value of that
 * name. Only when no field or data key has the name is the tag read as an angular expression
 * (member access, operators, filters). A tag that is neither a valid expression nor holds
 * expression-only characters (a filter pipe, quotes) stays a plain name; one that does is a
 * template error, as is an unknown filter.
 */
export function createTagParser(warn: (message: string, tag: string) => void) {
  return (tag: string) => {
    const name = tag.trim();
    const { compiled: expression, error } = tryCompile(name);
    const { chain, error: chainError } = namedFilterChain(name);
    if (!expression && !chain && EXPRESSION_ONLY.test(name)) throw chainError ?? error;
    const filters: FilterContext = { warn: (message) => warn(`Tag {${name}}: ${message}`, name) };

    const valueOf = (scope: unknown, context: TagContext): unknown => {
      if (name === '' || name === '.') return scope;
      const exact = lookupName(name, scope, context);
      if (exact !== undefined) return exact;
      if (chain) {
        const headValue = lookupName(chain.head, scope, context);
        if (headValue !== undefined || !expression) return chain.apply(headValue, context, filters);
      }
      return expression ? expression(scope, context, filters) : undefined;
    };

    return {
      get(scope: unknown, context: TagContext) {
        const module = context.meta?.part?.module;
        const value = valueOf(scope, context);
        // An image/signature field used in a plain {tag}: show the typed name (or nothing), never "[object Object]".
        if (value instanceof PreparedVisual && module !== IMAGE_MODULE_NAME) return value.typedName;
        if (module === 'rawxml' && value !== undefined && value !== null) return checkRawXml(value, name);
        // A plain {tag} shows text: a list's items joined, an object nothing (its members are what a template shows).
        if (module === undefined && typeof value === 'object' && value !== null) {
          if (Array.isArray(value)) return value.map(textOf).join(', ');
          warn(`Tag {${name}} is an object, not text, and was left empty; show its members, e.g. {${name}.name}.`, name);
          return '';
        }
        return value;
      },
    };
  };
}
