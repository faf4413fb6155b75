import { execFileSync } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import PizZip from 'pizzip';

/**
 * The text a document holds, read from its own bytes without LibreOffice, to compare with what
 * pdftotext reads from the PDF docproc made of it.
 */

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const decode = (text: string) =>
  text.replace(/&(lt|gt|amp|quot|apos|#x[0-9a-f]+|#\d+);/gi, (_, e: string) =>
    e[0] === '#' ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1))) : ENTITIES[e]!,
  );

/** Text runs of an OOXML package: w:t (Word), t in sharedStrings and inline strings (Excel), a:t (PowerPoint slides). */
export function ooxmlText(data: Buffer): string {
  const zip = new PizZip(data);
  const parts = Object.keys(zip.files).filter((name) => /^(word\/document|xl\/sharedStrings|xl\/worksheets\/sheet\d+|ppt\/slides\/slide\d+)\.xml$/.test(name));
  const runs: string[] = [];
  for (const part of parts) {
    for (const match of zip.file(part)!.asText().matchAll(/<(?:[\w.-]+:)?t(?:\s[^>]*)?>([^<]*)</g)) runs.push(decode(match[1]!));
  }
  return runs.join(' ');
}

/** Text of an OpenDocument package's content.xml: every text node, paragraphs apart (template placeholders, which do not print, left out). */
export function odfText(data: Buffer): string {
  const content = new PizZip(data).file('content.xml')!.asText();
  return decode(content.replace(/<text:placeholder\b[\s\S]*?<\/text:placeholder>/g, ' ').replace(/<text:s\/>/g, ' ').replace(/<[^>]+>/g, ' '));
}

/**
 * Text of a Pages '09 document (iWork '09 XML: index.xml, or index.xml.gz, in the package): every
 * text body (the main one, text boxes, headers, footers), breaks and tabs as spaces. Left out: the
 * template's section prototypes (pages a user may insert, not part of the document) and its
 * placeholder text (sf:ghost-text and its references, which Pages shows while editing but does not print).
 */
export function pages09Text(data: Buffer): string {
  const zip = new PizZip(data);
  const plain = zip.file('index.xml');
  const xml = plain ? plain.asText() : gunzipSync(zip.file('index.xml.gz')!.asUint8Array()).toString('utf8');
  const document = xml.replace(/<sl:section-prototypes\b[\s\S]*?<\/sl:section-prototypes>/g, ' ');
  const bodies = Array.from(document.matchAll(/<sf:text-body>([\s\S]*?)<\/sf:text-body>/g), (m) => m[1]!);
  return decode(
    bodies
      .join(' ')
      .replace(/<sf:ghost-text(?:-ref)?\b[\s\S]*?<\/sf:ghost-text(?:-ref)?>/g, ' ')
      .replace(/<sf:(?:br|lnbr|pgbr|crbr|sectbr|layoutbr|tab)\/>/g, ' ')
      .replace(/<[^>]+>/g, ''),
  );
}

/** RTF read by pandoc's reader (an independent one). */
export function rtfText(data: Buffer): string {
  return execFileSync('pandoc', ['-f', 'rtf', '-t', 'plain', '--wrap=none'], { input: data }).toString('utf8');
}

/** Words of three letters or digits and more, lower-cased. */
export const wordsOf = (text: string): Set<string> => new Set(Array.from(text.toLowerCase().matchAll(/[\p{L}\p{N}]{3,}/gu), (m) => m[0]));

/**
 * Share of the source's distinct words that the PDF text has (1: every one). The PDF text is read
 * with its whitespace and hyphens removed, so a word a narrow table cell broke over two lines counts
 * (read it with pdftotext -raw, in content order, so the two halves are adjacent).
 */
export function wordRecall(source: string, pdf: string): { recall: number; missing: string[] } {
  const expected = wordsOf(source);
  const joined = pdf.toLowerCase().replace(/[\s\u00ad‐-]+/g, '');
  const missing = [...expected].filter((w) => !joined.includes(w));
  return { recall: expected.size === 0 ? 0 : 1 - missing.length / expected.size, missing };
}

/**
 * Streams of an OLE compound file (MS-CFB), by name: the container of Word 97 and PowerPoint 97
 * files. Enough for the test fixtures: the FAT from the header's DIFAT and its chain, the directory,
 * the mini stream for streams under the cutoff.
 */
