import { DomainError, ErrorCode, invalidFile } from '../errors/domain-error.js';
import { parseXml } from '../documents/ooxml/xml.js';
import { peekZip } from '../documents/ooxml/zip/read.js';
import { CFB_MAGIC, readCompoundFile } from './compound-file.js';
import { TEXT_FORMATS, type DocumentFormat } from './formats.js';
import { iworkKind, type IworkKind } from './iwork.js';

/**
 * The one format detector every route uses. A format is read from the content: magic numbers, the
 * streams of an OLE2 compound file, an OOXML package's main content type, an OpenDocument package's
 * mimetype, an Apple iWork package's index (iwork.ts). Only text (TXT, CSV, Markdown, HTML) carries
 * no mark of its format; for it the caller's `from` is trusted, and without one the content is
 * sniffed (RTF and HTML by their start, CSV by consistent delimited lines) with the file name's
 * extension choosing only among the text formats the content can be. A file name alone never decides.
 */

export interface FormatHints {
  /** The format the caller says the document is (`from`). */
  declared?: DocumentFormat;
  /** The uploaded file's name: a hint between text formats only. */
  filename?: string;
  /**
   * How a format the route does not take is refused: UNSUPPORTED_MEDIA_TYPE (415, the default), or
   * INVALID_FILE_FORMAT (400) on the routes whose contract is SuperDoc's (annotate, sign, verify),
   * which declares no 415 there. Both name the accepted formats (acceptedFormats).
   */
  unsupportedAs?: UnsupportedFormatCode;
}

/** What the content says, before any route decides whether it takes it. */
export type ContentFormat =
  | { kind: 'known'; format: DocumentFormat }
  /** Text without a mark of its own: which text format it is comes from `from`, the name or sniffing. */
  | { kind: 'text' }
  /** Something docproc does not take (an image, a ZIP that is no office package, a Visio file…). */
  | { kind: 'unsupported'; what: string };

const OOXML_MAIN_TYPES: Record<string, DocumentFormat> = {
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml': 'docx',
  'application/vnd.ms-word.document.macroEnabled.main+xml': 'docm',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml': 'dotx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml': 'xlsx',
  'application/vnd.ms-excel.sheet.macroEnabled.main+xml': 'xlsm',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml': 'pptx',
};
/** Main parts of OOXML kinds docproc does not take, named in the 415. */
// Any main part: the kinds once listed here ((wordprocessingml|…|visio)[^"]*\.main\+xml$) end so too, and that
// alternative rescanned to the end of the value from each kind's name.
const OTHER_OOXML_MAIN = /\.main\+xml$/i;

const WELL_KNOWN_MAIN_PARTS: [string, DocumentFormat][] = [
  ['word/document.xml', 'docx'],
  ['xl/workbook.xml', 'xlsx'],
  ['ppt/presentation.xml', 'pptx'],
];

const ODF_MIMETYPES: Record<string, DocumentFormat> = {
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/vnd.oasis.opendocument.text-template': 'ott',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
  'application/vnd.oasis.opendocument.presentation': 'odp',
};

/** Formats that are the same thing for a caller's `from`: the content's own, more exact, one is used. */
const SAME_KIND: DocumentFormat[][] = [
  ['doc', 'dot'],
  ['docx', 'docm', 'dotx'],
  ['xlsx', 'xlsm'],
  ['odt', 'ott'],
];
const sameKind = (a: DocumentFormat, b: DocumentFormat) => a === b || SAME_KIND.some((kind) => kind.includes(a) && kind.includes(b));

const MAX_CONTENT_TYPES_BYTES = 1024 * 1024;
const ZIP_LOCAL_HEADER = 0x04034b50;
const PDF_SEARCH_BYTES = 1024;
const HTML_TAG_START = /^<(?:!doctype\s+html|html|head|body|meta|title|div|p|table|h[1-6]|section|article|main|span|ul|ol|br|hr|img|a|style|link|script|header|footer|nav|center|font|pre|blockquote)\b/i;

