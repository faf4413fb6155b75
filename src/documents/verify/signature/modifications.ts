import type { PdfView, XrefEntry } from '../../pdf/document.js';
import { PdfDict, PdfRef, PdfStream, pdfEqual, type PdfValue } from '../../pdf/objects.js';
import type { ModificationLevel } from '../types.js';
import { ChangeJudge, RULE, judgeTrailer, levelRank, type ChangePolicy, type Finding } from './change-rules.js';
import { FormIndex } from './form-index.js';
import { describeRole } from './object-roles.js';
import { UseIndex, formatPath } from './use-tracker.js';

/**
 * What changed after a signature, judged by use (README.md in this folder): for every revision after
 * the signed one, every object that changed or was added is judged in every role the signed revision
 * gives it (the reference tracker, use-tracker.ts), by the named rules of change-rules.ts; objects
 * first used after signing must be explained by the rule of the change that uses them; the strictest
 * use decides, and whatever no rule explains makes the level `other`.
 */
export interface ModificationReport {
  level: ModificationLevel;
  /** What the rules refused (level other) or, when allowed, what they explained. */
  findings: string[];
  warnings: string[];
}

export const MAX_CHANGED_OBJECTS = 50_000;
export const MAX_REVISIONS_ANALYSED = 200;
const MAX_FINDINGS = 20;

const sameEntry = (a: XrefEntry | undefined, b: XrefEntry | undefined) =>
  a !== undefined &&
  b !== undefined &&
  a.kind === b.kind &&
  (a.kind === 'offset' ? a.offset === (b as { offset: number }).offset : a.kind === 'compressed' ? a.stream === (b as { stream: number }).stream && a.index === (b as { index: number }).index : true);

/**
 * The object reads from the same bytes in both views: the same entry and, for an object in an
 * object stream, the same object stream (a stream rewritten in place changes every object in it).
 */
function unchangedIn(signed: PdfView, current: PdfView, num: number): boolean {
  const before = signed.entries.get(num);
  if (!sameEntry(before, current.entries.get(num))) return false;
  return before?.kind !== 'compressed' || sameEntry(signed.entries.get(before.stream), current.entries.get(before.stream));
}

const valueOf = (view: PdfView, num: number): PdfValue | undefined => (view.entries.get(num)?.kind === 'free' ? undefined : view.getObject(num));

/** The signed revision, indexed once for all the revisions that follow it. */
export class SignedRevision {
  readonly uses: UseIndex;
  readonly form: FormIndex;

  constructor(readonly view: PdfView) {
    this.uses = UseIndex.of(view);
    this.form = FormIndex.of(view);
  }
}

/** Where an object is used in the signed revision, for the report. */
function whereUsed(signed: SignedRevision, num: number): string {
  const uses = signed.uses.usesOf(num);
  const use = uses.find((u) => u.role.kind !== 'link') ?? uses[0];
  if (!use) return `object ${num}`;
  return `object ${num} (${describeRole(use.role)}, referenced from ${use.from === 'trailer' ? 'the trailer' : `object ${use.from}`} ${formatPath(use.path)})`;
}

/** An object defined after signing whose number a signed object already referenced. */
function danglingWhere(signed: SignedRevision, num: number): string {
  const use = signed.uses.usesOf(num)[0]!;
  const by = use.from === 'trailer' ? 'the signed trailer' : `signed object ${use.from}`;
  return `object ${num}, referenced by ${by} (${formatPath(use.path)}) but absent when it was signed, was defined afterwards as ${describeRole(use.role)}`;
}

/** Judges one later revision against the signed one. */
function judgeRevision(signed: SignedRevision, current: PdfView, policy: ChangePolicy): ChangeJudge {
  const judge = new ChangeJudge(signed.view, current, signed.uses, signed.form, FormIndex.of(current), policy);
  if (current.encryption && !signed.view.encryption) judge.refuse(RULE.noRule, 'encryption was added after signing');
  const changed = new Set<number>();
  const nums = new Set([...signed.view.entries.keys(), ...current.entries.keys()]);
  for (const num of nums) {
    if (unchangedIn(signed.view, current, num)) continue;
    const before = valueOf(signed.view, num);
    const after = valueOf(current, num);
    if ((before === undefined && after === undefined) || pdfEqual(before, after)) continue;
    changed.add(num);
    if (changed.size > MAX_CHANGED_OBJECTS) {
      judge.refuse(RULE.noRule, `more than ${MAX_CHANGED_OBJECTS} objects changed after signing: too many to analyse`);
      return judge;
    }
    if (!signed.uses.isUsed(num)) continue; // first used after signing: judged through what uses it now
    const where = before === undefined ? danglingWhere(signed, num) : whereUsed(signed, num);
    if (after === undefined) {
      judge.refuse(RULE.noRule, `${where} was deleted after signing`);
      continue;
    }
    judge.claimed.add(num);
    for (const role of signed.uses.rolesOf(num)) judge.judge({ num, role, before, after, where });
  }
  judgeTrailer(judge);
  checkNewObjectsExplained(judge, signed, changed);
  return judge;
}