export function cfbStreams(data: Buffer): Map<string, Buffer> {
  if (data.readUInt32LE(0) !== 0xe011cfd0 || data.readUInt32LE(4) !== 0xe11ab1a1) throw new Error('not a compound file');
  const sectorSize = 1 << data.readUInt16LE(0x1e);
  const miniSize = 1 << data.readUInt16LE(0x20);
  const cutoff = data.readUInt32LE(0x38);
  const sector = (n: number) => data.subarray((n + 1) * sectorSize, (n + 2) * sectorSize);
  const fatSectors: number[] = [];
  for (let i = 0; i < 109; i++) fatSectors.push(data.readUInt32LE(0x4c + i * 4));
  for (let next = data.readUInt32LE(0x44), n = data.readUInt32LE(0x48); n > 0 && next < 0xfffffffa; n--) {
    const s = sector(next);
    for (let i = 0; i < sectorSize / 4 - 1; i++) fatSectors.push(s.readUInt32LE(i * 4));
    next = s.readUInt32LE(sectorSize - 4);
  }
  const fat = Buffer.concat(fatSectors.filter((n) => n < 0xfffffffa).map(sector));
  const chain = (start: number, table: Buffer, read: (n: number) => Buffer) => {
    const parts: Buffer[] = [];
    for (let n = start, guard = 0; n < 0xfffffffa && guard < table.length / 4; n = table.readUInt32LE(n * 4), guard++) parts.push(read(n));
    return Buffer.concat(parts);
  };
  const directory = chain(data.readUInt32LE(0x30), fat, sector);
  const miniFat = data.readUInt32LE(0x40) > 0 ? chain(data.readUInt32LE(0x3c), fat, sector) : Buffer.alloc(0);
  const root = directory.subarray(0, 128);
  const miniStream = chain(root.readUInt32LE(116), fat, sector);
  const streams = new Map<string, Buffer>();
  for (let offset = 0; offset + 128 <= directory.length; offset += 128) {
    const entry = directory.subarray(offset, offset + 128);
    if (entry[66] !== 2) continue; // stream objects only
    const name = entry.subarray(0, Math.max(0, entry.readUInt16LE(64) - 2)).toString('utf16le');
    const size = entry.readUInt32LE(120);
    const start = entry.readUInt32LE(116);
    const bytes = size < cutoff ? chain(start, miniFat, (n) => miniStream.subarray(n * miniSize, (n + 1) * miniSize)) : chain(start, fat, sector);
    streams.set(name, bytes.subarray(0, size));
  }
  return streams;
}

/**
 * Text of a Word 97–2003 document or template (MS-DOC), from its piece table: every story (main
 * text, footnotes, headers, comments, text boxes), field instructions left out (their results kept),
 * control marks (cell ends, paragraph marks, objects) as spaces.
 */
export function wordBinaryText(data: Buffer): string {
  const streams = cfbStreams(data);
  const word = streams.get('WordDocument');
  if (!word || word.readUInt16LE(0) !== 0xa5ec) throw new Error('no Word document stream');
  const table = streams.get(word.readUInt16LE(0x0a) & 0x0200 ? '1Table' : '0Table')!;
  const csw = word.readUInt16LE(32);
  const cslw = word.readUInt16LE(34 + csw * 2);
  const fcLcb = 34 + csw * 2 + 2 + cslw * 4 + 2;
  const fcClx = word.readUInt32LE(fcLcb + 33 * 8);
  let at = fcClx;
  while (table[at] === 0x01) at += 3 + table.readUInt16LE(at + 1); // Prc: property modifiers
  if (table[at] !== 0x02) throw new Error('no piece table');
  const pieces = (table.readUInt32LE(at + 1) - 4) / 12;
  const plc = at + 5;
  let text = '';
  for (let i = 0; i < pieces; i++) {
    const chars = table.readUInt32LE(plc + (i + 1) * 4) - table.readUInt32LE(plc + i * 4);
    const fc = table.readUInt32LE(plc + (pieces + 1) * 4 + i * 8 + 2);
    if (fc & 0x40000000) {
      const start = (fc & ~0x40000000) / 2;
      text += new TextDecoder('windows-1252').decode(word.subarray(start, start + chars));
    } else text += word.subarray(fc, fc + chars * 2).toString('utf16le');
  }
  let out = '';
  const fields: boolean[] = []; // per open field: still in its instruction
  for (const ch of text) {
    const code = ch.charCodeAt(0);
    if (code === 0x13) fields.push(true);
    else if (code === 0x14) fields[fields.length - 1] = false;
    else if (code === 0x15) fields.pop();
    else if (!fields.includes(true)) out += code < 0x20 ? ' ' : ch;
  }
  return out;
}

/**
 * Text a PowerPoint 97–2003 presentation (MS-PPT) shows on its slides: text atoms in the slides'
 * own records and in the document's slide list (placeholder text), not those of masters or notes.
 */
export function pptBinaryText(data: Buffer): string {
  const stream = cfbStreams(data).get('PowerPoint Document');
  if (!stream) throw new Error('no PowerPoint Document stream');
  const runs: string[] = [];
  const walk = (start: number, end: number, onSlide: boolean) => {
    for (let at = start; at + 8 <= end; ) {
      const verInstance = stream.readUInt16LE(at);
      const type = stream.readUInt16LE(at + 2);
      const length = stream.readUInt32LE(at + 4);
      const body = at + 8;
      if ((verInstance & 0x0f) === 0x0f) {
        // Slide (0x03EE) or the slides' SlideListWithText (0x0FF0, instance 0); masters and notes are other types/instances.
        const slideText = type === 0x03ee || (type === 0x0ff0 && verInstance >> 4 === 0);
        walk(body, Math.min(end, body + length), onSlide || slideText);
      } else if (onSlide && type === 0x0fa0) runs.push(stream.subarray(body, body + length).toString('utf16le'));
      else if (onSlide && type === 0x0fa8) runs.push(stream.subarray(body, body + length).toString('latin1'));
      at = body + length;
    }
  };
  walk(0, stream.length, false);
  return runs.join(' ').replace(/[\r\v]/g, ' ');
}
