import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { PDFArray, PDFDict, PDFName, PDFNumber, PDFRef, PDFString, type PDFContext, type PDFObject } from 'pdf-lib';
import { AppError, ErrorCode, unprocessable, validationError } from '../../../errors/app-error.js';
import type { FieldAppearance, RectAppearance } from '../types.js';
import { appearanceContent, type AppearanceText } from './appearance.js';
import { auditPageContents, MIN_AUDIT_PAGE } from './audit-page.js';
import type { IncrementalUpdate } from './incremental.js';
import { decodeTextString, listFields, lookupArray, lookupDict, type PdfStructure } from './structure.js';
import { RevisionFonts } from './fonts.js';
import { formatNumber, pdfDate, pdfTextString } from './text.js';

/**
 * The object-level edits of a signing revision. Existing objects are cloned, changed and
 * written again under their own number in the update; the catalog is collected here and
 * written once at the end.
 */
export class RevisionEdits {
  readonly catalog: PDFDict;
  private catalogChanged = false;
  private readonly fonts: RevisionFonts;
  private readonly context: PDFContext;

  constructor(private readonly structure: PdfStructure, private readonly update: IncrementalUpdate) {
    this.context = structure.context;
    this.catalog = structure.catalog.clone(this.context);
    this.fonts = new RevisionFonts(update);
  }

  /**
   * Sets `key` of `owner` to a dictionary/array value: when the current value is an indirect
   * object, that object is rewritten in place and `owner` stays unchanged.
   */
  private store(owner: PDFDict, key: string, current: PDFObject | undefined, value: PDFDict | PDFArray): boolean {
    if (current instanceof PDFRef) {
      this.update.set(current, value.toString());
      return false;
    }
    owner.set(PDFName.of(key), value);
    return true;
  }

  private cloneArray(value: PDFObject | undefined): PDFArray {
    const existing = lookupArray(this.context, value);
    return existing ? existing.clone(this.context) : PDFArray.withContext(this.context);
  }

  addAuditPages(contents: Parameters<typeof auditPageContents>[0]): number {
    const pagesRef = this.catalog.get(PDFName.of('Pages'));
    const pagesDict = lookupDict(this.context, pagesRef);
    if (!(pagesRef instanceof PDFRef) || !pagesDict) throw unprocessable(ErrorCode.UNPROCESSABLE_DOCUMENT, 'The PDF page tree cannot be extended; sign without the audit page (certificate.enabled=false).');
    const size = this.structure.firstPageSize;
    // The document's page size when the audit layout fits on it (labels, values, margins), else A4.
    const page = size.width >= MIN_AUDIT_PAGE.width && size.width <= 3000 && size.height >= MIN_AUDIT_PAGE.height && size.height <= 3000 ? size : { width: 595.28, height: 841.89 };
    const streams = auditPageContents(contents, page, this.fonts.show);
    const pages = pagesDict.clone(this.context);
    const kidsValue = pagesDict.get(PDFName.of('Kids'));
    const kids = this.cloneArray(kidsValue);
    const resources = `<</Font <</F1 ${this.fonts.ref('regular')} /F2 ${this.fonts.ref('bold')}>> /ProcSet [/PDF /Text]>>`;
    for (const stream of streams) {
      const contentRef = this.update.allocate();
      this.update.setStream(contentRef, ' /Filter /FlateDecode', deflateSync(Buffer.from(stream, 'latin1')));
      const pageRef = this.update.allocate();
      this.update.set(pageRef, `<</Type /Page /Parent ${pagesRef} /MediaBox [0 0 ${formatNumber(page.width)} ${formatNumber(page.height)}] /Resources ${resources} /Contents ${contentRef}>>`);
      kids.push(pageRef);
    }
    const count = pagesDict.get(PDFName.of('Count'));
    pages.set(PDFName.of('Count'), PDFNumber.of((count instanceof PDFNumber ? count.asNumber() : this.structure.pageRefs.length) + streams.length));
    this.store(pages, 'Kids', kidsValue, kids);
    this.update.set(pagesRef, pages.toString());
    return streams.length;
  }

