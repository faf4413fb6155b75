import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { DomainError, ErrorCode, validationError } from '../../../errors/domain-error.js';
import type { PdfView } from '../../pdf/document.js';
import {
  PdfDict, PdfRef, asArray, asNumber, asText, hexString, isName, pdfDict, pdfName, pdfStream, textString, withEntries, type PdfValue,
} from '../../pdf/objects.js';
import type { IncrementalWriter } from '../../pdf/writer.js';
import type { FieldAppearance, RectAppearance } from '../types.js';
import { appearanceContent, type AppearanceText } from './appearance.js';
import type { EmbeddedImage } from './appearance-image.js';
import { warning, type Warning } from '../../warnings.js';
import { auditPageContents, MIN_AUDIT_PAGE } from './audit-page.js';
import { RevisionFonts } from './fonts.js';
import type { FieldNode } from '../../pdf/structure.js';
import { isUnfilledSignature, type PdfStructure } from './structure.js';
import { pdfDate } from './text.js';

/**
 * The object-level edits of a signing revision, on the objects the one reader sees. An existing
 * object is read as this revision already changed it (or as the file has it), changed as a copy
 * and written again under its own number; the catalog is collected here and written once at the end.
 */
const round = (n: number) => Math.round(n * 1000) / 1000;
/** Audit records above this many bytes are stored with FlateDecode (below it, the zlib pass costs more than it saves). */
const COMPRESS_ATTACHMENT_ABOVE = 64 * 1024;

export class RevisionEdits {
  private catalog: PdfDict;
  private catalogChanged = false;
  private readonly fonts: RevisionFonts;
  private readonly view: PdfView;

  constructor(private readonly structure: PdfStructure, private readonly writer: IncrementalWriter) {
    this.view = structure.view;
    this.catalog = structure.catalog;
    this.fonts = new RevisionFonts(writer);
  }

  /** The value as this revision leaves it: our own change when there is one, else the file's. */
  private resolve(value: PdfValue | undefined): PdfValue | undefined {
    if (value instanceof PdfRef) {
      const ours = this.writer.get(value.num);
      return ours !== undefined ? ours : this.view.resolve(value);
    }
    return value;
  }

  private dict(value: PdfValue | undefined): PdfDict | undefined {
    const resolved = this.resolve(value);
    return resolved instanceof PdfDict ? resolved : undefined;
  }

  private array(value: PdfValue | undefined): PdfValue[] {
    return asArray(this.resolve(value)) ?? [];
  }

  /**
   * `owner` with `key` set to `value`; when the key's current value is an indirect object, that
   * object is rewritten instead and `owner` comes back unchanged.
   */
  private store(owner: PdfDict, key: string, value: PdfDict | PdfValue[]): PdfDict {
    const current = owner.get(key);
    if (current instanceof PdfRef) {
      this.writer.set(current, value);
      return owner;
    }
    return withEntries(owner, { [key]: value });
  }

  private setCatalog(catalog: PdfDict): void {
    if (catalog !== this.catalog) this.catalogChanged = true;
    this.catalog = catalog;
  }

