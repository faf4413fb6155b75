import type { PdfView } from '../../pdf/document.js';
import { PdfDict, PdfRef, PdfStream, asArray, isName, nameOf, pdfEqual, type PdfValue } from '../../pdf/objects.js';
import type { ModificationLevel } from '../types.js';
import type { FormField, FormIndex } from './form-index.js';
import { FIELD_KEYS, describeRole, isWidget, refineRoles, type Role, type RoleKind } from './object-roles.js';
import type { UseIndex } from './use-tracker.js';

/**
 * The whitelist of the modification analysis: one small named rule per role an object can hold.
 * A rule looks at one object (or one direct value) as it was signed and as it is now, in one role,
 * and either explains the change at a level or refuses it. Anything no rule explains is refused.
 */

export const LEVEL_ORDER: ModificationLevel[] = ['none', 'archival', 'signatures', 'formFilling', 'annotations', 'other'];
export const levelRank = (level: ModificationLevel): number => LEVEL_ORDER.indexOf(level);
const maxLevel = (a: ModificationLevel, b: ModificationLevel) => (levelRank(a) >= levelRank(b) ? a : b);

/** A signature's FieldMDP lock (ISO 32000-1 §12.8.2.4, Table 255): which fields it froze. */
export interface FieldLock {
  action: 'All' | 'Include' | 'Exclude';
  fields: string[];
}

export function isLocked(lock: FieldLock | undefined, name: string): boolean {
  if (!lock) return false;
  if (lock.action === 'All') return true;
  const listed = lock.fields.some((f) => name === f || name.startsWith(`${f}.`));
  return lock.action === 'Include' ? listed : !listed;
}

/** What the signature under analysis allows later revisions to do. */
export interface ChangePolicy {
  /** DocMDP permission of the document's certification signature. */
  certification?: 1 | 2 | 3;
  /** This signature's FieldMDP lock. */
  lock?: FieldLock;
}

/** The named rules, as they appear in the report. */
export const RULE = {
  catalog: 'catalog update',
  info: 'document information update',
  metadata: 'metadata update',
  archival: 'archival data update',
  form: 'form dictionary update',
  signatureFieldAdded: 'signature field added',
  signatureFieldSigned: 'signature field signed',
  documentTimestamp: 'document time-stamp',
  formFilling: 'form filling',
  annotation: 'annotation change',
  pageAnnotations: 'page annotation list',
  dss: 'DSS/VRI update',
  structure: 'structure tree tagging',
  trailer: 'trailer update',
  unused: 'unused objects',
  noRule: 'no rule',
  sneakySignature: 'no new visible signature field after certification',
  fieldMdp: 'FieldMDP lock',
} as const;

export interface Finding {
  level: ModificationLevel;
  rule: string;
  message: string;
}

/** One change to judge: an object (or direct value) in one role, before and after. */
export interface Change {
  num?: number;
  role: Role;
  before?: PdfValue;
  after?: PdfValue;
  /** "object 12", "catalog /AcroForm": where the change is, for the report. */
  where: string;
}

const MAX_CLAIM_OBJECTS = 200_000;
/** Roles through which the signed revision shows nothing of an object. */
const SHOWS_NOTHING = new Set<RoleKind>(['link', 'archival']);

/** Applies the rules to the changes between the signed revision and one later revision. */
export class ChangeJudge {
  readonly explained: Finding[] = [];
  readonly refused: Finding[] = [];
  readonly warnings: string[] = [];
  level: ModificationLevel = 'none';
  /** Objects added or first used after signing that a rule looked at. */
  readonly claimed = new Set<number>();
  /** Objects whose change a rule refused: what they newly reference needs no further explanation. */
  readonly refusedObjects = new Set<number>();
  private judging?: number;
  private readonly newFieldsJudged = new Set<number>();

  constructor(
    readonly signed: PdfView,
    readonly current: PdfView,
    readonly signedUses: UseIndex,
    readonly signedForm: FormIndex,
    readonly currentForm: FormIndex,
    readonly policy: ChangePolicy,
  ) {}

  /**
   * Not shown by the signed revision: new, unreachable when signed, or reached only by links and
   * archival references (an Adobe trailer /AdditionalStreams entry naming an object defined later).
   */
  isFresh(num: number): boolean {
    return this.signedUses.usesOf(num).every((use) => SHOWS_NOTHING.has(use.role.kind));
  }

  allow(level: ModificationLevel, rule: string, message: string): void {
    this.level = maxLevel(this.level, level);
    this.explained.push({ level, rule, message });
  }

  refuse(rule: string, message: string): void {
    if (this.judging !== undefined) this.refusedObjects.add(this.judging);
    this.level = 'other';
    this.refused.push({ level: 'other', rule, message });
  }

