import { ErrorCode, DomainError } from '../../errors/domain-error.js';

/**
 * What filling a template costs, counted before docxtemplater renders it: every part of the
 * template (text, XML, tags) is rendered once per execution of the loops around it, and every tag in
 * a loop body is looked up from the innermost loop scope outwards. The count walks the compiled
 * template with the request's data, evaluating only the loop tags (as docxtemplater will), and stops
 * as soon as the budget is passed, so the count itself costs at most the budget. A 1 KB template of
 * four nested loops over 100 items (10^8 iterations) is refused in milliseconds.
 */
export interface TemplateBudget {
  /** Part executions, each weighted by its loop depth + 1 (the scopes a lookup may read). */
  maxWork: number;
  /** Loops nested in loops. */
  maxLoopDepth: number;
}

/** About 2 s of CPU at the most (template-budget.test.ts renders a template just under it and prints the time: 1.9 s). */
export const TEMPLATE_BUDGET: Readonly<TemplateBudget> = { maxWork: 1_000_000, maxLoopDepth: 32 };

/** A docxtemplater compiled part (postparsed), as far as the count reads it. */
export interface CompiledPart {
  type: string;
  value: string;
  module?: string;
  inverted?: boolean;
  subparsed?: CompiledPart[];
}

interface LookupContext {
  num: number;
  scopeList: unknown[];
  meta: { part: CompiledPart };
}

/** docxtemplater's `parser` option: a tag's text → a getter evaluated against a scope. */
export type TagParser = (tag: string) => { get(scope: unknown, context: LookupContext): unknown };

export function templateTooComplex(limit: 'maxWork' | 'maxLoopDepth', budget: TemplateBudget = TEMPLATE_BUDGET) {
  const message =
    limit === 'maxWork'
      ? `Filling this template with this data takes more than the ${budget.maxWork.toLocaleString('en')} steps one request may use (loop iterations × the parts inside them × their nesting); send fewer rows or fewer nested loops, or split the document.`
      : `The template nests loops more than ${budget.maxLoopDepth} deep; flatten the loops or the data.`;
  return new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX, message, { extensions: { limit: { name: `annotate.${limit}`, max: budget[limit] } } });
}

/**
 * The work of rendering `templates` (one postparsed list per part of the package) with `data`, as
 * docxtemplater's loop module runs it: an array loops over its items, an object once with itself
 * as scope, any other truthy value once in the current scope, and an inverted section (`{^x}`) once
 * when the value is falsy or an empty array. A missing value is looked up in the outer scopes, as
 * docxtemplater does. Throws the 422 once the work passes the budget.
 */
export function countTemplateWork(templates: CompiledPart[][], data: unknown, parser: TagParser, budget: TemplateBudget = TEMPLATE_BUDGET): number {
  let work = 0;
  const getters = new Map<CompiledPart, ReturnType<TagParser>>();
  const valueOf = (part: CompiledPart, scopeList: unknown[]): unknown => {
    let getter = getters.get(part);
    if (!getter) getters.set(part, (getter = parser(part.value)));
    for (let num = scopeList.length - 1; num >= 0; num--) {
      const value = getter.get(scopeList[num], { num, scopeList, meta: { part } });
      if (value !== null && value !== undefined) return value;
    }
    return undefined;
  };
  const walk = (parts: CompiledPart[], scopeList: unknown[]) => {
    const depth = scopeList.length - 1;
    work += parts.length * (depth + 1);
    if (work > budget.maxWork) throw templateTooComplex('maxWork', budget);
    for (const part of parts) {
      if (part.module !== 'loop' || !part.subparsed) continue;
      if (depth + 1 > budget.maxLoopDepth) throw templateTooComplex('maxLoopDepth', budget);
      const value = valueOf(part, scopeList);
      const empty = !value || (Array.isArray(value) && value.length === 0);
      if (part.inverted) {
        if (empty) walk(part.subparsed, [...scopeList, scopeList.at(-1)]);
      } else if (Array.isArray(value)) {
        // Each iteration costs at least one step, even with an empty body.
        work += value.length;
        for (const item of value) walk(part.subparsed, [...scopeList, item]);
      } else if (!empty) {
        walk(part.subparsed, [...scopeList, typeof value === 'object' ? value : scopeList.at(-1)]);
      }
    }
  };
  for (const parts of templates) walk(parts, [data]);
  return work;
}