  /** An embedded file stream and its file specification; returns the specification's reference. */
  private embedFile(fileName: string, description: string, json: Buffer, now: Date): PDFRef {
    const fileRef = this.update.allocate();
    const md5 = createHash('md5').update(json).digest('hex').toUpperCase();
    this.update.setStream(fileRef,
      ` /Type /EmbeddedFile /Subtype /application#2Fjson /Filter /FlateDecode /Params <</Size ${json.length} /ModDate ${pdfDate(now)} /CheckSum <${md5}>>>`,
      deflateSync(json));
    const specRef = this.update.allocate();
    this.update.set(specRef, `<</Type /Filespec /F ${pdfTextString(fileName)} /UF ${pdfTextString(fileName)} /Desc ${pdfTextString(description)} /AFRelationship /Data /EF <</F ${fileRef} /UF ${fileRef}>>>>`);
    return specRef;
  }

  /** A JSON file as an associated file (/AF, /AFRelationship /Data) and in the EmbeddedFiles name tree. */
  attachJson(fileName: string, description: string, json: Buffer, now: Date): void {
    const specRef = this.embedFile(fileName, description, json, now);
    const namesValue = this.catalog.get(PDFName.of('Names'));
    const names = lookupDict(this.context, namesValue)?.clone(this.context) ?? this.context.obj({});
    const treeValue = names.get(PDFName.of('EmbeddedFiles'));
    const tree = this.insertIntoNameTree(lookupDict(this.context, treeValue), fileName, specRef);
    this.store(names, 'EmbeddedFiles', treeValue, tree);
    if (this.store(this.catalog, 'Names', namesValue, names)) this.catalogChanged = true;

    const afValue = this.catalog.get(PDFName.of('AF'));
    const af = this.cloneArray(afValue);
    af.push(specRef);
    if (this.store(this.catalog, 'AF', afValue, af)) this.catalogChanged = true;
  }

  /**
   * A JSON file in a file-attachment annotation on the last page. Unlike the catalog's name tree,
   * adding an annotation is a change PAdES and DocMDP (P=3) allow after a signature, so earlier
   * signatures stay valid.
   */
  attachJsonAsAnnotation(fileName: string, description: string, json: Buffer, now: Date): void {
    const specRef = this.embedFile(fileName, description, json, now);
    const pageRef = this.structure.pageRefs[this.structure.pageRefs.length - 1];
    const pageDict = pageRef ? lookupDict(this.context, pageRef) : undefined;
    if (!pageRef || !pageDict) throw unprocessable(ErrorCode.UNPROCESSABLE_DOCUMENT, 'The PDF has no page to carry the audit-trail attachment.');
    const annotRef = this.update.allocate();
    this.update.set(annotRef, `<</Type /Annot /Subtype /FileAttachment /Rect [4 4 16 20] /FS ${specRef} /Name /Paperclip /Contents ${pdfTextString(description)} /T ${pdfTextString('docproc')} /M ${pdfDate(now)} /P ${pageRef}>>`);
    const page = pageDict.clone(this.context);
    const annotsValue = page.get(PDFName.of('Annots'));
    const annots = this.cloneArray(annotsValue);
    annots.push(annotRef);
    this.store(page, 'Annots', annotsValue, annots);
    this.update.set(pageRef, page.toString());
  }

  /** File names already used by attachments: the EmbeddedFiles name tree (flat) and file-attachment annotations. */
  attachmentNames(): Set<string> {
    const names = new Set<string>();
    const tree = lookupDict(this.context, lookupDict(this.context, this.catalog.get(PDFName.of('Names')))?.get(PDFName.of('EmbeddedFiles')));
    const entries = lookupArray(this.context, tree?.get(PDFName.of('Names')))?.asArray() ?? [];
    for (let i = 0; i < entries.length; i += 2) names.add(decodeTextString(entries[i]) ?? '');
    for (const pageRef of this.structure.pageRefs) {
      for (const annot of lookupArray(this.context, lookupDict(this.context, pageRef)?.get(PDFName.of('Annots')))?.asArray() ?? []) {
        const spec = lookupDict(this.context, lookupDict(this.context, annot)?.get(PDFName.of('FS')));
        const name = decodeTextString(spec?.get(PDFName.of('UF'))) ?? decodeTextString(spec?.get(PDFName.of('F')));
        if (name) names.add(name);
      }
    }
    return names;
  }

