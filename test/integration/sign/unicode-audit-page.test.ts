import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printable, visualOrder } from '../../../src/documents/sign/pdf/fonts.js';
import { signPdfReport } from '../../../src/documents/sign/sign-pdf.js';
import type { SignRequest } from '../../../src/documents/sign/types.js';
import { createTestPki, pdfsig, qpdfCheck, type TestPki } from './pki.js';
import { CORPUS_DIR } from '../../support/corpus.js';

const SIGNER = 'Łukasz Żółć / Дмитрий / Ελένη';
const COMMENT = 'Zatwierdzam umowę — Подтверждаю договор — Εγκρίνω τη σύμβαση ✓';
const LONG_VALUE = 'Съешь же ещё этих мягких французских булок, да выпей чаю. '.repeat(6).trim();

const request = (): SignRequest => ({
  signer: { name: SIGNER, email: 'lukasz@example.com' },
  auditTrail: [
    { type: 'ready', timestamp: '2025-03-01T09:00:00Z' },
    { type: 'field_change', timestamp: '2025-03-01T09:00:30Z', data: { field: 'comment', value: COMMENT } },
    { type: 'field_change', timestamp: '2025-03-01T09:00:40Z', data: { field: 'witness', value: '王小明 😀' } },
    { type: 'field_change', timestamp: '2025-03-01T09:00:50Z', data: { field: 'clause', value: LONG_VALUE } },
    { type: 'field_change', timestamp: '2025-03-01T09:00:55Z', data: { field: 'witness', value: 'שלום כהן' } },
    { type: 'submit', timestamp: '2025-03-01T09:01:00Z' },
  ],
  reason: 'Zgoda — Согласие',
  appearance: { page: 1, x: 50, y: 50, width: 240, height: 60 },
});

let pki: TestPki;
let input: Buffer;
let signed: Buffer;
const file = (name: string, bytes: Buffer) => {
  const p = path.join(pki.dir, name);
  writeFileSync(p, bytes);
  return p;
};
const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const pageCount = (pdf: Buffer) => Number(/Pages:\s+(\d+)/.exec(run('pdfinfo', [file('info.pdf', pdf)]))![1]);

beforeAll(async () => {
  pki = createTestPki();
  input = readFileSync(`${CORPUS_DIR}/pdf-unsigned/signpdf-w3dummy.pdf`);
  signed = (await signPdfReport(input, request(), pki.rsa)).document;
});
afterAll(() => pki?.cleanup());

describe('audit page in embedded DejaVu Sans (Type0, Identity-H, subset, ToUnicode)', () => {
  it('prints Polish, Cyrillic and Greek names and event data so that pdftotext reads them back exactly', () => {
    const first = pageCount(input) + 1;
    const audit = run('pdftotext', ['-f', String(first), '-l', String(pageCount(signed)), file('audit.pdf', signed), '-']);
    expect(audit).toContain('Electronic signature audit trail');
    expect(audit).toContain(SIGNER);
    expect(audit).toContain('Zgoda — Согласие');
    // Long values wrap onto several lines: all of their words are there, in order.
    const flowing = audit.replace(/\s+/g, ' ');
    expect(flowing).toContain(`value=${COMMENT}`);
    expect(flowing).toContain(LONG_VALUE.split(' ').slice(0, 30).join(' '));
  });

  it('prints code points DejaVu has no glyph for (CJK) as one ? each, and the rest of the line as it is', () => {
    const audit = run('pdftotext', ['-f', String(pageCount(input) + 1), file('audit.pdf', signed), '-']);
    expect(audit).toContain('value=??? 😀');
    expect(printable('王小明 Łukasz\u0007', 'regular')).toBe('??? Łukasz?');
    // Invisible format characters the font has no glyph for are dropped rather than shown as '?'.
    expect(printable('a\u{E0041}b\nc', 'bold')).toBe('ab c');
  });

  it('draws right-to-left runs in visual order, so the words read back in logical order', () => {
    expect(visualOrder('abc שלום כהן (12.5 ש"ח) def')).toBe('abc (ח"ש 12.5) ןהכ םולש def');
    expect(visualOrder('Łukasz Żółć')).toBe('Łukasz Żółć');
    const audit = run('pdftotext', ['-f', String(pageCount(input) + 1), file('audit.pdf', signed), '-'])
      .replace(/[\u202A-\u202E]/g, '');
    expect(audit).toMatch(/value=\s*שלום כהן/);
  });

  it('keeps every word of the audit page inside the page margins', () => {
    const html = run('pdftotext', ['-f', String(pageCount(input) + 1), '-bbox', file('bbox.pdf', signed), '-']);
    const width = Number(/<page width="([\d.]+)"/.exec(html)![1]);
    const xMax = [...html.matchAll(/xMax="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(xMax.length).toBeGreaterThan(50);
    expect(Math.max(...xMax)).toBeLessThanOrEqual(width - 50 + 0.5);
  });

  it('embeds subset DejaVu Sans and DejaVu Sans Bold as CID TrueType with Identity-H and ToUnicode', () => {
    const fonts = run('pdffonts', [file('fonts.pdf', signed)]);
    expect(fonts).toMatch(/^[A-Z]{6}\+DejaVuSans\s+CID TrueType\s+Identity-H\s+yes\s+yes\s+yes\b/m);
    expect(fonts).toMatch(/^[A-Z]{6}\+DejaVuSans-Bold\s+CID TrueType\s+Identity-H\s+yes\s+yes\s+yes\b/m);
    expect(fonts).not.toMatch(/Helvetica/);
  });

  it('draws the visible signature appearance with the same font, readable back', () => {
    const page1 = run('pdftotext', ['-f', '1', '-l', '1', file('p1.pdf', signed), '-']);
    expect(page1).toContain(`Digitally signed by ${SIGNER}`);
  });

  it('stays a valid, total PAdES signature and a clean PDF', () => {
    const sigs = pdfsig(pki, signed);
    expect(sigs).toHaveLength(1);
    expect(sigs[0]).toMatchObject({ valid: true, total: true });
    expect(qpdfCheck(pki, signed)).toContain('No syntax or stream encoding errors');
    expect(signed.subarray(0, input.length).equals(input)).toBe(true);
  });
});
