import { execFileSync } from 'node:child_process';
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
