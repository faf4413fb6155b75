import type { ErrorObject } from 'ajv';
import type { ErrorDetail } from '../errors/domain-error.js';

/**
 * Ajv's errors rewritten so each one says what was wrong, what is allowed and what to send:
 * an enum lists its values, a const names the expected value, `contains` says which item is
 * missing, an unknown property lists the declared ones. The validators run with `verbose: true`
 * so each error carries its schema and the value it judged.
 */
const quote = (value: unknown) => `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
const list = (values: readonly unknown[]) => values.map(quote).join(', ');

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const text = quote(value);
  return `${typeof value === 'number' ? 'a number' : typeof value === 'boolean' ? 'a boolean' : 'a string'} ${text.length > 60 ? `${text.slice(0, 57)}…\`` : text}`;
}

/** One branch of a union, for "must be one of": an object by its required members, else its type or values. */
function describeBranch(schema: unknown): string {
  const s = (schema ?? {}) as { type?: string; required?: string[]; const?: unknown; enum?: unknown[] };
  if (s.const !== undefined) return quote(s.const);
  if (s.enum) return list(s.enum);
  if (s.type === 'object' || s.required) return s.required?.length ? `an object with ${list(s.required)}` : 'an object';
  return s.type ?? 'another shape';
}

/** What a `contains` schema asks of an item, e.g. "an item with type `submit`". */
function describeContains(schema: unknown): string {
  const properties = (schema as { properties?: Record<string, { const?: unknown; enum?: unknown[] }> })?.properties ?? {};
  const wanted = Object.entries(properties)
    .map(([name, s]) => (s.const !== undefined ? `${name} ${quote(s.const)}` : s.enum ? `${name} one of ${list(s.enum)}` : undefined))
    .filter(Boolean);
  return wanted.length ? `an item with ${wanted.join(' and ')}` : 'an item matching its schema';
}

function issueOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  const got = 'data' in error && error.data !== undefined ? ` (got ${kindOf(error.data)})` : '';
  switch (error.keyword) {
    case 'enum':
      return `must be one of ${list((params.allowedValues as unknown[]) ?? [])}${got}`;
    case 'const':
      return `must be ${quote(params.allowedValue)}${got}`;
    case 'required':
      return 'is required';
    case 'additionalProperties': {
      const declared = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      return `unknown property ${quote(params.additionalProperty)}${declared.length ? `; allowed: ${list(declared)}` : ''}`;
    }
    case 'contains':
      return `must contain ${describeContains(error.schema)}`;
    case 'type':
      return `must be ${/^[aeiou]/.test(String(params.type)) ? 'an' : 'a'} ${String(params.type).replace(/,/g, ' or ')}${got}`;
    case 'anyOf':
    case 'oneOf':
      return Array.isArray(error.schema) ? `must be one of: ${error.schema.map(describeBranch).join('; ')}${got}` : `matches none of the allowed shapes${got}`;
    default:
      return error.message ?? 'is invalid';
  }
}

const isUnion = (e: ErrorObject) => e.keyword === 'anyOf' || e.keyword === 'oneOf';
const isDirectChild = (path: string, parent: string) => path.startsWith(`${parent}/`) && !path.slice(parent.length + 1).includes('/');
const under = (e: ErrorObject, umbrella: ErrorObject, branch = '') => e !== umbrella && e.schemaPath.startsWith(`${umbrella.schemaPath}/${branch}`) && e.instancePath.startsWith(umbrella.instancePath);

/**
 * The branch of a union the value was meant for: the only one whose type (and const/enum
 * discriminators) the value has. Its own errors say more than "matches none".
 */
function intendedBranch(union: ErrorObject, errors: readonly ErrorObject[]): number | undefined {
  const count = Array.isArray(union.schema) ? union.schema.length : 0;
  const candidates: number[] = [];
  for (let i = 0; i < count; i++) {
    const own = errors.filter((e) => under(e, union, `${i}/`));
    const wrongKind = own.some((e) =>
      (e.keyword === 'type' && e.instancePath === union.instancePath) ||
      ((e.keyword === 'const' || e.keyword === 'enum') && isDirectChild(e.instancePath, union.instancePath)));
    if (!wrongKind) candidates.push(i);
  }
  return candidates.length === 1 ? candidates[0] : undefined;
}

/**
 * Errors that only explain another are dropped: the per-item failures under a `contains`, and the
 * failures of the branches of a union the value matched none of (the union lists its branches),
 * unless the value was plainly meant for one branch: then that branch's errors replace the union.
 */
function withoutExplainedErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const dropped = new Set<ErrorObject>();
  for (const umbrella of errors) {
    if (umbrella.keyword !== 'contains' && !isUnion(umbrella)) continue;
    const branch = isUnion(umbrella) ? intendedBranch(umbrella, errors) : undefined;
    if (branch !== undefined) {
      dropped.add(umbrella);
      errors.filter((e) => under(e, umbrella) && !under(e, umbrella, `${branch}/`)).forEach((e) => dropped.add(e));
    } else {
      errors.filter((e) => under(e, umbrella)).forEach((e) => dropped.add(e));
    }
  }
  return errors.filter((e) => !dropped.has(e));
}

export function validationDetails(errors: readonly ErrorObject[], where: string): ErrorDetail[] {
  const kept = withoutExplainedErrors(errors);
  const details: ErrorDetail[] = [];
  for (const error of kept) {
    const params = error.params as { missingProperty?: string; additionalProperty?: string };
    const path = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const field = [where, path, params.missingProperty ?? params.additionalProperty].filter(Boolean).join('.');
    const detail = { field, issue: issueOf(error) };
    if (!details.some((d) => d.field === detail.field && d.issue === detail.issue)) details.push(detail);
  }
  return details;
}

export const summarize = (details: readonly ErrorDetail[]) => `The request is invalid: ${details.map((d) => `${d.field} ${d.issue}`).join('; ')}.`;