  warn(message: string): void {
    if (!this.warnings.includes(message)) this.warnings.push(message);
  }

  judge(change: Change): void {
    const outer = this.judging;
    this.judging = change.num ?? outer;
    try {
      RULES[change.role.kind](this, change);
    } finally {
      this.judging = outer;
    }
  }

  /**
   * Judges the value under a key in `role`, direct or indirect: the same reference on both sides is
   * left to that object's own judgement; a reference to an object the signed revision did not use is
   * judged here (it is part of this change); a reference to an object it did use is a reuse no rule allows.
   */
  descend(kind: RoleKind, before: PdfValue | undefined, after: PdfValue | undefined, where: string, owner?: number): void {
    const role: Role = owner === undefined ? { kind } : { kind, owner };
    if (after instanceof PdfRef) {
      if (before instanceof PdfRef && before.num === after.num) return;
      if (!this.isFresh(after.num)) {
        this.refuse(RULE.noRule, `${where} now references object ${after.num}, which the signed revision already used elsewhere`);
        return;
      }
      this.claimed.add(after.num);
      const value = this.current.getObject(after.num);
      for (const r of refineRoles(role, value, after.num)) this.judge({ num: after.num, role: r, before: this.signed.resolve(before), after: value, where: `${where} (object ${after.num})` });
      return;
    }
    for (const r of refineRoles(role, after)) this.judge({ role: r, before: this.signed.resolve(before), after, where });
  }

  /**
   * The keys whose values differ in content: a reference replaced by one to an object first used
   * now whose content is the same (a resources dictionary or catalog rewritten under a new number)
   * changes nothing shown, and that object is accounted for here.
   */
  changedKeys(before: PdfDict | undefined, after: PdfDict | undefined): string[] {
    return changedKeys(before, after).filter((key) => !this.sameContent(before?.get(key), after?.get(key)));
  }

  private sameContent(before: PdfValue | undefined, after: PdfValue | undefined): boolean {
    if (before === undefined || after === undefined) return false;
    if (after instanceof PdfRef && !(before instanceof PdfRef && before.num === after.num) && !this.isFresh(after.num)) return false;
    const same = pdfEqual(this.signed.resolve(before), this.current.resolve(after));
    if (same && after instanceof PdfRef) this.claimed.add(after.num);
    return same;
  }

  /** Every object first used after signing that `value` reaches (through such objects only) is part of the change a rule just explained. */
  claimAll(value: PdfValue | undefined): void {
    const stack: Array<PdfValue | undefined> = [value];
    const seen = new Set<number>();
    while (stack.length > 0 && seen.size < MAX_CLAIM_OBJECTS) {
      const item = stack.pop();
      if (item instanceof PdfRef) {
        if (!this.isFresh(item.num) || seen.has(item.num)) continue;
        seen.add(item.num);
        this.claimed.add(item.num);
        stack.push(this.current.getObject(item.num));
      } else if (Array.isArray(item)) stack.push(...item);
      else if (item instanceof PdfStream) stack.push(...item.dict.entries.values());
      else if (item instanceof PdfDict) stack.push(...item.entries.values());
    }
  }

  /** The form field an object belongs to (as field or widget), preferring the signed revision. */
  fieldOf(num: number | undefined): FormField | undefined {
    if (num === undefined) return undefined;
    return this.signedForm.fieldOf(num) ?? this.currentForm.fieldOf(num);
  }

  /**
   * The level at which the value or appearance of `field` may change now, or a refusal: filling a
   * field is form filling (unless its signature locked it); signing an empty signature field is a
   * signature (a document time-stamp in an invisible field only archival); a signature already
   * made, or an empty signature field staying empty, keeps its appearance.
   */
  fieldUpdateLevel(field: FormField | undefined, subject: string, where: string, appearance = false): ModificationLevel | undefined {
    if (!field) {
      this.refuse(RULE.noRule, `${where}: ${subject} of a widget that belongs to no form field changed`);
      return undefined;
    }
    if (field.type === 'Sig') {
      const before = this.signedForm.field(field.num)?.signed ?? false;
      const now = this.currentForm.field(field.num)?.signed ?? false;
      if (before) {
        this.refuse(RULE.noRule, `${where}: ${subject} of a signature already made changed (field "${field.name}")`);
        return undefined;
      }
      if (!now) {
        this.refuse(RULE.noRule, `${where}: ${subject} of the empty signature field "${field.name}" changed while it stays unsigned`);
        return undefined;
      }
      return this.signingLevel(field);
    }
    if (isLocked(this.policy.lock, field.name)) {
      this.refuse(RULE.fieldMdp, `${where}: ${subject} of field "${field.name}" changed, but this signature's FieldMDP (/${this.policy.lock!.action}) locks it`);
      return undefined;
    }
    if (appearance && !this.valueChanged(field)) {
      // EU DSS: an appearance replaced under an unchanged value shows what nobody filled in.
      this.refuse(RULE.noRule, `${where}: ${subject} of field "${field.name}" changed while its value did not: what it shows no longer follows its value`);
      return undefined;
    }
    return 'formFilling';
  }

