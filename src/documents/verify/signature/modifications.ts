import type { PdfView, XrefEntry } from '../../pdf/document.js';
import { PdfDict, PdfRef, PdfStream, asArray, asDict, isName, nameOf, pdfEqual, type PdfValue } from '../../pdf/objects.js';
import { appearanceStreamNums, inheritedFieldType, refNum, walkFields, walkPageTree } from '../../pdf/structure.js';
import type { ModificationLevel } from '../types.js';

/**
 * What changed between the signed revision and the final document, found object by object.
 * Every changed object must be explained by a rule; anything no rule explains is "other".
 *
 * Rules (see README.md in this folder):
 *  - signatures: a new signature field in /AcroForm /Fields or a new signature widget in a page's
 *    /Annots; an empty signature field receiving its /V (and its appearance); /SigFlags; /DA and
 *    /DR added to the AcroForm (or /DR only gaining entries); a new /DSS (and /Extensions) in the
 *    catalog; /Pages entries that change no page (not /Kids, /Count or inherited attributes).
 *    Document time-stamps and DSS are also "LTV" updates.
 *  - formFilling: /V, /AS, /AP, /MK of existing non-signature fields and widgets; their
 *    appearance streams; /NeedAppearances and /DR of the AcroForm.
 *  - annotations: non-widget annotations added to, removed from, or changed in a page's /Annots,
 *    and their appearance streams; an annotation-appearance name tree (/Names /AP) added.
 *  - No leniency for an object the pages' /Contents or /Resources reach (a document prepared with
 *    its content listed as an annotation, appearance, metadata or DSS object), for DSS streams
 *    rewritten in place, or for objects referenced before they existed.
 *  - metadata (/Info, catalog /Metadata): allowed, reported as a warning.
 *  - other: everything else, e.g. page content or resources, the page tree, catalog entries,
 *    a changed signature dictionary, new non-signature fields, deleted objects, redefined
 *    fonts/XObjects (shadow attacks), a different /Root.
 */
export interface ModificationReport {
  level: ModificationLevel;
  /** Only LTV material (DSS, document time-stamps) was added. */
  ltvOnly: boolean;
  findings: string[];
  warnings: string[];
}

const ORDER: ModificationLevel[] = ['none', 'signatures', 'formFilling', 'annotations', 'other'];
const MAX_CHANGED_OBJECTS = 50_000;
const MAX_FINDINGS = 20;

interface SignedContext {
  catalogNum?: number;
  acroFormNum?: number;
  fieldsArrayNum?: number;
  pageNums: Set<number>;
  pageTreeNums: Set<number>;
  annotsArrayNums: Set<number>;
  fieldNums: Set<number>;
  signatureFieldNums: Set<number>;
  signatureValueNums: Set<number>;
  fieldAppearanceNums: Set<number>;
  /** Appearance streams of signature fields already signed in this revision. */
  signedAppearanceNums: Set<number>;
  annotationNums: Set<number>;
  annotationAppearanceNums: Set<number>;
  metadataNums: Set<number>;
  dssNums: Set<number>;
  namesNum?: number;
}

/** A signature field (or its widget) that holds a signature value, directly or through its parents. */
function isSignedSignature(view: PdfView, dict: PdfDict): boolean {
  if (inheritedFieldType(view, dict) !== 'Sig') return false;
  let current: PdfDict | undefined = dict;
  for (let depth = 0; current && depth < 32; depth++) {
    if (current.has('V')) return view.dict(current.get('V')) !== undefined;
    current = view.dict(current.get('Parent'));
  }
  return false;
}

