import PizZip from 'pizzip';
import { rawZip, type RawEntry } from './raw-zip.js';

/**
 * Generators of hostile packages built from an honest DOCX (read with PizZip, an independent
 * reader, and written with the test ZIP writer, which writes what docproc's writer refuses).
 * Each one changes what LibreOffice shows (test/integration/verify/docx-attacks.test.ts proves it).
 */
const REL_BASE = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const MAIN_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml';
const FOOTNOTES_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml';

export function entriesOf(docx: Buffer): RawEntry[] {
  return Object.values(new PizZip(docx).files)
    .filter((f) => !f.dir)
    .map((f) => ({ name: f.name, data: Buffer.from(f.asUint8Array()) }));
}

const textOf = (entries: RawEntry[], name: string) => entries.find((e) => e.name === name)!.data.toString();
const replaced = (entries: RawEntry[], name: string, data: string) => entries.map((e) => (e.name === name ? { ...e, data } : e));
const renamed = (entries: RawEntry[], from: string, to: string) => entries.map((e) => (e.name === from ? { ...e, name: to } : e));
const override = (contentTypes: string, partName: string, type: string) =>
  contentTypes.replace('</Types>', `<Override PartName="${partName}" ContentType="${type}"/></Types>`);

/** The first w:t of a WordprocessingML part now says `text`. */
export const forgeText = (xml: string, text: string) => xml.replace(/(<w:t(?:\s[^>]*)?>)[^<]*(<\/w:t>)/, `$1${text}$2`);

/** The signed bytes move to `signedName` (e.g. word/Document.xml, word/document%2Exml) and a forgery takes word/document.xml. */
export function shadowedMainPart(signed: Buffer, signedName: string, forgery: string): Buffer {
  const entries = entriesOf(signed);
  const forged = forgeText(textOf(entries, 'word/document.xml'), forgery);
  return rawZip([...renamed(entries, 'word/document.xml', signedName), { name: 'word/document.xml', data: forged }]);
}

/** A second word/document.xml holding a forgery after the signed one (Python's zipfile and LibreOffice take the last). */
export function duplicatedMainPart(signed: Buffer, forgery: string): Buffer {
  const entries = entriesOf(signed);
  return rawZip([...entries, { name: 'word/document.xml', data: forgeText(textOf(entries, 'word/document.xml'), forgery) }]);
}

/** An officeDocument relationship with an unsigned Id, first in the signed _rels/.rels, to a forged main part. */
export function extraOfficeDocument(signed: Buffer, forgery: string): Buffer {
  const entries = entriesOf(signed);
  const relationship = `<Relationship Id="rIdForged" Type="${REL_BASE}/officeDocument" Target="word/forged.xml"/>`;
  const body = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>${forgery}</w:t></w:r></w:p></w:body></w:document>`;
  let out = replaced(entries, '_rels/.rels', textOf(entries, '_rels/.rels').replace(/(<Relationships[^>]*>)/, `$1${relationship}`));
  out = replaced(out, '[Content_Types].xml', override(textOf(out, '[Content_Types].xml'), '/word/forged.xml', MAIN_CONTENT_TYPE));
  return rawZip([...out, { name: 'word/forged.xml', data: body }]);
}

/**
 * A footnotes relationship with an unsigned Id, first in the signed word/_rels/document.xml.rels,
 * to a copy of the signed footnotes whose first footnote text says `forgery` (needs a DOCX with footnotes).
 */
export function extraFootnotes(signed: Buffer, forgery: string): Buffer {
  const entries = entriesOf(signed);
  const notes = textOf(entries, 'word/footnotes.xml');
  const firstNote = notes.indexOf('<w:footnote w:id="1"');
  const forged = notes.slice(0, firstNote) + forgeText(notes.slice(firstNote), forgery);
  const relationship = `<Relationship Id="rIdForged" Type="${REL_BASE}/footnotes" Target="forged-notes.xml"/>`;
  let out = replaced(entries, 'word/_rels/document.xml.rels', textOf(entries, 'word/_rels/document.xml.rels').replace(/(<Relationships[^>]*>)/, `$1${relationship}`));
  out = replaced(out, '[Content_Types].xml', override(textOf(out, '[Content_Types].xml'), '/word/forged-notes.xml', FOOTNOTES_CONTENT_TYPE));
  return rawZip([...out, { name: 'word/forged-notes.xml', data: forged }]);
}

/**
 * Issue 26's scrub bypass: the document shows word/media/s.svg, which is hostile, and a benign SVG
 * follows it under an equivalent name (`benignName`: word/media/S.svg or word/media/s%2Esvg). A
 * reader that folds names and keeps the last one scrubs the benign picture; LibreOffice, which
 * finds parts by exact name, renders the hostile one.
 */
export function collidingSvg(docx: Buffer, hostileSvg: string, benignName: string): Buffer {
  const benign = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10" fill="#0a0"/></svg>';
  const entries = entriesOf(docx);
  const relationship = `<Relationship Id="rIdSvg" Type="${REL_BASE}/image" Target="media/s.svg"/>`;
  const drawing =
    '<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"><wp:extent cx="4762500" cy="952500"/><wp:docPr id="901" name="s"/>' +
    '<a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">' +
    '<pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:nvPicPr><pic:cNvPr id="901" name="s.svg"/><pic:cNvPicPr/></pic:nvPicPr>' +
    '<pic:blipFill><a:blip xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" r:embed="rIdSvg"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>' +
    '<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="4762500" cy="952500"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>';
  let out = replaced(entries, 'word/_rels/document.xml.rels', textOf(entries, 'word/_rels/document.xml.rels').replace('</Relationships>', `${relationship}</Relationships>`));
  out = replaced(out, 'word/document.xml', textOf(out, 'word/document.xml').replace(/<w:body>/, `<w:body>${drawing}`));
  const types = textOf(out, '[Content_Types].xml');
  if (!/Extension="svg"/i.test(types)) out = replaced(out, '[Content_Types].xml', types.replace('</Types>', '<Default Extension="svg" ContentType="image/svg+xml"/></Types>'));
  return rawZip([...out, { name: 'word/media/s.svg', data: hostileSvg }, { name: benignName, data: benign }]);
}
