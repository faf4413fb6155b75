import type { PdfView } from '../../pdf/document.js';
import { PdfDict, PdfRef, asArray, asNumber, asText, isName, nameOf, type PdfValue } from '../../pdf/objects.js';
import { walkPageTree } from '../../pdf/structure.js';

const MAX_FIELDS = 100_000;
const MAX_DEPTH = 64;

/** A form field as one revision shows it, found top-down from /AcroForm /Fields (never through /Parent). */
export interface FormField {
  num: number;
  /** Fully qualified name (partial names joined by "."). */
  name: string;
  /** Field type, inherited from ancestors in the tree. */
  type?: string;
  /** Widget annotations of this field: itself when it is one, and its /Kids without /T. */
  widgets: number[];
  /** The field's value (/V, possibly inherited) as written. */
  value?: PdfValue;
  /** A signature field whose value is a signature dictionary. */
  signed: boolean;
  /** True for a field only a page's /Annots shows (not in /AcroForm /Fields). */
  orphan: boolean;
}

/** The form fields of one revision, by field object and by widget object. */
export class FormIndex {
  readonly fields = new Map<number, FormField>();
  private readonly widgetToField = new Map<number, FormField>();

  private constructor(private readonly view: PdfView) {}

  static of(view: PdfView): FormIndex {
    const index = new FormIndex(view);
    index.build();
    return index;
  }

  field(num: number): FormField | undefined {
    return this.fields.get(num);
  }

  /** The field a widget annotation belongs to (a merged field/widget is its own field). */
  fieldOfWidget(num: number): FormField | undefined {
    return this.widgetToField.get(num);
  }

  /** The field an object belongs to, as a field node or as a widget. */
  fieldOf(num: number): FormField | undefined {
    return this.fields.get(num) ?? this.widgetToField.get(num);
  }

  /** A widget with a non-zero /Rect area (pyHanko's test: such a field can cover page content). */
  isVisible(field: FormField): boolean {
    return field.widgets.some((w) => rectArea(this.view.dict(new PdfRef(w, 0))?.get('Rect'), this.view) > 0);
  }

  private build(): void {
    const seen = new Set<number>();
    const visit = (value: PdfValue | undefined, parentName: string, parentType: string | undefined, parentValue: PdfValue | undefined, depth: number) => {
      if (!(value instanceof PdfRef) || depth > MAX_DEPTH || this.fields.size >= MAX_FIELDS || seen.has(value.num)) return;
      seen.add(value.num);
      const dict = this.view.dict(value);
      if (!dict) return;
      const partial = asText(this.view.resolve(dict.get('T')));
      const name = partial === undefined ? parentName : parentName ? `${parentName}.${partial}` : partial;
      const type = nameOf(dict.get('FT')) ?? parentType;
      const ownValue = dict.has('V') ? dict.get('V') : parentValue;
      const field: FormField = { num: value.num, name, type, widgets: [], value: ownValue, signed: false, orphan: false };
      this.fields.set(value.num, field);
      let childFields = 0;
      for (const kid of this.view.array(dict.get('Kids')) ?? []) {
        if (!(kid instanceof PdfRef)) continue;
        const kidDict = this.view.dict(kid);
        if (!kidDict) continue;
        if (kidDict.has('T')) {
          childFields++;
          visit(kid, name, type, ownValue, depth + 1);
        } else if (!seen.has(kid.num)) {
          // A kid without a partial name is a widget of this field (ISO 32000-1 §12.7.3.1), with or without /Parent.
          seen.add(kid.num);
          field.widgets.push(kid.num);
          this.widgetToField.set(kid.num, field);
        }
      }
      if (isName(dict.get('Subtype'), 'Widget') || (childFields === 0 && field.widgets.length === 0)) {
        field.widgets.push(value.num);
        this.widgetToField.set(value.num, field);
      }
      field.signed = type === 'Sig' && this.view.dict(ownValue) !== undefined;
    };
    const acroForm = this.view.dict(this.view.catalog?.get('AcroForm'));
    for (const field of this.view.array(acroForm?.get('Fields')) ?? []) visit(field, '', undefined, undefined, 0);
    this.addPageWidgets();
  }

  /** Widgets only a page shows: their field is read through /Parent, as readers do for page annotations. */
  private addPageWidgets(): void {
    for (const page of walkPageTree(this.view).pages) {
      for (const annot of this.view.array(page.dict.get('Annots')) ?? []) {
        if (!(annot instanceof PdfRef) || this.widgetToField.has(annot.num) || this.fields.has(annot.num)) continue;
        const dict = this.view.dict(annot);
        if (!dict || !isName(dict.get('Subtype'), 'Widget')) continue;
        const chain: PdfDict[] = [];
        for (let current: PdfDict | undefined = dict; current && chain.length < MAX_DEPTH && !chain.includes(current); current = this.view.dict(current.get('Parent'))) chain.push(current);
        const type = chain.map((d) => nameOf(d.get('FT'))).find((t) => t !== undefined);
        const names = chain.map((d) => asText(this.view.resolve(d.get('T')))).filter((t): t is string => t !== undefined).reverse();
        const value = chain.find((d) => d.has('V'))?.get('V');
        const field: FormField = { num: annot.num, name: names.join('.') || '(unnamed)', type, widgets: [annot.num], value, signed: type === 'Sig' && this.view.dict(value) !== undefined, orphan: true };
        this.fields.set(annot.num, field);
        this.widgetToField.set(annot.num, field);
        if (this.fields.size >= MAX_FIELDS) return;
      }
    }
  }
}

function rectArea(value: PdfValue | undefined, view: PdfView): number {
  const rect = asArray(view.resolve(value))?.map((v) => asNumber(view.resolve(v)));
  if (!rect || rect.length !== 4 || rect.some((v) => v === undefined)) return 0;
  const [x1, y1, x2, y2] = rect as number[];
  return Math.abs((x2! - x1!) * (y2! - y1!));
}
