import {
  PDFArray, PDFDict, PDFDocument, PDFName, PDFNumber, PDFRawStream, PDFRef, PDFStream, PDFString, PDFHexString, decodePDFRawStream, type PDFContext, type PDFObject,
} from 'pdf-lib';
import { AppError, ErrorCode, invalidFile, unprocessable } from '../../../errors/app-error.js';

/**
 * What the incremental writer needs to know about a PDF, read with pdf-lib (which is used to
 * READ only: the original bytes are never re-serialised).
 */
export interface PdfStructure {
  bytes: Buffer;
  context: PDFContext;
  /** Offset of the last cross-reference section (the update's /Prev). */
  startXref: number;
  usesXrefStream: boolean;
  rootRef: PDFRef;
  catalog: PDFDict;
  info?: PDFObject;
  id?: PDFArray;
  firstFreeObjectNumber: number;
  pageRefs: PDFRef[];
  firstPageSize: { width: number; height: number };
  title?: string;
  /** Signature fields that already carry a signature value. */
  signedFieldCount: number;
  /** DocMDP permission of a certification signature, when there is one (1 = no changes). */
  docMdpPermission?: number;
  /** PDF/A identification from the catalog's XMP (pdfaid:part and pdfaid:conformance), when claimed. */
  pdfA?: { part: number; conformance: string };
}

const MAX_XMP_BYTES = 4 * 1024 * 1024;

/** The PDF/A part and conformance the document claims in its XMP metadata (attribute or element form). */
export function readPdfAIdentification(context: PDFContext, catalog: PDFDict): PdfStructure['pdfA'] {
  const ref = catalog.get(PDFName.of('Metadata'));
  const stream = ref instanceof PDFRef ? context.lookup(ref) : ref;
  if (!(stream instanceof PDFRawStream)) return undefined;
  let xmp: string;
  try {
    const bytes = decodePDFRawStream(stream).decode();
    if (bytes.length > MAX_XMP_BYTES) return undefined;
    xmp = Buffer.from(bytes).toString('utf8');
  } catch {
    return undefined;
  }
  const value = (name: string) =>
    new RegExp(`pdfaid:${name}\\s*=\\s*["']([^"']{1,8})["']`).exec(xmp)?.[1] ?? new RegExp(`<pdfaid:${name}>\\s*([^<]{1,8}?)\\s*</pdfaid:${name}>`).exec(xmp)?.[1];
  const part = Number(value('part'));
  if (!Number.isInteger(part) || part < 1 || part > 4) return undefined;
  return { part, conformance: (value('conformance') ?? '').trim().toUpperCase() };
}

const PDF_MAGIC = Buffer.from('%PDF-');

const noRoom = () => unprocessable(ErrorCode.UNPROCESSABLE_DOCUMENT,
  'The PDF has no usable cross-reference section to append a signature to (broken or missing startxref). Re-save or re-export the PDF and try again.');

function findStartXref(bytes: Buffer): { offset: number; isStream: boolean } {
  const tail = bytes.subarray(Math.max(0, bytes.length - 4096));
  const at = tail.lastIndexOf('startxref');
  if (at < 0) throw noRoom();
  const match = /^startxref\s+(\d+)/.exec(tail.subarray(at, at + 40).toString('latin1'));
  if (!match) throw noRoom();
  const declared = Number(match[1]);
  if (!(declared > 0 && declared < bytes.length)) throw noRoom();
  // Writers are often off by a few bytes (e.g. pointing at the newline before "xref"); accept
  // a section starting within a short distance and point /Prev at its exact offset.
  for (const delta of [0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 7, -7, 8, -8]) {
    const offset = declared + delta;
    if (offset < 0 || offset >= bytes.length) continue;
    const head = bytes.subarray(offset, offset + 64).toString('latin1');
    if (head.startsWith('xref') && (delta === 0 || /\s/.test(String.fromCharCode(bytes[offset - 1] ?? 10)))) return { offset, isStream: false };
    if (/^\d+\s+\d+\s+obj\b/.test(head) && (delta === 0 || /\s/.test(String.fromCharCode(bytes[offset - 1] ?? 10)))) {
      const window = bytes.subarray(offset, Math.min(bytes.length, offset + 2048)).toString('latin1');
      if (/\/Type\s*\/XRef\b/.test(window)) return { offset, isStream: true };
    }
  }
  throw noRoom();
}

export const lookupDict = (context: PDFContext, value: PDFObject | undefined): PDFDict | undefined => {
  const resolved = value instanceof PDFRef ? context.lookup(value) : value;
  return resolved instanceof PDFDict ? resolved : undefined;
};

export const lookupArray = (context: PDFContext, value: PDFObject | undefined): PDFArray | undefined => {
  const resolved = value instanceof PDFRef ? context.lookup(value) : value;
  return resolved instanceof PDFArray ? resolved : undefined;
};

export function decodeTextString(value: PDFObject | undefined): string | undefined {
  if (value instanceof PDFString || value instanceof PDFHexString) return value.decodeText();
  return undefined;
}

export interface FieldNode {
  ref?: PDFRef;
  dict: PDFDict;
  fullName: string;
  fieldType?: string;
}