/**
 * The text after its leading HTML comments (each ends at its first `-->`, as a browser reads it) and
 * the white space between them. One scan: a regex of repeated lazy comments backtracks through every
 * way of grouping them when no tag follows (25 comments took seconds).
 */
function afterLeadingComments(text: string): string {
  let at = 0;
  while (text.startsWith('<!--', at)) {
    const end = text.indexOf('-->', at + 4);
    if (end < 0) break;
    at = end + 3;
    while (at < text.length && /\s/.test(text[at]!)) at++;
  }
  return text.slice(at);
}

/**
 * A PDF header at the start, or within the first KB (where readers look) of a file that ends like a
 * PDF: text that merely mentions "%PDF-" near its start stays text.
 */
function isPdf(data: Buffer): boolean {
  const at = data.subarray(0, PDF_SEARCH_BYTES).indexOf('%PDF-');
  if (at < 0) return false;
  return at === 0 || data.subarray(Math.max(0, data.length - 2048)).includes('%%EOF');
}

export function contentFormat(data: Buffer): ContentFormat {
  if (isPdf(data)) return { kind: 'known', format: 'pdf' };
  if (data.subarray(0, 8).equals(CFB_MAGIC)) return compoundFileFormat(data);
  if (data.length >= 4 && data.readUInt32LE(0) === ZIP_LOCAL_HEADER) return packageFormat(data);
  // WordPerfect: 0xFF "WPC", then the product type at byte 9 (1 = WordPerfect, 10 = a document).
  if (data.length >= 16 && data[0] === 0xff && data.subarray(1, 4).toString('latin1') === 'WPC') return { kind: 'known', format: 'wpd' };
  const head = data.subarray(0, 4096);
  if (head.includes(0)) return { kind: 'unsupported', what: 'binary content of an unknown format' };
  const text = head.toString('utf8').replace(/^\uFEFF/, '').trimStart();
  if (text.startsWith('{\\rtf')) return { kind: 'known', format: 'rtf' };
  return { kind: 'text' };
}

function compoundFileFormat(data: Buffer): ContentFormat {
  const file = readCompoundFile(data);
  if (!file) {
    // Too damaged to read its directory; a password-protected OOXML still names its streams somewhere.
    if (data.includes(Buffer.from('EncryptionInfo', 'utf16le'))) throw encryptedDocument();
    throw invalidFile('The file is a damaged OLE2 compound file (legacy Office format); save it again and resend it.');
  }
  const names = new Set(file.root.map((e) => e.name));
  if (names.has('EncryptionInfo') && names.has('EncryptedPackage')) throw encryptedDocument();
  const wordStream = file.root.find((e) => e.name === 'WordDocument' && e.type === 2);
  if (wordStream) {
    // The File Information Block starts the stream: fDot, bit 0 of the flags at 0x0A, marks a template.
    const fib = file.streamHead(wordStream, 12);
    return { kind: 'known', format: fib && fib.length >= 12 && fib.readUInt16LE(0) === 0xa5ec && fib[10]! & 1 ? 'dot' : 'doc' };
  }
  if (names.has('Workbook') || names.has('Book')) return { kind: 'known', format: 'xls' };
  if (names.has('PowerPoint Document')) return { kind: 'known', format: 'ppt' };
  return { kind: 'unsupported', what: 'an OLE2 compound file that is no Word, Excel or PowerPoint document' };
}