function signedContext(view: PdfView): SignedContext {
  const catalog = view.catalog;
  const acroForm = view.dict(catalog?.get('AcroForm'));
  const { pages, nodes } = walkPageTree(view);
  const ctx: SignedContext = {
    catalogNum: refNum(view.trailer.get('Root')),
    acroFormNum: refNum(catalog?.get('AcroForm')),
    fieldsArrayNum: refNum(acroForm?.get('Fields')),
    pageNums: new Set(pages.flatMap((p) => (p.num === undefined ? [] : [p.num]))),
    pageTreeNums: nodes,
    annotsArrayNums: new Set(),
    fieldNums: new Set(),
    signatureFieldNums: new Set(),
    signatureValueNums: new Set(),
    fieldAppearanceNums: new Set(),
    signedAppearanceNums: new Set(),
    annotationNums: new Set(),
    annotationAppearanceNums: new Set(),
    metadataNums: new Set([refNum(view.trailer.get('Info')), refNum(catalog?.get('Metadata'))].filter((n) => n !== undefined)),
    dssNums: new Set(),
    namesNum: refNum(catalog?.get('Names')),
  };
  for (const field of walkFields(view)) {
    if (field.num === undefined) continue;
    ctx.fieldNums.add(field.num);
    if (field.type === 'Sig') {
      ctx.signatureFieldNums.add(field.num);
      const v = refNum(field.dict.get('V'));
      if (v !== undefined) ctx.signatureValueNums.add(v);
    }
    for (const n of appearanceStreamNums(view, field.dict)) ctx.fieldAppearanceNums.add(n);
    if (isSignedSignature(view, field.dict)) for (const n of appearanceStreamNums(view, field.dict)) ctx.signedAppearanceNums.add(n);
  }
  for (const page of pages) {
    const annots = page.dict.get('Annots');
    const annotsNum = refNum(annots);
    if (annotsNum !== undefined) ctx.annotsArrayNums.add(annotsNum);
    for (const annot of view.array(annots) ?? []) {
      const num = refNum(annot);
      const dict = view.dict(annot);
      if (num === undefined || !dict) continue;
      if (isName(dict.get('Subtype'), 'Widget')) {
        ctx.fieldNums.add(num);
        for (const n of appearanceStreamNums(view, dict)) ctx.fieldAppearanceNums.add(n);
        if (isSignedSignature(view, dict)) for (const n of appearanceStreamNums(view, dict)) ctx.signedAppearanceNums.add(n);
      } else {
        ctx.annotationNums.add(num);
        for (const n of appearanceStreamNums(view, dict)) ctx.annotationAppearanceNums.add(n);
      }
    }
  }
  const dss = view.dict(catalog?.get('DSS'));
  const dssNum = refNum(catalog?.get('DSS'));
  if (dssNum !== undefined) ctx.dssNums.add(dssNum);
  for (const value of dss?.entries.values() ?? []) {
    const n = refNum(value);
    if (n !== undefined) ctx.dssNums.add(n);
  }
  // /VRI's per-signature dictionaries, when indirect.
  for (const value of view.dict(dss?.get('VRI'))?.entries.values() ?? []) {
    const n = refNum(value);
    if (n !== undefined) ctx.dssNums.add(n);
  }
  return ctx;
}

class Findings {
  level: ModificationLevel = 'none';
  ltvOnly = true;
  readonly findings: string[] = [];
  readonly warnings: string[] = [];

  add(level: ModificationLevel, message: string, ltv = false): void {
    if (ORDER.indexOf(level) > ORDER.indexOf(this.level)) this.level = level;
    if (!ltv) this.ltvOnly = false;
    if (this.findings.length < MAX_FINDINGS && !this.findings.includes(message)) this.findings.push(message);
  }

  warn(message: string): void {
    if (!this.warnings.includes(message)) this.warnings.push(message);
  }
}

const sameEntry = (a: XrefEntry | undefined, b: XrefEntry | undefined) =>
  a !== undefined &&
  b !== undefined &&
  a.kind === b.kind &&
  (a.kind === 'offset' ? a.offset === (b as { offset: number }).offset : a.kind === 'compressed' ? a.stream === (b as { stream: number }).stream && a.index === (b as { index: number }).index : true);

/**
 * The object reads from the same bytes in both views: the same entry and, for an object in an
 * object stream, the same object stream (a stream rewritten in place changes every object in it
 * while their own entries stay the same).
 */