/**
 * Every object first used after signing that the current revision reaches (from its trailer, through
 * changed or newly used objects) must have been looked at by the rule of the change that uses it;
 * objects nothing reaches (new xref and object streams, leftovers of a writer) change nothing shown.
 */
function checkNewObjectsExplained(judge: ChangeJudge, signed: SignedRevision, changed: Set<number>): void {
  const reached = new Set<number>();
  const stack: Array<{ value: PdfValue | undefined; from: string }> = [...judge.current.trailer.entries].map(([k, v]) => ({ value: v, from: `trailer /${k}` }));
  let unexplained = 0;
  while (stack.length > 0) {
    const { value, from } = stack.pop()!;
    if (value instanceof PdfRef) {
      const num = value.num;
      if (reached.has(num)) continue;
      const fresh = judge.isFresh(num);
      if (!fresh && !changed.has(num)) continue; // as signed: judged on its own if anything under it changed
      reached.add(num);
      const firstUsedNow = fresh && (changed.has(num) || !signed.uses.isUsed(num));
      if (firstUsedNow && !judge.claimed.has(num) && judge.current.getObject(num) !== undefined && unexplained++ < MAX_FINDINGS) {
        judge.refuse(RULE.noRule, `object ${num}, added or first used after signing (reached from ${from}), is not explained by any rule`);
      }
      if (!judge.refusedObjects.has(num)) stack.push({ value: judge.current.getObject(num), from: `object ${num}` });
    } else if (Array.isArray(value)) for (const item of value) stack.push({ value: item, from });
    else if (value instanceof PdfStream) for (const item of value.dict.entries.values()) stack.push({ value: item, from });
    else if (value instanceof PdfDict) for (const item of value.entries.values()) stack.push({ value: item, from });
  }
  const unused = [...changed].filter((num) => judge.isFresh(num) && !reached.has(num));
  if (unused.length > 0) judge.allow('archival', RULE.unused, `${unused.length} object(s) added that nothing in the document uses (cross-reference and object streams among them)`);
}

const isWhitespace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
const skipWhitespace = (data: Uint8Array, offset: number) => {
  let at = offset;
  while (at < data.length && isWhitespace(data[at])) at++;
  return at;
};
/** Where the signed revision's cross-reference section starts (a startxref may point at the whitespace before it). */
const sectionStart = (view: PdfView) => (view.startxref === undefined ? undefined : skipWhitespace(view.data, view.startxref));

const describe = (f: Finding) => `${f.message} [${f.rule}]`;

/**
 * Judges every revision in `later` (oldest first, the final document last) against `signed`.
 * A revision whose cross-reference chain does not continue the signed one is `other`.
 */
export function classifyModifications(signed: SignedRevision, later: PdfView[], policy: ChangePolicy): ModificationReport {
  const refused: string[] = [];
  // Each revision is judged against the signed one, so the last judgement explains everything kept.
  let explained: string[] = [];
  const warnings: string[] = [];
  const add = (list: string[], text: string) => {
    if (list.length < MAX_FINDINGS && !list.includes(text)) list.push(text);
  };
  let level: ModificationLevel = 'none';
  if (signed.uses.truncated) add(refused, `the signed revision is too large to analyse what later revisions changed [${RULE.noRule}]`);
  else if (later.length > MAX_REVISIONS_ANALYSED) add(refused, `more than ${MAX_REVISIONS_ANALYSED} revisions follow the signature: too many to analyse [${RULE.noRule}]`);
  else {
    const signedStart = sectionStart(signed.view);
    let previous = signed.view.startxref;
    for (const view of later) {
      if (view.startxref === previous) continue;
      previous = view.startxref;
      // A chain the reader had to recover by scanning is judged object by object only.
      if (signedStart !== undefined && view.recovery.length === 0 && !view.sectionOffsets.some((o) => skipWhitespace(view.data, o) === signedStart)) {
        add(refused, `a later revision's cross-reference chain does not lead back to the signed revision (its /Prev skips it) [${RULE.noRule}]`);
        continue;
      }
      const judge = judgeRevision(signed, view, policy);
      if (levelRank(judge.level) > levelRank(level)) level = judge.level;
      for (const f of judge.refused) add(refused, describe(f));
      explained = [];
      for (const f of judge.explained) add(explained, describe(f));
      for (const w of judge.warnings) add(warnings, w);
    }
  }
  if (refused.length > 0) return { level: 'other', findings: refused, warnings };
  return { level, findings: explained, warnings };
}