function packageFormat(data: Buffer): ContentFormat {
  const { names, entries } = peekZip(data, ['[Content_Types].xml', 'mimetype'], MAX_CONTENT_TYPES_BYTES);
  const contentTypes = entries.get('[Content_Types].xml');
  if (contentTypes) {
    const mains = new Set<DocumentFormat>();
    let other: string | undefined;
    let doc;
    try {
      doc = parseXml(contentTypes.toString('utf8'));
    } catch {
      throw invalidFile('The package’s [Content_Types].xml is not well-formed XML; save the document again and resend it.');
    }
    for (const override of Array.from(doc.getElementsByTagNameNS('*', 'Override'))) {
      const type = (override.getAttribute('ContentType') ?? '').trim();
      const format = OOXML_MAIN_TYPES[type];
      if (format) mains.add(format);
      else if (OTHER_OOXML_MAIN.test(type)) other ??= type;
    }
    if (mains.size === 0) {
      // No Override names a main part: a Default may (some generators declare every .xml so), else the well-known main part name.
      for (const fallback of Array.from(doc.getElementsByTagNameNS('*', 'Default'))) {
        const format = OOXML_MAIN_TYPES[(fallback.getAttribute('ContentType') ?? '').trim()];
        if (format) mains.add(format);
      }
      if (mains.size === 0) for (const [part, format] of WELL_KNOWN_MAIN_PARTS) if (names.includes(part)) mains.add(format);
      if (mains.size > 0) other = undefined;
    }
    if (mains.size > 1) throw invalidFile(`The package declares several main documents (${[...mains].join(', ')}); no office application reads it one way.`);
    const [main] = mains;
    if (main) return { kind: 'known', format: main };
    if (other) return { kind: 'unsupported', what: `an OOXML package of another kind (${other})` };
  }
  const mimetype = entries.get('mimetype')?.toString('latin1').trim();
  if (mimetype) {
    const format = ODF_MIMETYPES[mimetype];
    return format ? { kind: 'known', format } : { kind: 'unsupported', what: `an OpenDocument package of another kind (${mimetype.slice(0, 80)})` };
  }
  const iwork = iworkKind(data, names);
  if (iwork === 'pages') return { kind: 'known', format: 'pages' };
  if (iwork) return { kind: 'unsupported', what: IWORK_REFUSED[iwork] };
  if (contentTypes) return { kind: 'unsupported', what: 'an OOXML package without a main document' };
  return { kind: 'unsupported', what: 'a ZIP archive that is no office document' };
}

const IWORK_REFUSED: Record<Exclude<IworkKind, 'pages'>, string> = {
  numbers: 'an Apple Numbers document; of Apple iWork, docproc converts Pages documents only',
  keynote: 'an Apple Keynote or Numbers document; of Apple iWork, docproc converts Pages documents only',
  unknown: 'an Apple iWork package whose application cannot be read (its index is damaged, or larger than 8 MB)',
};

/** What text without `from` is: HTML when it starts with a tag, else the name's text format, else CSV when it reads as a table, else Markdown. */
export function sniffTextFormat(data: Buffer, filename?: string): DocumentFormat {
  const text = data.subarray(0, 64 * 1024).toString('utf8').replace(/^\uFEFF/, '');
  const start = text.trimStart().replace(/^<\?xml[^>]*\?>\s*/i, '');
  if (HTML_TAG_START.test(afterLeadingComments(start))) return 'html';
  const extension = /\.([a-z0-9]+)$/i.exec(filename ?? '')?.[1]?.toLowerCase();
  const named = extension ? TEXT_EXTENSIONS[extension] : undefined;
  if (named) return named;
  return csvSeparator(text) === undefined ? 'md' : 'csv';
}

const TEXT_EXTENSIONS: Record<string, DocumentFormat> = { txt: 'txt', text: 'txt', csv: 'csv', tsv: 'csv', md: 'md', markdown: 'md', htm: 'html', html: 'html', xhtml: 'html' };

const SEPARATORS = [',', ';', '\t'] as const;
const MARKDOWN_LINE_START = /^\s*(#|>|[-*+]\s|\d+[.)]\s|\||```|~~~)/;

/** Fields of one CSV line split at `separator`, quotes respected (a quoted field may hold the separator). */
function fieldsOf(line: string, separator: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (ch === '"') {
      if (quoted && line[i + 1] === '"') {
        field += '"';
        i++;
      } else quoted = !quoted;
    } else if (ch === separator && !quoted) {
      fields.push(field);
      field = '';
    } else field += ch;
  }
  fields.push(field);
  return fields;
}