const unchangedIn = (signed: PdfView, final: PdfView, num: number): boolean => {
  const before = signed.entries.get(num);
  if (!sameEntry(before, final.entries.get(num))) return false;
  return before?.kind !== 'compressed' || sameEntry(signed.entries.get(before.stream), final.entries.get(before.stream));
};

const changedKeys = (before: PdfDict, after: PdfDict) =>
  [...new Set([...before.entries.keys(), ...after.entries.keys()])].filter((k) => !pdfEqual(before.get(k), after.get(k)));

const isStructural = (value: PdfValue | undefined) =>
  value instanceof PdfStream && (isName(value.dict.get('Type'), 'XRef') || isName(value.dict.get('Type'), 'ObjStm'));

const isSignatureDict = (dict: PdfDict | undefined) =>
  !!dict && (isName(dict.get('Type'), 'Sig') || isName(dict.get('Type'), 'DocTimeStamp') || (dict.has('ByteRange') && dict.has('Contents')));

/** Classifies entries added to an array of fields or annotations (/Fields, /Annots). */
function classifyArrayChange(before: PdfValue[], after: PdfValue[], final: PdfView, what: 'fields' | 'annots', out: Findings): void {
  const beforeNums = new Set(before.map((v) => refNum(v) ?? -1));
  const afterNums = new Set(after.map((v) => refNum(v) ?? -1));
  const directChanged = before.some((v) => !(v instanceof PdfRef)) || after.some((v) => !(v instanceof PdfRef));
  if (directChanged && !pdfEqual(before, after)) out.add('other', `direct objects changed inside /${what === 'fields' ? 'Fields' : 'Annots'}`);
  for (const num of beforeNums) {
    if (num < 0 || afterNums.has(num)) continue;
    const dict = final.dict(new PdfRef(num, 0));
    if (what === 'annots' && dict && !isName(dict.get('Subtype'), 'Widget')) out.add('annotations', 'an annotation was removed');
    else out.add('other', what === 'fields' ? 'a form field was removed' : 'a form field widget was removed from a page');
  }
  for (const value of after) {
    const num = refNum(value);
    if (num === undefined || beforeNums.has(num)) continue;
    const dict = final.dict(value);
    if (!dict) continue;
    const isWidget = isName(dict.get('Subtype'), 'Widget') || what === 'fields';
    if (!isWidget) {
      out.add('annotations', `annotation ${nameOf(dict.get('Subtype')) ?? ''} added`.replace('  ', ' '));
      continue;
    }
    if (inheritedFieldType(final, dict) === 'Sig') {
      const sigValue = final.dict(dict.get('V'));
      const isTimestamp = isName(sigValue?.get('Type'), 'DocTimeStamp');
      out.add('signatures', isTimestamp ? 'document time-stamp added' : 'signature field added', isTimestamp);
    } else out.add('other', 'a new form field was added');
  }
}

/** Page attributes a /Pages node passes down to its pages (ISO 32000-1 Table 30), plus the tree's own structure. */
const PAGE_TREE_KEYS = new Set(['Type', 'Parent', 'Kids', 'Count', 'Resources', 'MediaBox', 'CropBox', 'Rotate']);

/** A /Pages node whose structure and inherited attributes are unchanged changes no page (DSS and pyHanko agree). */
function classifyPageTreeNode(before: PdfDict, after: PdfDict, out: Findings): void {
  const keys = changedKeys(before, after);
  if (keys.some((k) => PAGE_TREE_KEYS.has(k))) out.add('other', 'the page tree was changed (pages added, removed or reordered, or inherited page attributes)');
  else out.add('signatures', `page-tree entries that change no page were updated (${keys.map((k) => `/${k}`).join(', ')})`);
}

/**
 * The catalog's /Names: an annotation-appearance name tree (/AP) added with an annotation is an
 * annotation change; any other name tree change (embedded files, destinations, JavaScript) is not.
 */
