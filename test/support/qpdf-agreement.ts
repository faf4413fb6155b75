import { expect } from 'vitest';
import { PdfView, revisionEnds } from '../../src/documents/pdf/document.js';
import { PdfDict, PdfName, PdfRef, PdfStream, PdfString, type PdfValue } from '../../src/documents/pdf/objects.js';
import type { QpdfReader } from './pdf-attacks.js';

/**
 * Differential check of the verifier's PDF reader against qpdf, an independent reader: each revision
 * of a file (cut just after that revision's %%EOF, and the whole file) must resolve to the same
 * objects in both. Objects are compared in qpdf's JSON v2 form; a disagreement names the object and
 * shows both renderings.
 */

// PDFDocEncoding where it differs from Latin-1 (ISO 32000-1 Annex D.2).
const PDFDOC_HIGH: Record<number, number> = {
  0x18: 0x02d8, 0x19: 0x02c7, 0x1a: 0x02c6, 0x1b: 0x02d9, 0x1c: 0x02dd, 0x1d: 0x02db, 0x1e: 0x02da, 0x1f: 0x02dc,
  0x80: 0x2022, 0x81: 0x2020, 0x82: 0x2021, 0x83: 0x2026, 0x84: 0x2014, 0x85: 0x2013, 0x86: 0x0192, 0x87: 0x2044,
  0x88: 0x2039, 0x89: 0x203a, 0x8a: 0x2212, 0x8b: 0x2030, 0x8c: 0x201e, 0x8d: 0x201c, 0x8e: 0x201d, 0x8f: 0x2018,
  0x90: 0x2019, 0x91: 0x201a, 0x92: 0x2122, 0x93: 0xfb01, 0x94: 0xfb02, 0x95: 0x0141, 0x96: 0x0152, 0x97: 0x0160,
  0x98: 0x0178, 0x99: 0x017d, 0x9a: 0x0131, 0x9b: 0x0142, 0x9c: 0x0153, 0x9d: 0x0161, 0x9e: 0x017e, 0xa0: 0x20ac,
};

function stringCandidates(bytes: Uint8Array): string[] {
  const b = Buffer.from(bytes);
  const out = [`b:${b.toString('hex')}`];
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) out.push(`u:${b.subarray(2).swap16().toString('utf16le')}`);
  if (b.length >= 2 && b[0] === 0xff && b[1] === 0xfe) out.push(`u:${b.subarray(2).toString('utf16le')}`);
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) out.push(`u:${b.subarray(3).toString('utf8')}`);
  out.push(`u:${String.fromCodePoint(...[...b].map((c) => PDFDOC_HIGH[c] ?? c))}`);
  return out;
}

/**
 * The ways qpdf's JSON can spell a name: as is; with the "n:" prefix; its bytes as UTF-8 (qpdf 11.3
 * writes a name's raw bytes, so bytes that are not UTF-8 reach us as U+FFFD); #-escaped (newer qpdf).
 */
function nameForms(name: string): string[] {
  const bytes = Buffer.from(name, 'latin1');
  const escaped = [...bytes].map((c) => (c < 0x21 || c > 0x7e || c === 0x23 ? `#${c.toString(16).padStart(2, '0')}` : String.fromCharCode(c))).join('');
  const utf8 = bytes.toString('utf8');
  return [...new Set([`/${name}`, `n:/${name}`, `/${utf8}`, `n:/${utf8}`, `n:/${escaped}`, `/${escaped}`])];
}

/** Our value compared with qpdf's JSON v2 rendering of the same object. */
function agrees(view: PdfView, ours: PdfValue | undefined, theirs: unknown, depth = 0): boolean {
  if (depth > 100) return false;
  if (ours === undefined) return theirs === undefined;
  // A reference to a free or missing object is the null object (§7.3.10); qpdf prints it so.
  if (ours instanceof PdfRef && theirs === null) return view.getObject(ours.num) === undefined;
  if (ours === null) return theirs === null;
  if (typeof ours === 'boolean' || typeof ours === 'number') return typeof theirs === typeof ours && Math.abs((theirs as number) - (ours as number)) < 1e-6 || theirs === ours;
  if (ours instanceof PdfName) return typeof theirs === 'string' && nameForms(ours.name).includes(theirs);
  if (ours instanceof PdfString) return typeof theirs === 'string' && stringCandidates(ours.bytes).includes(theirs);
  if (ours instanceof PdfRef) return theirs === `${ours.num} ${ours.gen} R`;
  if (Array.isArray(ours)) return Array.isArray(theirs) && theirs.length === ours.length && ours.every((v, i) => agrees(view, v, theirs[i], depth + 1));
  if (ours instanceof PdfStream) {
    const stream = (theirs as { stream?: { dict?: unknown } } | null)?.stream;
    return !!stream && agrees(view, ours.dict, stream.dict, depth + 1);
  }
  if (ours instanceof PdfDict) {
    if (!theirs || typeof theirs !== 'object' || Array.isArray(theirs)) return false;
    const t = theirs as Record<string, unknown>;
    // qpdf drops dictionary entries whose value is null (ISO 32000-1 §7.3.7: same as absent).
    const isNull = (v: PdfValue) => v === null || (v instanceof PdfRef && view.getObject(v.num) === undefined);
    const ourKeys = [...ours.entries].filter(([, v]) => !isNull(v)).map(([k]) => k);
    // qpdf files a value found where a key belongs under an invented /QPDFFake<n> key; we skip it.
    const theirKeys = Object.keys(t).filter((k) => t[k] !== null && !/^\/QPDFFake\d+$/.test(k));
    if (ourKeys.length !== theirKeys.length) return false;
    return ourKeys.every((k) => {
      const key = nameForms(k).find((form) => form in t);
      return key !== undefined && agrees(view, ours.get(k), t[key], depth + 1);
    });
  }
  return false;
}