  /** The field's value differs from what was signed. */
  valueChanged(field: FormField): boolean {
    const before = this.signedForm.field(field.num)?.value;
    const after = this.currentForm.field(field.num)?.value;
    return !pdfEqual(this.signed.resolve(before), this.current.resolve(after));
  }

  /** Signing `field` now (it has a signature value in the current revision): refused when locked. */
  signingLevel(field: FormField): ModificationLevel | undefined {
    const timestamp = this.isDocumentTimestamp(field);
    const visible = this.currentForm.isVisible(field);
    if (!timestamp && isLocked(this.policy.lock, field.name)) {
      this.refuse(RULE.fieldMdp, `signature field "${field.name}" is locked by this signature's FieldMDP (/${this.policy.lock!.action}) and was signed afterwards`);
      return undefined;
    }
    return timestamp && !visible ? 'archival' : 'signatures';
  }

  isDocumentTimestamp(field: FormField): boolean {
    const dict = this.current.dict(this.current.dict(new PdfRef(field.num, 0))?.get('V'));
    return isName(dict?.get('Type'), 'DocTimeStamp') || isName(dict?.get('SubFilter'), 'ETSI.RFC3161');
  }

  /** A field object added to the form after signing: only signature fields may be. */
  judgeNewField(num: number, where: string): void {
    if (this.newFieldsJudged.has(num)) return;
    this.newFieldsJudged.add(num);
    const field = this.currentForm.field(num);
    if (!field) {
      this.refuse(RULE.noRule, `${where}: object ${num} was added to the form but is not a form field`);
      return;
    }
    const dict = this.current.dict(new PdfRef(num, 0));
    for (const kid of asArray(this.current.resolve(dict?.get('Kids'))) ?? []) {
      if (kid instanceof PdfRef && this.current.dict(kid)?.has('T')) this.judgeNewField(kid.num, `${where} /Kids`);
    }
    if (field.type !== 'Sig') {
      this.refuse(RULE.noRule, `form field "${field.name}" (${field.type ?? 'no type'}) was added after signing; only signature fields may be added`);
      return;
    }
    const visible = this.currentForm.isVisible(field);
    if (visible && (this.policy.certification === 1 || this.policy.certification === 2)) {
      this.refuse(RULE.sneakySignature, `a new visible signature field "${field.name}" was added after a certification signature (DocMDP P${this.policy.certification}): its appearance could cover the certified content (Sneaky Signature Attack)`);
      return;
    }
    if (isLocked(this.policy.lock, field.name) && visible) {
      this.refuse(RULE.fieldMdp, `a new visible signature field "${field.name}" falls under this signature's FieldMDP lock (/${this.policy.lock!.action})`);
      return;
    }
    let level: ModificationLevel | undefined = visible ? 'signatures' : 'archival';
    let rule: string = RULE.signatureFieldAdded;
    if (field.signed) {
      level = this.signingLevel(field);
      rule = this.isDocumentTimestamp(field) ? RULE.documentTimestamp : RULE.signatureFieldSigned;
    }
    if (!level) return;
    this.allow(level, rule, `signature field "${field.name}" added${field.signed ? ' and signed' : ''}${visible ? ' (visible)' : ''}`);
    this.claimAll(new PdfRef(num, 0));
  }
}

type Rule = (judge: ChangeJudge, change: Change) => void;

const dictOf = (value: PdfValue | undefined): PdfDict | undefined => (value instanceof PdfDict ? value : undefined);
const EMPTY = new PdfDict(new Map());

/** Keys whose raw values differ (references compared by number, not followed). */
export function changedKeys(before: PdfDict | undefined, after: PdfDict | undefined): string[] {
  const b = before ?? EMPTY;
  const a = after ?? EMPTY;
  return [...new Set([...b.entries.keys(), ...a.entries.keys()])].filter((k) => !pdfEqual(b.get(k), a.get(k)));
}

const refuseChange: Rule = (judge, c) =>
  judge.refuse(RULE.noRule, `${c.where}: ${describeRole(c.role)} changed after signing; no rule allows that`);

/** A dictionary in a structural role: it must stay a plain dictionary (not become a stream or vanish). */
function requireDict(judge: ChangeJudge, c: Change): PdfDict | undefined {
  const after = dictOf(c.after);
  if (!after) judge.refuse(RULE.noRule, `${c.where}: ${describeRole(c.role)} ${c.after === undefined ? 'was removed' : 'is no longer a dictionary'}`);
  return after;
}