function classifyNames(before: PdfDict | undefined, after: PdfDict | undefined, out: Findings): void {
  const keys = changedKeys(before ?? new PdfDict(new Map()), after ?? new PdfDict(new Map()));
  for (const key of keys) {
    if (key === 'AP' && !before?.has('AP')) out.add('annotations', 'an annotation-appearance name tree was added');
    else out.add('other', `document name tree /${key} changed`);
  }
}

function classifyCatalog(before: PdfDict, after: PdfDict, signed: PdfView, final: PdfView, out: Findings): void {
  for (const key of changedKeys(before, after)) {
    if (key === 'DSS' || key === 'Extensions') out.add('signatures', 'validation data (DSS) added', true);
    else if (key === 'Names' && (!before.has('Names') || refNum(before.get('Names')) === undefined)) {
      classifyNames(signed.dict(before.get('Names')), final.dict(after.get('Names')), out);
    }
    else if (key === 'Metadata') out.warn('document metadata (XMP) was replaced after signing');
    else if (key === 'AcroForm' && !before.has('AcroForm')) {
      const acroForm = final.dict(after.get('AcroForm'));
      classifyArrayChange([], final.array(acroForm?.get('Fields')) ?? [], final, 'fields', out);
    } else if (key === 'AcroForm' && asDict(before.get('AcroForm')) && asDict(after.get('AcroForm'))) {
      classifyAcroForm(asDict(before.get('AcroForm'))!, asDict(after.get('AcroForm'))!, undefined, final, out);
    } else out.add('other', `document catalog entry /${key} changed`);
  }
}

function classifyAcroForm(before: PdfDict, after: PdfDict, signed: PdfView | undefined, final: PdfView, out: Findings): void {
  for (const key of changedKeys(before, after)) {
    if (key === 'Fields') {
      const beforeFields = (signed ?? final).array(before.get('Fields')) ?? [];
      classifyArrayChange(beforeFields, final.array(after.get('Fields')) ?? [], final, 'fields', out);
    } else if (key === 'SigFlags') out.add('signatures', 'signature flags updated');
    else if ((key === 'DA' || key === 'DR') && (!before.has(key) || onlyAdds(signed ?? final, before.get(key), final, after.get(key)))) {
      // Signing tools add default appearance and resources with a new signature field.
      out.add('signatures', `form /${key} added`);
    } else if (key === 'NeedAppearances' || key === 'DR') out.add('formFilling', `form /${key} updated`);
    else out.add('other', `form dictionary entry /${key} changed`);
  }
}

/** True when the dictionary `after` keeps every entry of `before` unchanged and only adds entries (one level deep). */
function onlyAdds(signed: PdfView, before: PdfValue | undefined, final: PdfView, after: PdfValue | undefined): boolean {
  const b = signed.dict(before);
  const a = final.dict(after);
  if (!b || !a) return false;
  for (const [key, value] of b.entries) {
    const bv = signed.resolve(value);
    const av = final.resolve(a.get(key));
    if (pdfEqual(bv, av)) continue;
    const bd = asDict(bv);
    const ad = asDict(av);
    if (!bd || !ad || [...bd.entries].some(([k, v]) => !pdfEqual(v, ad.get(k)))) return false;
  }
  return true;
}

