import { ErrorCode, invalidFile, DomainError } from '../../../errors/domain-error.js';
import { PdfView } from '../../pdf/document.js';
import { PdfDict, PdfRef, PdfString, asNumber, asText, type PdfValue } from '../../pdf/objects.js';
import { findSignatureFields, walkFields, walkPageTree, type FieldNode, type SignatureFieldRef } from '../../pdf/structure.js';

/**
 * What signing needs to know about a PDF, read with the one PDF reader verification uses
 * (documents/pdf): the xref chain as the verifier follows it, the catalog, pages, form fields and
 * signature fields it sees. Edits go through the one writer (documents/pdf/writer.ts).
 */
export interface PdfStructure {
  bytes: Buffer;
  view: PdfView;
  rootRef: PdfRef;
  catalog: PdfDict;
  /** Leaf pages in document order, with the generation the xref names. */
  pageRefs: PdfRef[];
  firstPageSize: { width: number; height: number };
  title?: string;
  fields: FieldNode[];
  signatureFields: SignatureFieldRef[];
  /** Signature fields that carry a signature (an unfilled placeholder does not count). */
  signedFieldCount: number;
  /** DocMDP permission of a certification signature, when there is one (1 = no changes). */
  docMdpPermission?: number;
  /** PDF/A identification from the catalog's XMP (pdfaid:part and pdfaid:conformance), when claimed. */
  pdfA?: { part: number; conformance: string };
}

const MAX_XMP_BYTES = 4 * 1024 * 1024;
const A4 = { width: 595.28, height: 841.89 };

/** The PDF/A part and conformance the document claims in its XMP metadata (attribute or element form). */
function readPdfAIdentification(view: PdfView, catalog: PdfDict): PdfStructure['pdfA'] {
  const bytes = view.streamData(catalog.get('Metadata'));
  if (!bytes || bytes.length > MAX_XMP_BYTES) return undefined;
  const xmp = Buffer.from(bytes).toString('utf8');
  const value = (name: string) => new RegExp(`pdfaid:${name}\\s*=\\s*["']([^"']{1,8})["']`).exec(xmp)?.[1] ?? pdfAidElement(xmp, name);
  const part = Number(value('part'));
  if (!Number.isInteger(part) || part < 1 || part > 4) return undefined;
  return { part, conformance: (value('conformance') ?? '').trim().toUpperCase() };
}

/**
 * The first `<pdfaid:NAME>` element whose content, white space around it aside, is 1 to 8 characters
 * (all white space: its last character). The regex `<pdfaid:NAME>\s*([^<]{1,8}?)\s*</pdfaid:NAME>` tried
 * every split of a long white-space content between its two `\s*` (quadratic in the XMP's 4 MB).
 */
export function pdfAidElement(xmp: string, name: string): string | undefined {
  for (const [, content] of xmp.matchAll(new RegExp(`<pdfaid:${name}>([^<]*)</pdfaid:${name}>`, 'g'))) {
    const trimmed = content!.trim();
    if (trimmed.length <= 8 && content!.length > 0) return trimmed || content!.slice(-1);
  }
  return undefined;
}

/** An unfilled placeholder (as @signpdf and others write before signing): /Contents all zero bytes. */
export function isUnfilledSignature(view: PdfView, value: PdfValue | undefined): boolean {
  const contents = view.resolve(view.dict(value)?.get('Contents'));
  return contents instanceof PdfString && contents.bytes.length > 0 && contents.bytes.every((b) => b === 0);
}

/** The permission of the catalog's DocMDP certification signature, if the document is certified. */
function readDocMdp(view: PdfView, catalog: PdfDict): number | undefined {
  const sig = view.dict(view.dict(catalog.get('Perms'))?.get('DocMDP'));
  if (!sig) return undefined;
  for (const ref of view.array(sig.get('Reference')) ?? []) {
    const p = asNumber(view.resolve(view.dict(view.dict(ref)?.get('TransformParams'))?.get('P')));
    if (p !== undefined) return p;
  }
  return 2; // DocMDP default permission
}

/** The page's /MediaBox, inherited through /Parent (§7.7.3.4), as width and height. */
function pageSize(view: PdfView, page: PdfDict): { width: number; height: number } | undefined {
  let node: PdfDict | undefined = page;
  for (let depth = 0; node && depth < 64; depth++) {
    const box = view.array(node.get('MediaBox'))?.map((v) => asNumber(view.resolve(v)));
    if (box && box.length === 4 && box.every((n) => n !== undefined)) {
      const [x1, y1, x2, y2] = box as number[];
      return { width: Math.abs(x2! - x1!), height: Math.abs(y2! - y1!) };
    }
    node = view.dict(node.get('Parent'));
  }
  return undefined;
}

/**
 * Refuses a file that display readers could read otherwise than the reader did (verification would
 * refuse the signed result as ambiguous). Call it after everything signing relies on was read.
 */
export function assertUnambiguous(view: PdfView): void {
  const problems = view.ambiguities;
  if (problems.length === 0) return;
  throw new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT,
    `The PDF can be read in more than one way (${problems.slice(0, 3).join('; ')}), so a signature could not say what it signs. Re-save the PDF with a PDF editor or qpdf and try again.`);
}

const noRoom = () => new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT,
  'The PDF has no usable cross-reference section to append a signature to (broken or missing startxref). Re-save or re-export the PDF and try again.');

export function readPdfStructure(input: Buffer): PdfStructure {
  if (input.subarray(0, 1024).indexOf('%PDF-') < 0) throw invalidFile('The document is not a PDF (no %PDF header). Send a PDF file.');
  let view: PdfView;
  try {
    view = new PdfView(input, input.length);
  } catch {
    throw noRoom();
  }
  // An update is appended to the chain of cross-reference sections; a file the reader had to
  // rebuild by scanning has no sound chain to extend, and signing it would sign a guess.
  if (view.reconstructed || view.recovery.length > 0) throw noRoom();
  if (view.encryption) {
    throw new DomainError(ErrorCode.ENCRYPTED_DOCUMENT, 'The PDF is encrypted or password-protected; remove the protection and send it again.');
  }
  const root = view.trailer.get('Root');
  const catalog = view.catalog;
  const { pages } = walkPageTree(view);
  const signatureFields = findSignatureFields(view);
  const fields = walkFields(view);
  // Before judging what was read: an ambiguity can make an object vanish from one reading.
  assertUnambiguous(view);
  if (!(root instanceof PdfRef) || !catalog) throw invalidFile('The PDF has no document catalog; it cannot be signed. Re-export it and try again.');
  const pageRefs = pages.flatMap((p) => (p.num === undefined ? [] : [view.refTo(p.num)]));
  if (pages.length === 0) throw invalidFile('The PDF has no pages to sign.');
  if (pageRefs.length !== pages.length) throw invalidFile('The PDF page tree is broken (a page is not an indirect object); re-export the PDF and try again.');
  const structure: PdfStructure = {
    bytes: input,
    view,
    rootRef: view.refTo(root.num),
    catalog,
    pageRefs,
    firstPageSize: pageSize(view, pages[0]!.dict) ?? A4,
    title: asText(view.resolve(view.dict(view.trailer.get('Info'))?.get('Title'))),
    fields,
    signatureFields,
    signedFieldCount: signatureFields.filter((f) => f.value !== undefined && view.resolve(f.value) !== null && !isUnfilledSignature(view, f.value)).length,
    docMdpPermission: readDocMdp(view, catalog),
    pdfA: readPdfAIdentification(view, catalog),
  };
  assertUnambiguous(view);
  return structure;
}