const catalogRule: Rule = (judge, c) => {
  const after = requireDict(judge, c);
  if (!after) return;
  const before = dictOf(c.before);
  for (const key of judge.changedKeys(before, after)) {
    const where = `catalog /${key}`;
    if (key === 'AcroForm') judge.descend('acroForm', before?.get(key), after.get(key), where);
    else if (key === 'DSS') judge.descend('dss', before?.get(key), after.get(key), where);
    else if (key === 'Metadata') judge.descend('metadata', before?.get(key), after.get(key), where);
    else if (key === 'Names') judge.descend('names', before?.get(key), after.get(key), where);
    else if (key === 'Extensions' || key === 'MarkInfo' || key === 'Version') judge.descend('archival', before?.get(key), after.get(key), where);
    else judge.refuse(RULE.noRule, `document catalog entry /${key} changed after signing`);
  }
};

/** /Info, XMP metadata, catalog /Extensions etc.: no display reader shows them as page content. */
const archivalRule =
  (rule: string, what: string, mustBeStream = false): Rule =>
  (judge, c) => {
    if (mustBeStream && c.after !== undefined && !(c.after instanceof PdfStream)) {
      judge.refuse(RULE.noRule, `${c.where}: ${what} is not a stream`);
      return;
    }
    judge.allow('archival', rule, `${c.where}: ${what} updated`);
    if (rule !== RULE.archival) judge.warn(`${what} was updated after signing`);
    judge.claimAll(c.after);
  };

const pageRule: Rule = (judge, c) => {
  const after = requireDict(judge, c);
  if (!after) return;
  const before = dictOf(c.before);
  for (const key of judge.changedKeys(before, after)) {
    if (key === 'Annots') judge.descend('annotList', before?.get(key), after.get(key), `${c.where} /Annots`);
    else judge.refuse(RULE.noRule, `${c.where}: page entry /${key} changed after signing`);
  }
};

const refsOf = (items: PdfValue[]) => new Set(items.flatMap((v) => (v instanceof PdfRef ? [v.num] : [])));
const directItemsChanged = (before: PdfValue[], after: PdfValue[]) => {
  const b = before.filter((v) => !(v instanceof PdfRef));
  const a = after.filter((v) => !(v instanceof PdfRef));
  return a.length !== b.length || a.some((item, i) => !pdfEqual(item, b[i]));
};

const annotListRule: Rule = (judge, c) => {
  const before = asArray(c.before) ?? [];
  const after = asArray(c.after);
  if (!after && c.after !== undefined) return judge.refuse(RULE.noRule, `${c.where}: the annotation list is no longer an array`);
  const afterItems = after ?? [];
  if (directItemsChanged(before, afterItems)) judge.refuse(RULE.noRule, `${c.where}: direct annotation dictionaries changed`);
  const beforeRefs = refsOf(before);
  const afterRefs = refsOf(afterItems);
  for (const num of beforeRefs) {
    if (afterRefs.has(num)) continue;
    if (isWidget(judge.signed.getObject(num))) judge.refuse(RULE.noRule, `${c.where}: the widget of form field object ${num} was removed from the page`);
    else judge.allow('annotations', RULE.annotation, `annotation object ${num} removed from a page`);
  }
  for (const num of afterRefs) {
    if (beforeRefs.has(num)) continue;
    const value = judge.current.getObject(num);
    if (judge.isFresh(num)) {
      judge.claimed.add(num);
      judge.judge({ num, role: { kind: 'annotation', owner: num }, after: value, where: `annotation object ${num}` });
      continue;
    }
    // An existing widget put on a page: only when its signature field is signed now.
    const field = isWidget(value) ? judge.signedForm.fieldOfWidget(num) : undefined;
    const level = field?.type === 'Sig' ? judge.fieldUpdateLevel(field, 'the widget', `${c.where}: widget object ${num} added`) : undefined;
    if (level) judge.allow(level, RULE.pageAnnotations, `the widget of signature field "${field!.name}" was put on a page as it was signed`);
    else if (!field || field.type !== 'Sig') judge.refuse(RULE.noRule, `${c.where}: object ${num}, already used when signed, was added to a page as an annotation`);
  }
};

