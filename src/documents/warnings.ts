/**
 * A note about a result that succeeded: something the caller may not expect (a tag left empty,
 * an image not embedded, a signing choice). Answered in JSON bodies as `warnings` and in the
 * X-Docproc-Warnings header; `code` is stable, `message` is for people, `field` names the
 * field, tag, image or signature it is about when there is one.
 */
export interface Warning {
  code: WarningCode;
  message: string;
  field?: string;
}

export const WARNING_CODES = {
  // annotate
  TAG_EMPTY: 'A template tag had no value and was left empty (strict=true makes this 422 MISSING_VALUES).',
  FIELD_UNKNOWN: 'A field matched no tag or content control and was ignored (ignoreUnknownFields=true).',
  FIELD_REPEATED: 'A field id was given more than once; the last value was used.',
  TEMPLATE_HAS_NO_TAGS: 'The template has no tags and no named content controls; it was returned unchanged.',
  VALUE_FORMAT: 'A filter could not format a value (e.g. a date or number filter on another type); the value was used as given.',
  // convert (Markdown, HTML)
  TEXT_ENCODING: 'The text was not valid UTF-8 or named an unknown character set; it was read as UTF-8.',
  FRONT_MATTER_IGNORED: 'The YAML front matter could not be read and was ignored.',
  IMAGE_NOT_EMBEDDED: 'An image was not embedded (not fetched, not allowed or not readable); its alt text was used.',
  STYLESHEET_NOT_APPLIED: 'HTML: a linked stylesheet was not sent with the document, or selectors/at-rules docproc does not apply were left out.',
  // sign
  AUDIT_PAGE_OMITTED: 'No audit-trail page was added (the PDF is already signed or claims PDF/A); the record is in the signature.',
  AUDIT_RECORD_PLACEMENT: 'Where the audit record went instead of a new attachment (countersignature, PDF/A, DOCX).',
  EARLIER_SIGNATURES_KEPT: 'The document already carried signatures; they were kept and the new one added.',
  SIGNATURE_FIELDS_UNFILLED: 'The PDF has empty signature fields (placeholders) this signature did not fill.',
  SIGNATURE_IMAGE_NOT_DRAWN: 'appearance.image was not drawn: the signature field it was meant for has no visible box.',
  NOT_TIMESTAMPED: 'The signature carries no time-stamp; its time is the service clock.',
  // verify
  DOCUMENT_STRUCTURE: 'verify: the file had structural problems (e.g. a broken cross-reference chain) that were recovered; see document.warnings.',
  SIGNATURE_NOTE: 'verify: a note on one signature or time-stamp (field names it); the same text is in its own warnings.',
  VALIDATION_DATA_INCOMPLETE: 'B-LT/B-LTA: validation data (chain or revocation) could not be stored for a certificate.',
} as const;

export type WarningCode = keyof typeof WARNING_CODES;

export const warning = (code: WarningCode, message: string, field?: string): Warning => (field === undefined ? { code, message } : { code, message, field });

/** The same warning said twice (same code, message and field) is kept once. */
export function uniqueWarnings(warnings: readonly Warning[]): Warning[] {
  const seen = new Set<string>();
  return warnings.filter((w) => {
    const key = `${w.code}\u0000${w.field ?? ''}\u0000${w.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

interface ReportWithWarnings {
  document: { warnings: readonly string[] };
  signatures: readonly { field?: string; part?: string; warnings: readonly string[] }[];
  timestamps?: readonly { field?: string; warnings: readonly string[] }[];
}

/** A verify report's warnings in one list: the document's, then each signature's and time-stamp's, named by field (or part). */
export function reportWarnings(report: ReportWithWarnings): Warning[] {
  const entries: readonly { field?: string; part?: string; warnings: readonly string[] }[] = [...report.signatures, ...(report.timestamps ?? [])];
  const signatureNotes = entries.flatMap((s) => s.warnings.map((message) => warning('SIGNATURE_NOTE', message, s.field ?? s.part)));
  return uniqueWarnings([...report.document.warnings.map((message) => warning('DOCUMENT_STRUCTURE', message)), ...signatureNotes]);
}
