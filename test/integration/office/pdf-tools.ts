import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CORPUS_DIR } from '../../support/corpus.js';

/** Independent checkers (poppler) run on in-memory PDFs through stdin. */
export const CORPUS_DOCX = `${CORPUS_DIR}/docx`;

export const corpusDocx = (name: string): Buffer => readFileSync(path.join(CORPUS_DOCX, name));

export function pdfText(pdf: Buffer, options: { layout?: boolean; page?: number } = {}): string {
  const args = [...(options.layout ? ['-layout'] : []), ...(options.page ? ['-f', String(options.page), '-l', String(options.page)] : []), '-', '-'];
  return execFileSync('pdftotext', args, { input: pdf }).toString();
}

/** Text with runs of whitespace collapsed to one space. */
export const flatText = (pdf: Buffer): string => pdfText(pdf).replace(/\s+/g, ' ').trim();

export function pdfPageCount(pdf: Buffer): number {
  const info = execFileSync('pdfinfo', ['-'], { input: pdf }).toString();
  const match = /^Pages:\s+(\d+)/m.exec(info);
  if (!match) throw new Error('pdfinfo printed no page count');
  return Number(match[1]);
}

export function pageTexts(pdf: Buffer): string[] {
  return Array.from({ length: pdfPageCount(pdf) }, (_, i) => pdfText(pdf, { page: i + 1 }));
}

/** Number of images `pdfimages -list` reports. */
export function pdfImageCount(pdf: Buffer): number {
  const list = execFileSync('pdfimages', ['-list', '-'], { input: pdf }).toString();
  return list.split('\n').slice(2).filter((line) => line.trim()).length;
}

export const isPdf = (buf: Buffer): boolean => buf.subarray(0, 5).toString('latin1') === '%PDF-';