const annotationRule: Rule = (judge, c) => {
  const num = c.num;
  if (c.before === undefined) {
    if (!isWidget(c.after)) {
      const subtype = nameOf(dictOf(c.after)?.get('Subtype')) ?? 'without subtype';
      judge.allow('annotations', RULE.annotation, `annotation /${subtype} added (${c.where})`);
      judge.claimAll(c.after);
      return;
    }
    const field = num === undefined ? undefined : judge.currentForm.fieldOfWidget(num);
    if (!field || field.type !== 'Sig') {
      judge.refuse(RULE.noRule, `${c.where}: a widget annotation of a field that is not a signature field was added`);
      return;
    }
    if (!judge.signedForm.field(field.num)) judge.judgeNewField(field.num, c.where);
    else {
      const level = judge.fieldUpdateLevel(field, 'the widget', `${c.where}: widget added`);
      if (level) judge.allow(level, RULE.signatureFieldSigned, `a widget of signature field "${field.name}" was added as it was signed`);
    }
    judge.claimAll(c.after);
    return;
  }
  const after = requireDict(judge, c);
  if (!after) return;
  const before = dictOf(c.before);
  if (isWidget(before) !== isWidget(after)) return judge.refuse(RULE.noRule, `${c.where}: an annotation became${isWidget(after) ? '' : ' no longer'} a form widget`);
  if (!isWidget(after)) {
    judge.allow('annotations', RULE.annotation, `annotation object ${num} changed`);
    judge.claimAll(after);
    return;
  }
  const keys = judge.changedKeys(before, after).filter((k) => !FIELD_KEYS.has(k));
  if (keys.length === 0) return;
  const other = keys.filter((k) => !WIDGET_UPDATE_KEYS.has(k));
  if (other.length > 0) return judge.refuse(RULE.noRule, `${c.where}: widget entries ${other.map((k) => `/${k}`).join(', ')} changed after signing`);
  const field = judge.fieldOf(num);
  const level = judge.fieldUpdateLevel(field, `the appearance (${keys.map((k) => `/${k}`).join(', ')})`, c.where, keys.some((k) => k !== 'F' && k !== 'M'));
  if (!level) return;
  judge.allow(level, field?.type === 'Sig' ? RULE.signatureFieldSigned : RULE.formFilling, `the widget of field "${field!.name}" updated (${keys.map((k) => `/${k}`).join(', ')})`);
  judge.claimAll(after);
};

/** Widget entries that change with its field's value or signature (appearance, state, characteristics, flags Acrobat sets when signing). */
const WIDGET_UPDATE_KEYS = new Set(['AP', 'AS', 'MK', 'F', 'M']);
/** Field entries a filled field may change (pyHanko's set, plus /I, the selected indices of a choice field). */
const FIELD_VALUE_KEYS = new Set(['V', 'DA', 'Q', 'Ff', 'Type', 'I']);

const fieldRule: Rule = (judge, c) => {
  const num = c.num;
  if (num === undefined) return judge.refuse(RULE.noRule, `${c.where}: a form field that is not an indirect object changed`);
  if (c.before === undefined) return judge.judgeNewField(num, c.where);
  const after = requireDict(judge, c);
  if (!after) return;
  const before = dictOf(c.before);
  const widget = isWidget(after);
  const keys = judge.changedKeys(before, after).filter((k) => !widget || FIELD_KEYS.has(k));
  if (keys.length === 0) return;
  const field = judge.fieldOf(num);
  if (!field) return judge.refuse(RULE.noRule, `${c.where}: a form field the signed form does not list changed`);
  if (keys.includes('Kids')) {
    judge.descend('fieldList', before?.get('Kids'), after.get('Kids'), `field "${field.name}" /Kids`);
    keys.splice(keys.indexOf('Kids'), 1);
    if (keys.length === 0) return;
  }
  const invalid = keys.filter((k) => !FIELD_VALUE_KEYS.has(k) || (k === 'Type' && !isName(after.get('Type'), 'Annot')));
  if (invalid.length > 0) return judge.refuse(RULE.noRule, `field "${field.name}": entries ${invalid.map((k) => `/${k}`).join(', ')} changed after signing`);
  if (field.type === 'Sig') {
    const signedBefore = judge.signedForm.field(field.num)?.signed ?? false;
    const signedNow = judge.currentForm.field(field.num)?.signed ?? false;
    if (signedBefore || !signedNow || !keys.includes('V')) {
      if (keys.every((k) => k === 'Ff' || k === 'Type')) return judge.allow('archival', RULE.formFilling, `signature field "${field.name}": flags updated`);
      return judge.refuse(RULE.noRule, `signature field "${field.name}" ${signedBefore ? 'was already signed' : 'was not signed'}, yet its ${keys.map((k) => `/${k}`).join(', ')} changed`);
    }
    const value = after.get('V');
    if (!(value instanceof PdfRef) || !judge.isFresh(value.num)) {
      return judge.refuse(RULE.noRule, `signature field "${field.name}" was signed with a signature dictionary that is not a new object`);
    }
    const level = judge.signingLevel(field);
    if (!level) return;
    judge.allow(level, judge.isDocumentTimestamp(field) ? RULE.documentTimestamp : RULE.signatureFieldSigned, `signature field "${field.name}" signed`);
    judge.claimAll(after);
    return;
  }
  const level = judge.fieldUpdateLevel(field, `the value (${keys.map((k) => `/${k}`).join(', ')})`, c.where);
  if (!level) return;
  judge.allow(level, RULE.formFilling, `field "${field.name}" filled (${keys.map((k) => `/${k}`).join(', ')})`);
  judge.claimAll(after.get('V'));
};