/**
 * The separator (its character code) of text that reads as CSV: at least two lines (of the first
 * 50), each with at least two fields at that separator and none wider than the first (the header),
 * no line starting like Markdown, and fields that mostly do not start with a space (prose puts one
 * after its commas).
 * Undefined when the text is not CSV; also used to pick Calc's separator for CSV the caller named.
 */
export function csvSeparator(text: string): number | undefined {
  const lines = text.split(/\r?\n/).slice(0, 51);
  if (lines.length > 50) lines.pop(); // possibly cut in the middle
  const rows = lines.filter((l) => l.trim() !== '');
  if (rows.length < 2 || rows.some((l) => MARKDOWN_LINE_START.test(l))) return undefined;
  for (const separator of SEPARATORS) {
    const split = rows.map((l) => fieldsOf(l, separator));
    const width = split[0]!.length;
    // Real files leave trailing fields out (a row as wide as the header or narrower), never fewer than two.
    if (width < 2 || split.some((fields) => fields.length < 2 || fields.length > width)) continue;
    const later = split.flatMap((fields) => fields.slice(1));
    if (later.filter((f) => /^ \S/.test(f)).length * 2 >= later.length) continue;
    return separator.charCodeAt(0);
  }
  return undefined;
}

export type UnsupportedFormatCode = typeof ErrorCode.UNSUPPORTED_MEDIA_TYPE | typeof ErrorCode.INVALID_FILE_FORMAT;

export const unsupportedFormat = (what: string, accepted: readonly DocumentFormat[], code: UnsupportedFormatCode = ErrorCode.UNSUPPORTED_MEDIA_TYPE) =>
  new DomainError(code, `The file is ${what}; this operation takes ${accepted.join(', ')}.`, { extensions: { acceptedFormats: [...accepted] } });

const encryptedDocument = () => new DomainError(ErrorCode.ENCRYPTED_DOCUMENT, 'The document is password-protected; remove the password and send it again.');

/**
 * The format of `data` for a route that takes `accepted`: detected from the content (see the module
 * comment), checked against the caller's `from`. Throws 415 UNSUPPORTED_MEDIA_TYPE naming the accepted
 * formats, 400 INVALID_FILE_FORMAT when `from` disagrees with the content or the package is malformed,
 * 422 ENCRYPTED_DOCUMENT for a password-protected OOXML file.
 */
export function detectFormat(data: Buffer, accepted: readonly DocumentFormat[], hints: FormatHints = {}): DocumentFormat {
  const content = contentFormat(data);
  const { declared } = hints;
  let format: DocumentFormat;
  if (content.kind === 'known') {
    if (declared && !sameKind(declared, content.format)) {
      throw invalidFile(`The file is ${describe(content.format)} by its content, not ${describe(declared)} as from says; leave from out or correct it.`, {
        details: [{ field: 'from', issue: `the content is ${content.format}` }],
      });
    }
    // A template the caller names as such is read as one (a .dot has no mark but one flag bit).
    format = declared && declared !== content.format && declared === 'dot' ? declared : content.format;
  } else if (content.kind === 'text') {
    if (declared && !TEXT_FORMATS.has(declared)) {
      throw invalidFile(`The file is plain text by its content, not ${describe(declared)} as from says.`, { details: [{ field: 'from', issue: 'the content is text' }] });
    }
    if (!declared && !accepted.some((f) => TEXT_FORMATS.has(f))) throw unsupportedFormat('text, not a document', accepted, hints.unsupportedAs);
    format = declared ?? sniffTextFormat(data, hints.filename);
  } else {
    if (declared) throw invalidFile(`The file is ${content.what}, not ${describe(declared)} as from says.`, { details: [{ field: 'from', issue: 'the content is not of that format' }] });
    throw unsupportedFormat(content.what, accepted, hints.unsupportedAs);
  }
  if (!accepted.includes(format)) throw unsupportedFormat(describe(format), accepted, hints.unsupportedAs);
  return format;
}

const describe = (format: DocumentFormat) => (format === 'md' ? 'Markdown' : format === 'html' ? 'HTML' : format === 'txt' ? 'plain text' : `a ${format.toUpperCase()} document`);