function classifyField(before: PdfDict, after: PdfDict, signed: PdfView, final: PdfView, out: Findings): void {
  const isSignature = inheritedFieldType(signed, before) === 'Sig' || inheritedFieldType(final, after) === 'Sig';
  const isWidget = isName(before.get('Subtype'), 'Widget');
  for (const key of changedKeys(before, after)) {
    if (isSignature) {
      if (key === 'V' && !before.has('V')) {
        const isTimestamp = isName(final.dict(after.get('V'))?.get('Type'), 'DocTimeStamp');
        out.add('signatures', isTimestamp ? 'document time-stamp added' : 'an empty signature field was signed', isTimestamp);
      } else if ((key === 'AP' || key === 'AS' || key === 'MK') && isSignedSignature(signed, before)) {
        out.add('other', 'the appearance of a signature already made was changed');
      } else if (key === 'AP' || key === 'AS' || key === 'MK') out.add('signatures', 'signature appearance updated');
      else if (key === 'V') out.add('other', 'the value of an existing signature field was replaced');
      else out.add('other', `signature field entry /${key} changed`);
    } else if (['V', 'AS', 'AP', 'MK', 'M'].includes(key)) out.add('formFilling', `form field ${key === 'V' ? 'value' : 'appearance'} changed`);
    else if (key === 'Kids' && !isWidget) out.add('other', 'form field children changed');
    else out.add('other', `form field entry /${key} changed`);
  }
}

function classifyPage(before: PdfDict, after: PdfDict, signed: PdfView, final: PdfView, out: Findings): void {
  for (const key of changedKeys(before, after)) {
    if (key === 'Annots') classifyArrayChange(signed.array(before.get('Annots')) ?? [], final.array(after.get('Annots')) ?? [], final, 'annots', out);
    else out.add('other', `page entry /${key} changed (page content, resources or geometry)`);
  }
}

function classifyObject(num: number, before: PdfValue | undefined, after: PdfValue | undefined, ctx: SignedContext, signed: PdfView, final: PdfView, out: Findings): void {
  if (after === undefined) {
    out.add('other', `object ${num} was deleted`);
    return;
  }
  const beforeDict = asDict(before);
  const afterDict = asDict(after);
  if (ctx.signatureValueNums.has(num) || isSignatureDict(beforeDict)) {
    out.add('other', 'a signature dictionary was changed after signing');
  } else if (num === ctx.catalogNum && beforeDict && afterDict) classifyCatalog(beforeDict, afterDict, signed, final, out);
  else if (num === ctx.acroFormNum && beforeDict && afterDict) classifyAcroForm(beforeDict, afterDict, signed, final, out);
  else if (num === ctx.fieldsArrayNum) classifyArrayChange(asArray(before) ?? [], asArray(after) ?? [], final, 'fields', out);
  else if (ctx.annotsArrayNums.has(num)) classifyArrayChange(asArray(before) ?? [], asArray(after) ?? [], final, 'annots', out);
  else if (ctx.fieldNums.has(num) && beforeDict && afterDict) classifyField(beforeDict, afterDict, signed, final, out);
  else if (ctx.pageNums.has(num) && beforeDict && afterDict) classifyPage(beforeDict, afterDict, signed, final, out);
  else if (isLenient(num, ctx) && pageContentNums(signed).has(num)) {
    out.add('other', `object ${num} is part of what a page shows (its content or resources), whatever else also uses it`);
  } else if (ctx.annotationNums.has(num)) out.add('annotations', 'an annotation was changed');
  else if (ctx.signedAppearanceNums.has(num)) out.add('other', 'the appearance stream of a signature already made was changed');
  else if (ctx.fieldAppearanceNums.has(num)) out.add('formFilling', 'a form field appearance stream was changed');
  else if (ctx.annotationAppearanceNums.has(num)) out.add('annotations', 'an annotation appearance stream was changed');
  else if (ctx.metadataNums.has(num)) out.warn('document information (metadata) was updated after signing');
  else if (ctx.dssNums.has(num) && isDssOnly(num, before, after, ctx, signed)) out.add('signatures', 'validation data (DSS) updated', true);
  else if (ctx.pageTreeNums.has(num) && beforeDict && afterDict) classifyPageTreeNode(beforeDict, afterDict, out);
  else if (ctx.pageTreeNums.has(num)) out.add('other', 'the page tree was changed (pages added, removed or reordered)');
  else if (num === ctx.namesNum && beforeDict && afterDict) classifyNames(beforeDict, afterDict, out);
  else if (before instanceof PdfStream) out.add('other', `stream object ${num} (content, font, image or form XObject) was redefined`);
  else out.add('other', `object ${num} was changed`);
}