const fieldListRule: Rule = (judge, c) => {
  const before = asArray(c.before) ?? [];
  const after = asArray(c.after);
  if (!after) return judge.refuse(RULE.noRule, `${c.where}: the field list was removed or is no longer an array`);
  if (directItemsChanged(before, after)) judge.refuse(RULE.noRule, `${c.where}: direct field dictionaries changed`);
  const beforeRefs = refsOf(before);
  const afterRefs = refsOf(after);
  for (const num of beforeRefs) {
    if (!afterRefs.has(num)) judge.refuse(RULE.noRule, `${c.where}: form field object ${num} was removed`);
  }
  for (const num of afterRefs) {
    if (beforeRefs.has(num)) continue;
    if (!judge.isFresh(num)) {
      judge.refuse(RULE.noRule, `${c.where}: object ${num}, already used when signed, was added to the form`);
      continue;
    }
    judge.claimed.add(num);
    judge.judgeNewField(num, `${c.where}: object ${num}`);
  }
};

const acroFormRule: Rule = (judge, c) => {
  const after = requireDict(judge, c);
  if (!after) return;
  const before = dictOf(c.before);
  for (const key of judge.changedKeys(before, after)) {
    const where = `form dictionary /${key}`;
    if (key === 'Fields') judge.descend('fieldList', before?.get(key), after.get(key), where);
    else if (key === 'DR') judge.descend('formResources', before?.get(key), after.get(key), where);
    else if (key === 'SigFlags') judge.allow('archival', RULE.form, 'form /SigFlags updated');
    else if (key === 'DA' || key === 'Q' || key === 'NeedAppearances') {
      // Signing tools add a default appearance with their field; changing one is form filling.
      judge.allow(before?.has(key) || key === 'NeedAppearances' ? 'formFilling' : 'archival', RULE.form, `${where} ${before?.has(key) ? 'changed' : 'added'}`);
    } else judge.refuse(RULE.noRule, `${where} changed after signing`);
  }
};

/** /AcroForm /DR: signing tools add fonts for their appearance (archival); other changes are form filling. */
const formResourcesRule: Rule = (judge, c) => {
  if (c.after instanceof PdfStream || (c.before instanceof PdfStream && c.after !== undefined)) return refuseChange(judge, c);
  const onlyAdds = onlyAddsEntries(judge, c.before, c.after, 0);
  judge.allow(onlyAdds ? 'archival' : 'formFilling', RULE.form, `form default resources ${onlyAdds ? 'extended' : 'changed'}`);
  judge.claimAll(c.after);
};

/** `after` keeps every entry of `before` (nested dictionaries compared the same way) and may add entries. */
function onlyAddsEntries(judge: ChangeJudge, before: PdfValue | undefined, after: PdfValue | undefined, depth: number): boolean {
  const b = dictOf(judge.signed.resolve(before));
  const a = dictOf(judge.current.resolve(after));
  if (!b) return before === undefined;
  if (!a || depth > 8) return false;
  return [...b.entries].every(([k, v]) => pdfEqual(v, a.get(k)) || onlyAddsEntries(judge, v, a.get(k), depth + 1));
}

/** An appearance (dictionary, state dictionary or stream) of an annotation or widget, rewritten in place. */
const appearanceRule: Rule = (judge, c) => {
  const owner = c.role.owner;
  const field = owner === undefined ? undefined : judge.fieldOf(owner);
  const ownerValue = owner === undefined ? undefined : judge.signed.getObject(owner) ?? judge.current.getObject(owner);
  if (owner !== undefined && !field && !isWidget(ownerValue)) {
    judge.allow('annotations', RULE.annotation, `the appearance of annotation object ${owner} changed`);
    judge.claimAll(c.after);
    return;
  }
  const level = judge.fieldUpdateLevel(field, 'the appearance stream', c.where, true);
  if (!level) return;
  judge.allow(level, field?.type === 'Sig' ? RULE.signatureFieldSigned : RULE.formFilling, `the appearance of field "${field!.name}" updated`);
  judge.claimAll(c.after);
};

