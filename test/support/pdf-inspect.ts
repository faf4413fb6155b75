import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Independent readings of a PDF for the option tests: qpdf's JSON (objects, annotations, catalog),
 * poppler's pdfinfo (pages, page size, tagging, encryption, XMP with -meta), pdffonts, pdfimages.
 * qpdf needs a file: it is written to a private temp directory and removed at once.
 */
function withFile<T>(pdf: Buffer, run: (file: string) => T): T {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docproc-pdf-'));
  try {
    const file = path.join(dir, 'in.pdf');
    writeFileSync(file, pdf);
    return run(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface QpdfObjects {
  /** Every object's value by "obj:N G R" key (qpdf --json v2). */
  objects: Record<string, { value?: Record<string, unknown>; stream?: { dict: Record<string, unknown> } }>;
}

export function qpdfJson(pdf: Buffer): QpdfObjects {
  return withFile(pdf, (file) => {
    const json = JSON.parse(execFileSync('qpdf', ['--json=2', '--json-key=qpdf', file], { maxBuffer: 256 * 1024 * 1024 }).toString('utf8')) as { qpdf: [unknown, Record<string, { value?: Record<string, unknown>; stream?: { dict: Record<string, unknown> } }>] };
    return { objects: json.qpdf[1] };
  });
}

/** Dictionaries (plain or stream) of every object. */
export const dictionaries = (q: QpdfObjects): Record<string, unknown>[] =>
  Object.values(q.objects).flatMap((o) => (o.value && typeof o.value === 'object' && !Array.isArray(o.value) ? [o.value] : o.stream ? [o.stream.dict] : []));

/** The document catalog (/Type /Catalog). */
export const catalogOf = (q: QpdfObjects): Record<string, unknown> => dictionaries(q).find((d) => d['/Type'] === '/Catalog') ?? {};

/** Annotations by subtype, counted. */
export function annotationSubtypes(q: QpdfObjects): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const d of dictionaries(q)) if (d['/Type'] === '/Annot' || (typeof d['/Subtype'] === 'string' && d['/Rect'])) counts[d['/Subtype'] as string] = (counts[d['/Subtype'] as string] ?? 0) + 1;
  return counts;
}

export function pdfInfo(pdf: Buffer, meta = false): string {
  return execFileSync('pdfinfo', [...(meta ? ['-meta'] : []), '-'], { input: pdf }).toString('utf8');
}

/** Page size in points of page 1: [width, height]. */
export function pageSize(pdf: Buffer): [number, number] {
  const match = /Page size:\s+([\d.]+) x ([\d.]+)/.exec(pdfInfo(pdf));
  if (!match) throw new Error('pdfinfo printed no page size');
  return [Number(match[1]), Number(match[2])];
}

export interface FontRow {
  name: string;
  embedded: boolean;
}

/** pdffonts' table: every font and whether it is embedded. */
export function pdfFonts(pdf: Buffer): FontRow[] {
  const lines = execFileSync('pdffonts', ['-'], { input: pdf }).toString('utf8').split('\n').slice(2).filter((l) => l.trim());
  // Columns: name type encoding emb sub uni object ID; the name has no spaces, the type may.
  return lines.map((line) => {
    const cells = line.trim().split(/\s+/);
    return { name: cells[0]!, embedded: cells[cells.length - 5] === 'yes' };
  });
}

export interface ImageRow {
  width: number;
  height: number;
  encoding: string;
  xPpi: number;
  bytes: number;
}

/** pdfimages -list: page num type width height color comp bpc enc interp object ID x-ppi y-ppi size ratio. */
export function pdfImages(pdf: Buffer): ImageRow[] {
  return withFile(pdf, (file) => {
    const lines = execFileSync('pdfimages', ['-list', file]).toString('utf8').split('\n').slice(2).filter((l) => l.trim());
    return lines.map((line) => {
      const c = line.trim().split(/\s+/);
      const size = c[14]!;
      const unit = size.slice(-1);
      const bytes = Number.parseFloat(size) * (unit === 'K' ? 1024 : unit === 'M' ? 1024 * 1024 : 1);
      return { width: Number(c[3]), height: Number(c[4]), encoding: c[8]!, xPpi: Number(c[12]), bytes };
    });
  });
}
