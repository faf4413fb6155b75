import { DomainError, ErrorCode } from '../../errors/domain-error.js';

/**
 * How much structure a Markdown or HTML document may have. The parsers (micromark, parse5) build
 * every node in memory before the model exists, at roughly 1–5 KB per node, so these are counted
 * on the source text before parsing and refused past the limit with 422 DOCUMENT_TOO_COMPLEX.
 * A document under them can still exhaust a worker's heap (WORKER_MEMORY_MB): that is a 422 too.
 * The README lists them.
 */
export interface MarkupComplexityLimits {
  maxBlocks: number;
  maxTableCells: number;
  maxInlineMarkers: number;
  maxHtmlElements: number;
}

export const MARKUP_COMPLEXITY: Readonly<MarkupComplexityLimits> = {
  /** Paragraphs, headings, list items, quotes, code blocks… (Markdown) */
  maxBlocks: 100_000,
  /** Table cells, all tables together (header columns × rows for Markdown; td/th for HTML). */
  maxTableCells: 25_000,
  /** Emphasis, link and image markers in the whole Markdown document. */
  maxInlineMarkers: 400_000,
  /** Elements (start tags) in an HTML document. */
  maxHtmlElements: 100_000,
};

export function tooComplex(what: string, limit: number): DomainError {
  return new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX, `The document has more than ${limit.toLocaleString('en')} ${what}; split it into smaller documents and send them separately.`);
}