const annotationDataRule: Rule = (judge, c) => {
  judge.allow('annotations', RULE.annotation, `data of annotation object ${c.role.owner} changed`);
  judge.claimAll(c.after);
};

/** An object used as a field value: a rich-text value may change with form filling; a signature dictionary never. */
const fieldValueRule: Rule = (judge, c) => {
  const field = judge.fieldOf(c.role.owner);
  if (!field || field.type === 'Sig') return judge.refuse(RULE.noRule, `${c.where}: a signature dictionary was changed after signing`);
  const level = judge.fieldUpdateLevel(field, 'the value', c.where);
  if (!level) return;
  judge.allow(level, RULE.formFilling, `the value of field "${field.name}" updated`);
  judge.claimAll(c.after);
};

const DSS_KEYS = new Set(['Type', 'Certs', 'CRLs', 'OCSPs', 'VRI']);
const VRI_ENTRY_KEYS = new Set(['Type', 'Cert', 'CRL', 'OCSP', 'TS', 'TU']);

/** The DSS (ETSI EN 319 142-1 §5.4): validation data may be added, rearranged or dropped; nothing else may live in it. */
const dssRule: Rule = (judge, c) => {
  if (c.after === undefined) return judge.allow('archival', RULE.dss, 'the DSS was removed');
  const after = requireDict(judge, c);
  if (!after) return;
  const before = dictOf(c.before);
  for (const key of judge.changedKeys(before, after)) {
    if (!DSS_KEYS.has(key)) judge.refuse(RULE.noRule, `${c.where}: unexpected DSS entry /${key}`);
    else if (key === 'VRI') judge.descend('vri', before?.get(key), after.get(key), `${c.where} /VRI`);
    else if (key !== 'Type') judge.descend('dssList', before?.get(key), after.get(key), `${c.where} /${key}`);
  }
  judge.allow('archival', RULE.dss, 'validation data (DSS) updated');
};

const dssListRule: Rule = (judge, c) => {
  if (c.after === undefined) return judge.allow('archival', RULE.dss, 'validation data removed from the DSS');
  const items = asArray(c.after);
  if (!items) return judge.refuse(RULE.noRule, `${c.where}: not an array of validation data streams`);
  for (const item of items) {
    if (!(item instanceof PdfRef) || !(judge.current.getObject(item.num) instanceof PdfStream)) {
      return judge.refuse(RULE.noRule, `${c.where}: an entry is not a reference to a validation data stream`);
    }
    judge.claimAll(item); // the stream and what its dictionary references (an indirect /Length)
  }
  judge.allow('archival', RULE.dss, 'validation data (DSS) updated');
};

const vriRule: Rule = (judge, c) => {
  if (c.after === undefined) return judge.allow('archival', RULE.dss, 'the VRI dictionary was removed');
  const after = requireDict(judge, c);
  if (!after) return;
  const before = dictOf(c.before);
  for (const key of judge.changedKeys(before, after)) if (key !== 'Type') judge.descend('vriEntry', before?.get(key), after.get(key), `${c.where} /${key}`);
  judge.allow('archival', RULE.dss, 'VRI updated');
};

const vriEntryRule: Rule = (judge, c) => {
  if (c.after === undefined) return judge.allow('archival', RULE.dss, 'a VRI entry was removed');
  const after = requireDict(judge, c);
  if (!after) return;
  const before = dictOf(c.before);
  for (const key of judge.changedKeys(before, after)) {
    if (!VRI_ENTRY_KEYS.has(key)) judge.refuse(RULE.noRule, `${c.where}: unexpected VRI entry /${key}`);
    else if (key === 'TS') judge.descend('validationData', before?.get(key), after.get(key), `${c.where} /TS`);
    else if (key !== 'Type' && key !== 'TU') judge.descend('dssList', before?.get(key), after.get(key), `${c.where} /${key}`);
  }
  judge.allow('archival', RULE.dss, 'VRI entry updated');
};

/** Certificates, CRLs, OCSP responses and time-stamps are added as new streams, never rewritten. */
const validationDataRule: Rule = (judge, c) => {
  if (c.before !== undefined || !(c.after instanceof PdfStream)) {
    judge.refuse(RULE.noRule, `${c.where}: validation data is added as new streams, never rewritten or replaced by something else`);
    return;
  }
  judge.allow('archival', RULE.dss, 'validation data added');
  judge.claimAll(c.after);
};

/**
 * The catalog's name dictionary: an annotation-appearance name tree (/AP) may be added with the
 * annotations that use it; embedded files, JavaScript, destinations and the rest may not change.
 */
