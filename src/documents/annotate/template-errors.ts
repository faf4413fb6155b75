import { DomainError, ErrorCode } from '../../errors/domain-error.js';

/** One problem in the template, as reported to the caller. */
export interface TemplateProblem {
  id: string | null;
  tag: string | null;
  explanation: string;
  part: string | null;
  offset: number | null;
}

interface DocxtemplaterError {
  name?: string;
  message?: string;
  properties?: {
    id?: string;
    xtag?: string;
    explanation?: string;
    file?: string;
    offset?: number | number[];
    openingtag?: string;
    closingtag?: string;
    rootError?: unknown;
    errors?: DocxtemplaterError[];
  };
}

/** docxtemplater's explanation, with the parser's own message when it has one (syntax error, unknown filter). */
function explanationOf(error: DocxtemplaterError): string {
  const explanation = error.properties?.explanation ?? error.message ?? 'invalid template';
  const root = error.properties?.rootError;
  return root instanceof Error && root.message ? `${explanation}: ${root.message}` : explanation;
}

/** An DomainError a tag's value raised while rendering (e.g. raw XML refused), found inside docxtemplater's error. */
export function appErrorInside(error: unknown): DomainError | null {
  const props = (error as DocxtemplaterError)?.properties;
  if (props?.rootError instanceof DomainError) return props.rootError;
  for (const nested of props?.errors ?? []) {
    const found = appErrorInside(nested);
    if (found) return found;
  }
  return null;
}

function problemOf(error: DocxtemplaterError): TemplateProblem {
  const props = error.properties ?? {};
  return {
    id: props.id ?? null,
    tag: props.xtag ?? props.openingtag ?? null,
    explanation: explanationOf(error),
    part: props.file ?? null,
    offset: typeof props.offset === 'number' ? props.offset : Array.isArray(props.offset) ? (props.offset[0] ?? null) : null,
  };
}

export function isTemplateError(error: unknown): boolean {
  const name = (error as DocxtemplaterError)?.name;
  return typeof name === 'string' && ['TemplateError', 'ScopeParserError', 'RenderingError'].includes(name);
}

/** Turns docxtemplater's (Multi)Error into a 422 TEMPLATE_INVALID listing every problem. */
export function templateInvalid(error: unknown): DomainError {
  const raw = error as DocxtemplaterError;
  const nested = raw.properties?.errors;
  const problems = (nested && nested.length ? nested : [raw]).map(problemOf);
  const summary = problems.slice(0, 3).map((p) => `${p.part ?? 'template'}: ${p.explanation}`).join('; ');
  return new DomainError(
    ErrorCode.TEMPLATE_INVALID,
    `The template has ${problems.length} error(s); fix them in the DOCX and send it again (${summary}${problems.length > 3 ? '; …' : ''}).`,
    {
      extensions: { errors: problems },
      details: problems.map((p) => ({ field: `${p.part ?? 'template'}${p.offset !== null ? `:${p.offset}` : ''}`, issue: p.tag ? `{${p.tag}}: ${p.explanation}` : p.explanation })),
      cause: error,
    },
  );
}

/** A story part that is not XML: the caller's document is damaged. */
export function unreadablePart(part: string, error: unknown): DomainError {
  return new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT, `${part} could not be read as XML (${(error as Error)?.message ?? String(error)}); repair the document in Word and send it again.`);
}