const MAX_REFERENCE_SCAN_OBJECTS = 500_000;
const referrersByView = new WeakMap<PdfView, Map<number, number[]>>();

/** For each object number, the objects of `view` whose value references it (built once per view, bounded). */
function referrers(view: PdfView): Map<number, number[]> {
  const cached = referrersByView.get(view);
  if (cached) return cached;
  const out = new Map<number, number[]>();
  let scanned = 0;
  for (const [num, entry] of view.entries) {
    if (entry.kind === 'free') continue;
    if (++scanned > MAX_REFERENCE_SCAN_OBJECTS) break;
    const stack: Array<PdfValue | undefined> = [view.getObject(num)];
    // Each value is pushed once, by its container, so the walk ends after visiting the object's tree.
    while (stack.length > 0) {
      const value = stack.pop();
      if (value instanceof PdfRef) {
        const list = out.get(value.num);
        if (!list) out.set(value.num, [num]);
        else if (list.at(-1) !== num) list.push(num);
      } else if (Array.isArray(value)) for (const item of value) stack.push(item);
      else if (value instanceof PdfStream) stack.push(value.dict);
      else if (value instanceof PdfDict) for (const item of value.entries.values()) stack.push(item);
    }
  }
  referrersByView.set(view, out);
  return out;
}

const REFERENCE = /(?<![0-9])(\d{1,8})[ \t\r\n\f\0]+\d{1,5}[ \t\r\n\f\0]+R(?![^ \t\r\n\f\0/[\]<>(){}%])/g;
const firstMentions = new WeakMap<Uint8Array, Map<number, number>>();

/** Object numbers written as "n g R" anywhere in `bytes`, with the offset of the first mention. */
function referenceMentions(bytes: Uint8Array): Map<number, number> {
  const cached = firstMentions.get(bytes);
  if (cached) return cached;
  const found = new Map<number, number>();
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
  for (const m of text.matchAll(REFERENCE)) {
    const num = Number(m[1]);
    if (!found.has(num)) found.set(num, m.index);
  }
  firstMentions.set(bytes, found);
  return found;
}

/**
 * A cheap, over-inclusive filter: the numbers that the signed revision's bytes (and its object
 * streams) mention as references. A number not mentioned there cannot have been referenced.
 */
function mentionedWhenSigned(nums: number[], signed: PdfView): number[] {
  const inFile = referenceMentions(signed.data);
  const streams = new Set<number>();
  for (const entry of signed.entries.values()) if (entry.kind === 'compressed') streams.add(entry.stream);
  const inStreams = new Set<number>();
  for (const stream of streams) {
    const data = signed.objectStreamData(stream);
    if (data) for (const num of referenceMentions(data).keys()) inStreams.add(num);
  }
  return nums.filter((num) => (inFile.get(num) ?? Infinity) < signed.limit || inStreams.has(num));
}

/**
 * Objects that did not exist (or were free or unreadable) in the signed revision but that an
 * unchanged object already referenced: defining them later changes what the signed objects show
 * without touching them (a shadow attack through a dangling reference).
 */
function classifyFilledReferences(created: number[], signed: PdfView, final: PdfView, out: Findings): void {
  const candidates = created.length === 0 ? [] : mentionedWhenSigned(created, signed);
  if (candidates.length === 0) return;
  const refs = referrers(final);
  for (const num of candidates) {
    const unchangedReferrer = (refs.get(num) ?? []).find((by) => by !== num && unchangedIn(signed, final, by));
    if (unchangedReferrer !== undefined) {
      out.add('other', `object ${num}, referenced by signed object ${unchangedReferrer} but absent when it was signed, was defined after signing`);
    }
  }
}

/** Categories whose objects may change after signing without their keys being examined one by one. */
const isLenient = (num: number, ctx: SignedContext) =>
  ctx.annotationNums.has(num) || ctx.fieldAppearanceNums.has(num) || ctx.annotationAppearanceNums.has(num) || ctx.metadataNums.has(num) || ctx.dssNums.has(num);