const namesRule: Rule = (judge, c) => {
  const after = requireDict(judge, c);
  if (!after) return;
  const before = dictOf(c.before);
  for (const key of judge.changedKeys(before, after)) {
    if (key === 'AP' && !before?.has('AP')) {
      judge.allow('annotations', RULE.annotation, 'an annotation-appearance name tree was added');
      judge.claimAll(after.get('AP'));
    } else judge.refuse(RULE.noRule, `${c.where}: name tree /${key} changed after signing`);
  }
};

/** Structure tree entries that grow when a signature or annotation is tagged (ISO 32000-1 §14.7). */
const STRUCTURE_GROWTH_KEYS = new Set(['K', 'ParentTree', 'ParentTreeNextKey', 'Nums', 'Kids', 'Limits']);

/**
 * The logical structure gains elements for what was added (iText and Acrobat tag a new signature
 * widget): a structure element's /K keeps every kid it had and gains new ones, the parent tree and
 * its next key are updated. Existing tags (/ActualText, /Alt, roles, attributes) may not change.
 */
const structureRule: Rule = (judge, c) => {
  if (c.after instanceof PdfStream || c.before instanceof PdfStream) return refuseChange(judge, c);
  const before = dictOf(c.before);
  const after = dictOf(c.after);
  if (!after) {
    if (Array.isArray(c.after) && Array.isArray(c.before)) return structureKids(judge, c, c.before, c.after);
    return refuseChange(judge, c);
  }
  for (const key of judge.changedKeys(before, after)) {
    if (!STRUCTURE_GROWTH_KEYS.has(key)) return judge.refuse(RULE.noRule, `${c.where}: structure entry /${key} changed after signing`);
    if (key === 'K') {
      const kids = (v: PdfValue | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
      structureKids(judge, c, kids(before?.get('K')), kids(after.get('K')));
    }
  }
  judge.allow('archival', RULE.structure, 'the logical structure (tags) gained entries');
  judge.claimAll(after);
};

function structureKids(judge: ChangeJudge, c: Change, before: PdfValue[], after: PdfValue[]): void {
  const lost = before.filter((kid) => !after.some((k) => pdfEqual(k, kid)));
  if (lost.length > 0) return judge.refuse(RULE.noRule, `${c.where}: structure elements lost kids after signing`);
  judge.allow('archival', RULE.structure, 'the logical structure (tags) gained entries');
  judge.claimAll(after);
}

export const RULES: Record<RoleKind, Rule> = {
  catalog: catalogRule,
  info: archivalRule(RULE.info, 'the document information dictionary'),
  metadata: archivalRule(RULE.metadata, 'the XMP metadata', true),
  archival: archivalRule(RULE.archival, 'archival data'),
  pageTree: (judge, c) => judge.refuse(RULE.noRule, `${c.where}: the page tree changed (pages added, removed or reordered, or inherited page attributes)`),
  page: pageRule,
  annotList: annotListRule,
  annotation: annotationRule,
  appearance: appearanceRule,
  appearanceContent: (judge, c) => judge.refuse(RULE.noRule, `${c.where}: content an existing appearance draws (resources, fonts, images, nested forms) was rewritten`),
  annotationData: annotationDataRule,
  acroForm: acroFormRule,
  fieldList: fieldListRule,
  field: fieldRule,
  fieldValue: fieldValueRule,
  formResources: formResourcesRule,
  dss: dssRule,
  dssList: dssListRule,
  vri: vriRule,
  vriEntry: vriEntryRule,
  validationData: validationDataRule,
  structure: structureRule,
  names: namesRule,
  link: () => undefined, // the target's own structural role judges it
  content: refuseChange,
};

/** Trailer entries that only describe the file's structure. */
const STRUCTURAL_TRAILER_KEYS = new Set(['Size', 'Prev', 'XRefStm', 'ID', 'Type', 'W', 'Index', 'Length', 'Filter', 'DecodeParms']);

/** The trailer is not an object: its entries are judged here (a new /Root, /Info, Adobe's /AdditionalStreams). */
export function judgeTrailer(judge: ChangeJudge): void {
  const before = judge.signed.trailer;
  const after = judge.current.trailer;
  for (const key of judge.changedKeys(before, after)) {
    if (STRUCTURAL_TRAILER_KEYS.has(key)) continue;
    if (key === 'Root') {
      const root = after.get('Root');
      if (!(root instanceof PdfRef)) judge.refuse(RULE.noRule, 'the trailer /Root is not a reference');
      else judge.descend('catalog', before.get('Root'), root, 'trailer /Root');
    } else if (key === 'Info') judge.descend('info', before.get(key), after.get(key), 'trailer /Info');
    else if (key === 'AdditionalStreams') judge.descend('archival', before.get(key), after.get(key), 'trailer /AdditionalStreams');
    else judge.refuse(RULE.noRule, `trailer entry /${key} changed after signing`);
  }
}