/** Every terminal field of the AcroForm with its full dotted name and inherited /FT. */
export function listFields(context: PDFContext, catalog: PDFDict): FieldNode[] {
  const acroForm = lookupDict(context, catalog.get(PDFName.of('AcroForm')));
  const roots = lookupArray(context, acroForm?.get(PDFName.of('Fields')));
  const out: FieldNode[] = [];
  const seen = new Set<string>();
  const visit = (value: PDFObject, parentName: string, inheritedType: string | undefined, depth: number) => {
    if (depth > 32) return;
    const ref = value instanceof PDFRef ? value : undefined;
    if (ref) {
      if (seen.has(ref.tag)) return;
      seen.add(ref.tag);
    }
    const dict = lookupDict(context, value);
    if (!dict) return;
    const partial = decodeTextString(dict.get(PDFName.of('T')));
    const fullName = partial === undefined ? parentName : parentName ? `${parentName}.${partial}` : partial;
    const ft = dict.get(PDFName.of('FT'));
    const fieldType = ft instanceof PDFName ? ft.asString().replace(/^\//, '') : inheritedType;
    const kids = lookupArray(context, dict.get(PDFName.of('Kids')));
    const fieldKids = kids?.asArray().filter((k) => lookupDict(context, k)?.has(PDFName.of('T')));
    if (fieldKids && fieldKids.length > 0) {
      for (const kid of fieldKids) visit(kid, fullName, fieldType, depth + 1);
    } else {
      out.push({ ref, dict, fullName, fieldType });
    }
  };
  for (const root of roots?.asArray() ?? []) visit(root, '', undefined, 0);
  return out;
}

function readDocMdp(context: PDFContext, catalog: PDFDict): number | undefined {
  const perms = lookupDict(context, catalog.get(PDFName.of('Perms')));
  const sig = lookupDict(context, perms?.get(PDFName.of('DocMDP')));
  if (!sig) return undefined;
  for (const ref of lookupArray(context, sig.get(PDFName.of('Reference')))?.asArray() ?? []) {
    const params = lookupDict(context, lookupDict(context, ref)?.get(PDFName.of('TransformParams')));
    const p = params?.get(PDFName.of('P'));
    if (p instanceof PDFNumber) return p.asNumber();
  }
  return 2; // DocMDP default permission
}

export async function readPdfStructure(input: Buffer): Promise<PdfStructure> {
  const magicAt = input.subarray(0, 1024).indexOf(PDF_MAGIC);
  if (magicAt < 0) throw invalidFile('The document is not a PDF (no %PDF header). Send a PDF file.');
  const xref = findStartXref(input);
  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(input, { updateMetadata: false, ignoreEncryption: true, throwOnInvalidObject: false });
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw invalidFile('The PDF is corrupt and could not be read. Re-save or re-export it and try again.');
  }
  const context = doc.context;
  if (context.trailerInfo.Encrypt) {
    throw unprocessable(ErrorCode.ENCRYPTED_DOCUMENT, 'The PDF is encrypted or password-protected; remove the protection and send it again.');
  }
  const rootRef = context.trailerInfo.Root;
  const catalog = rootRef instanceof PDFRef ? lookupDict(context, rootRef) : undefined;
  if (!(rootRef instanceof PDFRef) || !catalog) throw invalidFile('The PDF has no document catalog; it cannot be signed. Re-export it and try again.');
  let pageRefs: PDFRef[];
  let firstPageSize = { width: 595.28, height: 841.89 };
  try {
    const pages = doc.getPages();
    pageRefs = pages.map((p) => p.ref);
    if (pages.length > 0) firstPageSize = pages[0].getSize();
  } catch {
    throw invalidFile('The PDF page tree is broken; re-export the PDF and try again.');
  }
  if (pageRefs.length === 0) throw invalidFile('The PDF has no pages to sign.');
  const size = readTrailerSize(input, xref.offset);
  const info = context.trailerInfo.Info;
  const infoDict = lookupDict(context, info);
  const id = context.trailerInfo.ID;
  const fields = listFields(context, catalog);
  return {
    bytes: input,
    context,
    startXref: xref.offset,
    usesXrefStream: xref.isStream,
    rootRef,
    catalog,
    info,
    id: id instanceof PDFArray ? id : undefined,
    firstFreeObjectNumber: Math.max(size, context.largestObjectNumber + 1),
    pageRefs,
    firstPageSize,
    title: decodeTextString(infoDict?.get(PDFName.of('Title'))),
    signedFieldCount: fields.filter((f) => f.fieldType === 'Sig' && f.dict.has(PDFName.of('V'))).length,
    docMdpPermission: readDocMdp(context, catalog),
    pdfA: readPdfAIdentification(context, catalog),
  };
}

/** /Size of the newest trailer; the update must not reuse numbers below it. */
function readTrailerSize(bytes: Buffer, xrefOffset: number): number {
  const isTable = bytes.subarray(xrefOffset, xrefOffset + 4).toString('latin1') === 'xref';
  const dictAt = isTable ? bytes.indexOf('trailer', xrefOffset) : xrefOffset;
  if (dictAt < 0) return 0;
  const match = /\/Size\s+(\d+)/.exec(bytes.subarray(dictAt, dictAt + 4096).toString('latin1'));
  return match ? Number(match[1]) : 0;
}

export const isStream = (value: PDFObject | undefined): value is PDFStream => value instanceof PDFStream;