interface Disagreement {
  object: string;
  ours: string;
  qpdf: string;
}

const render = (v: unknown) => JSON.stringify(v, (_k, x) => (x instanceof PdfName ? `/${x.name}` : x instanceof PdfString ? `b:${Buffer.from(x.bytes).toString('hex')}` : x instanceof PdfRef ? `${x.num} ${x.gen} R` : x instanceof PdfDict ? Object.fromEntries(x.entries) : x instanceof PdfStream ? { stream: x.dict } : x))?.slice(0, 300) ?? 'undefined';

/** Compares one revision (the file cut at `end`). Returns the disagreements, or null when neither reader can open it. */
function compareRevision(reader: QpdfReader, data: Buffer, end: number): Disagreement[] | null {
  const cut = data.subarray(0, end);
  let theirs: Record<string, { value?: unknown; stream?: unknown }> | undefined;
  try {
    theirs = reader.json(Buffer.from(cut)).qpdf[1];
  } catch {
    theirs = undefined;
  }
  let view: PdfView | undefined;
  try {
    view = new PdfView(cut, cut.length);
  } catch {
    view = undefined;
  }
  if (!theirs && !view) return null;
  // qpdf gives up on some damaged chains (e.g. /Prev 0) that we recover by scanning, as the issue
  // asks; that is only acceptable when our reader says it recovered.
  if (!theirs && view && view.recovery.length > 0) return null;
  if (!theirs || !view) return [{ object: '(file)', ours: view ? 'opened' : 'unreadable', qpdf: theirs ? 'opened' : 'unreadable' }];
  const out: Disagreement[] = [];
  const seen = new Set<number>();
  for (const [key, entry] of Object.entries(theirs)) {
    if (key === 'trailer') {
      // A rebuilt cross-reference has a synthesized trailer: only its /Root carries meaning.
      if (view.reconstructed) {
        const root = (entry.value as Record<string, unknown> | undefined)?.['/Root'];
        if (!agrees(view, view.trailer.get('Root'), root)) out.push({ object: 'trailer /Root', ours: render(view.trailer.get('Root')), qpdf: String(root) });
      } else if (!agrees(view, view.trailer, entry.value)) out.push({ object: 'trailer', ours: render(view.trailer), qpdf: JSON.stringify(entry.value).slice(0, 300) });
      continue;
    }
    const num = Number(/^obj:(\d+) /.exec(key)?.[1]);
    seen.add(num);
    const ours = view.getObject(num);
    const qpdfValue = 'stream' in entry ? entry : entry.value;
    // qpdf lists an object it cannot find as null; we report it as missing.
    if (ours === undefined && qpdfValue === null) continue;
    if (!agrees(view, ours, qpdfValue)) out.push({ object: key, ours: render(ours), qpdf: JSON.stringify(qpdfValue).slice(0, 300) });
  }
  for (const [num, entry] of view.entries) {
    if (seen.has(num) || entry.kind === 'free') continue;
    const ours = view.getObject(num);
    if (ours !== undefined && ours !== null) out.push({ object: `obj:${num}`, ours: render(ours), qpdf: '(not listed)' });
  }
  return out;
}

/** Revision ends; a linearized file's first %%EOF closes the first-page section, not a revision. */
function revisionCuts(data: Buffer): number[] {
  const linearized = /\/Linearized\b/.test(data.subarray(0, 2048).toString('latin1'));
  const ends = revisionEnds(data).map((r) => r.end).slice(linearized ? 1 : 0);
  if (!ends.includes(data.length)) ends.push(data.length);
  return [...new Set(ends)];
}

/** Asserts that every revision of `data` reads the same in our reader and in qpdf. */
export function expectAgreementWithQpdf(reader: QpdfReader, label: string, data: Buffer): void {
  const problems: string[] = [];
  let compared = 0;
  for (const end of revisionCuts(data)) {
    const result = compareRevision(reader, data, end);
    if (result === null) continue;
    compared++;
    for (const d of result) problems.push(`${label} @${end} ${d.object}: ours ${d.ours} | qpdf ${d.qpdf}`);
  }
  expect(compared, `${label}: no revision could be compared`).toBeGreaterThan(0);
  expect(problems.slice(0, 10)).toEqual([]);
}