  private insertIntoNameTree(node: PDFDict | undefined, key: string, value: PDFRef): PDFDict {
    const keyString = PDFString.of(key);
    if (!node) return this.context.obj({ Names: [keyString, value] });
    const copy = node.clone(this.context);
    const namesValue = node.get(PDFName.of('Names'));
    const flat = lookupArray(this.context, namesValue);
    if (flat || !node.has(PDFName.of('Kids'))) {
      const entries = flat?.asArray() ?? [];
      const merged = PDFArray.withContext(this.context);
      let inserted = false;
      for (let i = 0; i + 1 < entries.length; i += 2) {
        const existing = decodeTextString(entries[i]) ?? '';
        if (existing === key) continue; // replaced by ours
        if (!inserted && existing > key) { merged.push(keyString); merged.push(value); inserted = true; }
        merged.push(entries[i]); merged.push(entries[i + 1]);
      }
      if (!inserted) { merged.push(keyString); merged.push(value); }
      this.store(copy, 'Names', namesValue, merged);
      return copy;
    }
    // A tree with intermediate nodes: add one leaf with its own /Limits.
    const leafRef = this.update.allocate();
    this.update.set(leafRef, `<</Names [${keyString} ${value}] /Limits [${keyString} ${keyString}]>>`);
    const kidsValue = node.get(PDFName.of('Kids'));
    const kids = this.cloneArray(kidsValue);
    kids.push(leafRef);
    this.store(copy, 'Kids', kidsValue, kids);
    return copy;
  }

  private appearanceStream(text: AppearanceText, width: number, height: number): PDFRef {
    const ref = this.update.allocate();
    const content = Buffer.from(appearanceContent(text, width, height, this.fonts.show), 'latin1');
    this.update.setStream(ref, ` /Type /XObject /Subtype /Form /BBox [0 0 ${formatNumber(width)} ${formatNumber(height)}] /Resources <</Font <</F1 ${this.fonts.ref('regular')}>>>>`, content);
    return ref;
  }

  private touchAcroForm(newField?: PDFRef): void {
    const formValue = this.catalog.get(PDFName.of('AcroForm'));
    const existing = lookupDict(this.context, formValue);
    const form = existing ? existing.clone(this.context) : this.context.obj({});
    if (newField) {
      const fieldsValue = form.get(PDFName.of('Fields'));
      const fields = this.cloneArray(fieldsValue);
      fields.push(newField);
      this.store(form, 'Fields', fieldsValue, fields);
    }
    form.set(PDFName.of('SigFlags'), PDFNumber.of(3));
    if (formValue instanceof PDFRef) {
      this.update.set(formValue, form.toString());
    } else if (existing) {
      this.catalog.set(PDFName.of('AcroForm'), form);
      this.catalogChanged = true;
    } else {
      const ref = this.update.allocate();
      this.update.set(ref, form.toString());
      this.catalog.set(PDFName.of('AcroForm'), ref);
      this.catalogChanged = true;
    }
  }