  /** Appends `item` to the array `owner[key]` (made when missing) and writes `ownerRef` again. */
  private appendTo(ownerRef: PdfRef, key: string, item: PdfValue): void {
    const owner = this.dict(ownerRef);
    if (!owner) throw new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT, `Object ${ownerRef.num} of the PDF cannot be read; it cannot be signed.`);
    this.writer.set(ownerRef, this.store(owner, key, [...this.array(owner.get(key)), item]));
  }

  addAuditPages(contents: Parameters<typeof auditPageContents>[0]): number {
    const pagesRef = this.catalog.get('Pages');
    const pagesDict = this.dict(pagesRef);
    if (!(pagesRef instanceof PdfRef) || !pagesDict) throw new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT, 'The PDF page tree cannot be extended; sign without the audit page (certificate.enabled=false).');
    const size = this.structure.firstPageSize;
    // The document's page size when the audit layout fits on it (labels, values, margins), else A4.
    const page = size.width >= MIN_AUDIT_PAGE.width && size.width <= 3000 && size.height >= MIN_AUDIT_PAGE.height && size.height <= 3000 ? size : { width: 595.28, height: 841.89 };
    const streams = auditPageContents(contents, page, this.fonts.show);
    const resources = pdfDict({
      Font: pdfDict({ F1: this.fonts.ref('regular'), F2: this.fonts.ref('bold') }),
      ProcSet: [pdfName('PDF'), pdfName('Text')],
    });
    const newPages: PdfRef[] = [];
    for (const stream of streams) {
      const contentRef = this.writer.allocate();
      this.writer.set(contentRef, pdfStream(pdfDict({ Filter: pdfName('FlateDecode') }), deflateSync(Buffer.from(stream, 'latin1'))));
      const pageRef = this.writer.allocate();
      this.writer.set(pageRef, pdfDict({
        Type: pdfName('Page'), Parent: pagesRef, MediaBox: [0, 0, round(page.width), round(page.height)], Resources: resources, Contents: contentRef,
      }));
      newPages.push(pageRef);
    }
    const count = asNumber(this.resolve(pagesDict.get('Count'))) ?? this.structure.pageRefs.length;
    const pages = this.store(withEntries(pagesDict, { Count: count + streams.length }), 'Kids', [...this.array(pagesDict.get('Kids')), ...newPages]);
    this.writer.set(pagesRef, pages);
    return streams.length;
  }

  /** An embedded file stream and its file specification; returns the specification's reference. */
  private embedFile(fileName: string, description: string, json: Buffer, now: Date): PdfRef {
    const fileRef = this.writer.allocate();
    const md5 = createHash('md5').update(json).digest();
    // A typical record (~1-2 KB, already in the signature dictionary as a plain string) is stored as
    // is: a zlib pass cost 0.1-0.25 ms of CPU per request (its state allocation) to save ~1 KB.
    const compress = json.length > COMPRESS_ATTACHMENT_ABOVE;
    this.writer.set(fileRef, pdfStream(pdfDict({
      Type: pdfName('EmbeddedFile'), Subtype: pdfName('application/json'), Filter: compress ? pdfName('FlateDecode') : undefined,
      Params: pdfDict({ Size: json.length, ModDate: pdfDate(now), CheckSum: hexString(md5) }),
    }), compress ? deflateSync(json) : json));
    const specRef = this.writer.allocate();
    this.writer.set(specRef, pdfDict({
      Type: pdfName('Filespec'), F: textString(fileName), UF: textString(fileName), Desc: textString(description),
      AFRelationship: pdfName('Data'), EF: pdfDict({ F: fileRef, UF: fileRef }),
    }));
    return specRef;
  }

  /** A JSON file as an associated file (/AF, /AFRelationship /Data) and in the EmbeddedFiles name tree. */
  attachJson(fileName: string, description: string, json: Buffer, now: Date): void {
    const specRef = this.embedFile(fileName, description, json, now);
    const names = this.dict(this.catalog.get('Names')) ?? pdfDict({});
    const tree = this.insertIntoNameTree(this.dict(names.get('EmbeddedFiles')), fileName, specRef);
    let catalog = this.store(this.catalog, 'Names', this.store(names, 'EmbeddedFiles', tree));
    catalog = this.store(catalog, 'AF', [...this.array(catalog.get('AF')), specRef]);
    this.setCatalog(catalog);
  }

  private insertIntoNameTree(node: PdfDict | undefined, key: string, value: PdfRef): PdfDict {
    const keyString = textString(key);
    if (!node) return pdfDict({ Names: [keyString, value] });
    const namesValue = this.resolve(node.get('Names'));
    if (Array.isArray(namesValue) || !node.has('Kids')) {
      const entries = asArray(namesValue) ?? [];
      const merged: PdfValue[] = [];
      let inserted = false;
      for (let i = 0; i + 1 < entries.length; i += 2) {
        const existing = asText(this.resolve(entries[i])) ?? '';
        if (existing === key) continue; // replaced by ours
        if (!inserted && existing > key) {
          merged.push(keyString, value);
          inserted = true;
        }
        merged.push(entries[i]!, entries[i + 1]!);
      }
      if (!inserted) merged.push(keyString, value);
      return this.store(node, 'Names', merged);
    }
    // A tree with intermediate nodes: add one leaf with its own /Limits.
    const leafRef = this.writer.allocate();
    this.writer.set(leafRef, pdfDict({ Names: [keyString, value], Limits: [keyString, keyString] }));
    return this.store(node, 'Kids', [...this.array(node.get('Kids')), leafRef]);
  }

  private appearanceStream(text: AppearanceText, width: number, height: number, image?: EmbeddedImage): PdfRef {
    const ref = this.writer.allocate();
    const drawn = image && { name: 'Im1', width: image.width, height: image.height };
    const content = Buffer.from(appearanceContent(text, width, height, this.fonts.show, drawn), 'latin1');
    this.writer.set(ref, pdfStream(pdfDict({
      Type: pdfName('XObject'), Subtype: pdfName('Form'), BBox: [0, 0, round(width), round(height)],
      Resources: pdfDict({ Font: pdfDict({ F1: this.fonts.ref('regular') }), XObject: image ? pdfDict({ Im1: image.ref }) : undefined }),
    }), content));
    return ref;
  }

  private touchAcroForm(newField?: PdfRef): void {
    const formValue = this.catalog.get('AcroForm');
    const existing = this.dict(formValue);
    let form = withEntries(existing ?? pdfDict({}), { SigFlags: 3 });
    if (newField) form = this.store(form, 'Fields', [...this.array(form.get('Fields')), newField]);
    if (formValue instanceof PdfRef && existing) {
      this.writer.set(formValue, form);
    } else if (existing) {
      this.setCatalog(withEntries(this.catalog, { AcroForm: form }));
    } else {
      const ref = this.writer.allocate();
      this.writer.set(ref, form);
      this.setCatalog(withEntries(this.catalog, { AcroForm: ref }));
    }
  }

  /** A new signature field + widget on a page, visible when `rect` is given. */
  addSignatureField(rect: RectAppearance | undefined, text: AppearanceText, image?: EmbeddedImage): PdfRef {
    const signatureRef = this.writer.allocate();
    const pageIndex = rect ? rect.page - 1 : 0;
    if (rect) {
      if (!Number.isInteger(rect.page) || pageIndex < 0 || pageIndex >= this.structure.pageRefs.length) {
        throw validationError(`appearance.page must be between 1 and ${this.structure.pageRefs.length}.`, [{ field: 'appearance.page', issue: 'out of range' }]);
      }
      if (!(rect.width > 0 && rect.height > 0)) throw validationError('appearance.width and appearance.height must be positive.', [{ field: 'appearance', issue: 'empty box' }]);
    }
    const pageRef = this.structure.pageRefs[pageIndex]!;
    const widgetRef = this.writer.allocate();
    const box = rect ? [rect.x, rect.y, rect.x + rect.width, rect.y + rect.height].map(round) : [0, 0, 0, 0];
    this.writer.set(widgetRef, pdfDict({
      Type: pdfName('Annot'), Subtype: pdfName('Widget'), FT: pdfName('Sig'), T: textString(this.freshFieldName()), V: signatureRef, F: 132,
      Rect: box, P: pageRef, AP: rect ? pdfDict({ N: this.appearanceStream(text, rect.width, rect.height, image) }) : undefined,
    }));
    this.appendTo(pageRef, 'Annots', widgetRef);
    this.touchAcroForm(widgetRef);
    return signatureRef;
  }

  private freshFieldName(): string {
    const taken = new Set(this.structure.fields.map((f) => f.name));
    for (let n = 1; ; n++) if (!taken.has(`Signature${n}`)) return `Signature${n}`;
  }

  /**
   * The signature fields waiting for a signature: /V an unfilled placeholder (a /Sig dictionary
   * whose /Contents is all zero bytes, as @signpdf and other two-step signers leave it).
   */
  unfilledPlaceholders(): FieldNode[] {
    return this.structure.fields.filter((f) => f.isTerminal && f.type === 'Sig' && f.dict.has('V') && isUnfilledSignature(this.view, f.dict.get('V')));
  }

  /**
   * Fills an existing, empty signature field (and gives its widget our appearance); returns the
   * reference the signature dictionary is to be written under. A placeholder dictionary that only
   * this field names is replaced under its own number, so no half-made signature stays behind.
   */
  fillSignatureField(appearance: FieldAppearance, text: AppearanceText, image?: EmbeddedImage, warnings: Warning[] = []): PdfRef {
    const field = this.structure.fields.find((f) => f.isTerminal && f.name === appearance.field);
    const notFound = (why: string) => new DomainError(ErrorCode.FIELD_NOT_FOUND, why);
    if (!field) throw notFound(`The PDF has no form field named "${appearance.field}"; omit appearance.field or use an existing empty signature field.`);
    if (field.type !== 'Sig') throw notFound(`The field "${appearance.field}" is not a signature field.`);
    const placeholder = field.dict.get('V');
    if (field.dict.has('V') && !isUnfilledSignature(this.view, placeholder)) throw notFound(`The signature field "${appearance.field}" is already signed; choose an empty one.`);
    if (field.num === undefined) throw notFound(`The signature field "${appearance.field}" is not an indirect object and cannot be filled.`);
    const fieldRef = this.view.refTo(field.num);
    const sharedPlaceholder = placeholder instanceof PdfRef
      && this.structure.signatureFields.filter((f) => f.value instanceof PdfRef && f.value.num === placeholder.num).length > 1;
    const signatureRef = placeholder instanceof PdfRef && !sharedPlaceholder && placeholder.num !== field.num
      ? this.view.refTo(placeholder.num)
      : this.writer.allocate();

    let fieldCopy = withEntries(field.dict, { V: signatureRef });
    const isWidget = isName(field.dict.get('Subtype'), 'Widget');
    const kid = isWidget ? undefined : this.array(field.dict.get('Kids'))[0];
    const widgetRef = isWidget ? fieldRef : kid instanceof PdfRef ? kid : undefined;
    const widget = isWidget ? fieldCopy : this.dict(widgetRef);
    if (widget) {
      const rect = this.array(widget.get('Rect')).map((n) => asNumber(this.resolve(n)) ?? 0);
      const width = Math.abs((rect[2] ?? 0) - (rect[0] ?? 0));
      const height = Math.abs((rect[3] ?? 0) - (rect[1] ?? 0));
      const visible = width > 0 && height > 0 ? { AP: pdfDict({ N: this.appearanceStream(text, width, height, image) }) } : {};
      if (image && !visible.AP) warnings.push(warning('SIGNATURE_IMAGE_NOT_DRAWN', `The signature field "${appearance.field}" has no visible box: appearance.image was not drawn.`, appearance.field));
      const changed = withEntries(widget, { ...visible, F: 132 });
      if (isWidget) fieldCopy = changed;
      else if (widgetRef) this.writer.set(widgetRef, changed);
    }
    this.writer.set(fieldRef, fieldCopy);
    this.touchAcroForm();
    return signatureRef;
  }

  /**
   * Marks the document as certified by the signature at `signatureRef` (ISO 32000-1 §12.8.2.2):
   * the catalog's /Perms /DocMDP names it; other /Perms entries are kept.
   */
  certifyWith(signatureRef: PdfRef): void {
    const perms = this.dict(this.catalog.get('Perms'));
    const withDocMdp = withEntries(perms ?? pdfDict({}), { DocMDP: signatureRef });
    const current = this.catalog.get('Perms');
    if (current instanceof PdfRef && perms) this.writer.set(current, withDocMdp);
    else this.setCatalog(withEntries(this.catalog, { Perms: withDocMdp }));
  }

  /** Writes what is collected until now: the fonts with every glyph drawn, the catalog. */
  async finish(): Promise<void> {
    await this.fonts.write();
    if (this.catalogChanged) this.writer.set(this.structure.rootRef, this.catalog);
  }
}
