import type { DocumentWork } from '../../office/bridge-protocol.js';
import type { TrackedChangesMode } from '../../office/index.js';
import { invalidFile } from '../../errors/domain-error.js';
import { readCompoundFile } from '../../inputs/compound-file.js';
import { csvSeparator } from '../../inputs/detect-format.js';
import { ODF_FORMATS, OOXML_FORMATS, type DocumentFormat } from '../../inputs/formats.js';
import { OpcPackage } from '../ooxml/package.js';
import { scrubPackage } from '../ooxml/scrub.js';
import { resolveTrackedChanges } from '../ooxml/tracked-changes.js';
import { readZip } from '../ooxml/zip/read.js';
import { assertDocBudget } from './doc-layout.js';
import { documentWork } from './document-work.js';
import { assertLayoutBudget } from './layout-budget.js';
import { assertPptBudget } from './ppt-structure.js';
import { assertCsvStructure, assertOdfStructure, assertOoxmlStructure } from './structure-budget.js';
import { assertXlsStructure } from './xls-structure.js';

/** A document made ready for LibreOffice, and what LibreOffice still has to do to it. */
export interface PreparedDocx {
  /** The rewritten package; absent when the input needed no rewrite (use the bytes you have). */
  rewritten?: Uint8Array;
  /** Absent: LibreOffice refreshes everything it can (formats Node does not read). */
  work?: DocumentWork;
  /** Milliseconds spent on the zip guard + scrub, and on resolving tracked changes. */
  timings: { guards: number; changes?: number };
}

const WORD_FORMATS: ReadonlySet<DocumentFormat> = new Set(['docx', 'docm', 'dotx']);
const KIND: Partial<Record<DocumentFormat, 'sheets' | 'slides'>> = { xlsx: 'sheets', xlsm: 'sheets', ods: 'sheets', pptx: 'slides', odp: 'slides' };
const NOTHING_TO_REFRESH: DocumentWork = { fields: false, indexes: false };

/**
 * Reads an OOXML package (DOCX, DOCM, DOTX, XLSX, XLSM, PPTX) once: refuses zip bombs, encrypted
 * packages, tables LibreOffice cannot lay out in time or memory (layout-budget.ts) and spreadsheets
 * or presentations past their cell, area, slide or shape budget (structure-budget.ts); removes
 * references to outside content (ooxml/scrub.ts: external links, OLE links, SVG references); for
 * Word documents with `accept`/`reject` resolves tracked changes in the OOXML so LibreOffice never
 * sees them; and tells what else the document needs (document-work.ts). An OpenDocument package
 * gets the ZIP guard and, for ODS/ODP, the structure budget (its bytes are not rewritten); a CSV's
 * cells are counted on its text, an XLS's on its BIFF records (xls-structure.ts), a PPT's slides
 * and shapes on its record tree (ppt-structure.ts) and a DOC's or DOT's tables on its piece table
 * and paragraph properties (doc-layout.ts), the raster pictures of PPT and DOC against the pixel
 * limit; an Apple Pages package gets the ZIP guard; other formats go to LibreOffice as they are (their import filters
 * read them inside the jail). CPU-bound and input-sized: it runs in a worker
 * thread (workers/docx-pdf.ts).
 */
export function prepareForPdf(input: Uint8Array, format: DocumentFormat, mode: TrackedChangesMode): PreparedDocx {
  const started = performance.now();
  const buffer = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  if (ODF_FORMATS.has(format)) {
    const entries = readZip(buffer);
    const kind = KIND[format];
    if (kind) assertOdfStructure(entries, kind);
    return { work: format === 'odt' || format === 'ott' ? undefined : NOTHING_TO_REFRESH, timings: { guards: performance.now() - started } };
  }
  if (format === 'pages') {
    // The ZIP guard (sizes, ratios, names) before libetonyek inflates it in the jail.
    readZip(buffer);
    return { timings: { guards: performance.now() - started } };
  }
  if (format === 'xls') {
    assertXlsStructure(buffer);
    return { timings: { guards: performance.now() - started } };
  }
  if (format === 'csv') {
    const text = buffer.toString('utf8');
    // The separator convert.ts gives Calc (filterOptionsFor), found the same way.
    assertCsvStructure(text, csvSeparator(buffer.subarray(0, 64 * 1024).toString('utf8')) ?? 44);
    return { timings: { guards: performance.now() - started } };
  }
  if (format === 'ppt' || format === 'doc' || format === 'dot') {
    const file = readCompoundFile(buffer);
    if (!file) throw invalidFile('The file is a damaged OLE2 compound file (legacy Office format); save it again and resend it.');
    if (format === 'ppt') assertPptBudget(file);
    else assertDocBudget(file);
    return { timings: { guards: performance.now() - started } };
  }
  if (!OOXML_FORMATS.has(format)) return { timings: { guards: 0 } };
  const word = WORD_FORMATS.has(format);
  const pkg = OpcPackage.open(buffer, { tolerant: true, mainPart: word ? undefined : null });
  assertLayoutBudget(pkg);
  const kind = KIND[format];
  if (kind) assertOoxmlStructure(pkg, kind);
  const scrubbed = scrubPackage(pkg);
  const guards = performance.now() - started;
  let resolved = 0;
  let changes: number | undefined;
  if (word && mode !== 'markup') {
    const changesStarted = performance.now();
    resolved = resolveTrackedChanges(pkg, mode).changes;
    changes = performance.now() - changesStarted;
  }
  const work = word ? documentWork(pkg) : NOTHING_TO_REFRESH;
  const rewritten = scrubbed || resolved ? pkg.write() : undefined;
  return {
    rewritten: rewritten && new Uint8Array(rewritten.buffer, rewritten.byteOffset, rewritten.byteLength),
    work,
    timings: changes === undefined ? { guards } : { guards, changes },
  };
}

/** prepareForPdf for a DOCX (the only format before issue 24; kept for its callers). */
export const prepareDocxForPdf = (input: Uint8Array, mode: TrackedChangesMode): PreparedDocx => prepareForPdf(input, 'docx', mode);