  /** A new signature field + widget on a page, visible when `rect` is given. */
  addSignatureField(signatureRef: PDFRef, rect: RectAppearance | undefined, text: AppearanceText): void {
    const pageIndex = rect ? rect.page - 1 : 0;
    if (rect) {
      if (!Number.isInteger(rect.page) || pageIndex < 0 || pageIndex >= this.structure.pageRefs.length) {
        throw validationError(`appearance.page must be between 1 and ${this.structure.pageRefs.length}.`, [{ field: 'appearance.page', issue: 'out of range' }]);
      }
      if (!(rect.width > 0 && rect.height > 0)) throw validationError('appearance.width and appearance.height must be positive.', [{ field: 'appearance', issue: 'empty box' }]);
    }
    const pageRef = this.structure.pageRefs[pageIndex];
    const widgetRef = this.update.allocate();
    const box = rect ? [rect.x, rect.y, rect.x + rect.width, rect.y + rect.height].map(formatNumber).join(' ') : '0 0 0 0';
    const ap = rect ? ` /AP <</N ${this.appearanceStream(text, rect.width, rect.height)}>>` : '';
    this.update.set(widgetRef, `<</Type /Annot /Subtype /Widget /FT /Sig /T ${pdfTextString(this.freshFieldName())} /V ${signatureRef} /F 132 /Rect [${box}] /P ${pageRef}${ap}>>`);

    const page = lookupDict(this.context, pageRef)!.clone(this.context);
    const annotsValue = page.get(PDFName.of('Annots'));
    const annots = this.cloneArray(annotsValue);
    annots.push(widgetRef);
    this.store(page, 'Annots', annotsValue, annots);
    this.update.set(pageRef, page.toString());
    this.touchAcroForm(widgetRef);
  }

  private freshFieldName(): string {
    const taken = new Set(listFields(this.context, this.structure.catalog).map((f) => f.fullName));
    for (let n = 1; ; n++) if (!taken.has(`Signature${n}`)) return `Signature${n}`;
  }

  /** Fills an existing, empty signature field (and gives its widget our appearance). */
  fillSignatureField(signatureRef: PDFRef, appearance: FieldAppearance, text: AppearanceText): void {
    const field = listFields(this.context, this.structure.catalog).find((f) => f.fullName === appearance.field);
    const notFound = (why: string) => new AppError(422, ErrorCode.FIELD_NOT_FOUND, why);
    if (!field) throw notFound(`The PDF has no form field named "${appearance.field}"; omit appearance.field or use an existing empty signature field.`);
    if (field.fieldType !== 'Sig') throw notFound(`The field "${appearance.field}" is not a signature field.`);
    if (field.dict.has(PDFName.of('V'))) throw notFound(`The signature field "${appearance.field}" is already signed; choose an empty one.`);
    if (!field.ref) throw notFound(`The signature field "${appearance.field}" is not an indirect object and cannot be filled.`);

    const fieldCopy = field.dict.clone(this.context);
    fieldCopy.set(PDFName.of('V'), signatureRef);
    const isWidget = field.dict.get(PDFName.of('Subtype'))?.toString() === '/Widget';
    const kid = isWidget ? undefined : lookupArray(this.context, field.dict.get(PDFName.of('Kids')))?.get(0);
    const widgetRef = isWidget ? field.ref : kid instanceof PDFRef ? kid : undefined;
    const widget = isWidget ? fieldCopy : widgetRef ? lookupDict(this.context, widgetRef)?.clone(this.context) : undefined;
    if (widget) {
      const rect = lookupArray(this.context, widget.get(PDFName.of('Rect')))?.asArray().map((n) => (n instanceof PDFNumber ? n.asNumber() : 0)) ?? [0, 0, 0, 0];
      const width = Math.abs(rect[2] - rect[0]);
      const height = Math.abs(rect[3] - rect[1]);
      if (width > 0 && height > 0) widget.set(PDFName.of('AP'), this.context.obj({ N: this.appearanceStream(text, width, height) }));
      widget.set(PDFName.of('F'), PDFNumber.of(132));
      if (widgetRef && widget !== fieldCopy) this.update.set(widgetRef, widget.toString());
    }
    this.update.set(field.ref, fieldCopy.toString());
    this.touchAcroForm();
  }

  /** Writes what is collected until now: the fonts with every glyph drawn, the catalog. */
  async finish(): Promise<void> {
    await this.fonts.write();
    if (this.catalogChanged) this.update.set(this.structure.rootRef, this.catalog.toString());
  }
}