const MAX_PAGE_CONTENT_OBJECTS = 200_000;
const pageContentByView = new WeakMap<PdfView, Set<number>>();

/**
 * Objects reachable from the pages' /Contents and /Resources (inherited ones included): what the
 * pages show. An annotation, appearance stream, metadata or DSS object that is also one of these
 * (a document prepared so) gets no leniency: changing it changes the page.
 */
function pageContentNums(view: PdfView): Set<number> {
  const cached = pageContentByView.get(view);
  if (cached) return cached;
  const found = new Set<number>();
  const { pages, nodes } = walkPageTree(view);
  const stack: Array<PdfValue | undefined> = [];
  for (const page of pages) stack.push(page.dict.get('Contents'), page.dict.get('Resources'));
  for (const node of nodes) stack.push(view.dict(new PdfRef(node, 0))?.get('Resources'));
  // Each reference is followed once, and direct values are finite trees: the walk ends.
  while (stack.length > 0 && found.size < MAX_PAGE_CONTENT_OBJECTS) {
    const value = stack.pop();
    if (value instanceof PdfRef) {
      if (found.has(value.num)) continue;
      found.add(value.num);
      stack.push(view.getObject(value.num));
    } else if (Array.isArray(value)) for (const item of value) stack.push(item);
    else if (value instanceof PdfStream) stack.push(value.dict);
    else if (value instanceof PdfDict) for (const [key, item] of value.entries) if (key !== 'Parent' && key !== 'P') stack.push(item);
  }
  pageContentByView.set(view, found);
  return found;
}

/**
 * A changed DSS object is validation data only when it is a dictionary or array (certificates,
 * CRLs and OCSP responses are added as new streams, never rewritten) and nothing but the DSS and the
 * catalog referenced it when signed: a document prepared with its page content listed in the DSS
 * must not get content changes through as "validation data".
 */
function isDssOnly(num: number, before: PdfValue | undefined, after: PdfValue | undefined, ctx: SignedContext, signed: PdfView): boolean {
  if (before instanceof PdfStream || after instanceof PdfStream) return false;
  return (referrers(signed).get(num) ?? []).every((by) => by === ctx.catalogNum || ctx.dssNums.has(by));
}

/** Compares the signed revision with the final document and classifies every change. */
export function classifyModifications(signed: PdfView, final: PdfView): ModificationReport {
  const out = new Findings();
  if (refNum(signed.trailer.get('Root')) !== refNum(final.trailer.get('Root'))) out.add('other', 'the document catalog was replaced');
  if (final.encryption && !signed.encryption) out.add('other', 'encryption was added after signing');
  const ctx = signedContext(signed);
  let examined = 0;
  const created: number[] = [];
  const nums = new Set([...signed.entries.keys(), ...final.entries.keys()]);
  for (const num of nums) {
    const beforeEntry = signed.entries.get(num);
    const afterEntry = final.entries.get(num);
    if (unchangedIn(signed, final, num)) continue;
    if (++examined > MAX_CHANGED_OBJECTS) {
      out.add('other', 'too many objects changed after signing to analyse');
      break;
    }
    const before = beforeEntry && beforeEntry.kind !== 'free' ? signed.getObject(num) : undefined;
    const after = afterEntry && afterEntry.kind !== 'free' ? final.getObject(num) : undefined;
    if (before === undefined) {
      // New objects matter through the changed objects that reference them, or through signed
      // objects that referenced the number before it existed.
      if (after !== undefined) created.push(num);
      continue;
    }
    if (isStructural(before) || isStructural(after) || pdfEqual(before, after)) continue;
    classifyObject(num, before, after, ctx, signed, final, out);
  }
  classifyFilledReferences(created, signed, final, out);
  return { level: out.level, ltvOnly: out.level === 'none' || out.ltvOnly, findings: out.findings, warnings: out.warnings };
}
