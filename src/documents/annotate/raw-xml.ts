import { DOMParser } from '@xmldom/xmldom';
import { ErrorCode, unprocessable, type AppError } from '../../errors/app-error.js';
import { elementChildren, serializeFragment, W_NS, type Element, type Node } from './dom.js';

/**
 * Checks the value of a `{@raw}` tag: well-formed WordprocessingML paragraphs, tables or runs built
 * only from the elements below, with only w: attributes (and xml:space). Fields (w:fldSimple,
 * w:instrText: INCLUDETEXT and friends), relationships (r:id, r:embed: external links, images),
 * section properties, embedded objects and anything outside the w: namespace are refused.
 * Returns the XML to insert: the parsed elements serialized again (comments dropped), runs wrapped in a paragraph.
 */

/** Structural elements and the parents they may have ('#root' = the value's top level). */
const STRUCTURE: Record<string, string[]> = {
  p: ['#root', 'tc'],
  tbl: ['#root', 'tc'],
  tr: ['tbl'],
  tc: ['tr'],
  tblGrid: ['tbl'],
  gridCol: ['tblGrid'],
  hyperlink: ['#root', 'p'],
  r: ['#root', 'p', 'hyperlink'],
  t: ['r'],
  tab: ['r'],
  br: ['r'],
  cr: ['r'],
  noBreakHyphen: ['r'],
  softHyphen: ['r'],
  sym: ['r'],
  lastRenderedPageBreak: ['r'],
  pPr: ['p'],
  rPr: ['r', 'pPr'],
  tblPr: ['tbl'],
  trPr: ['tr'],
  tcPr: ['tc'],
};

const PROPERTY_CONTAINERS = new Set(['pPr', 'rPr', 'tblPr', 'trPr', 'tcPr']);

/** Elements allowed anywhere inside a property container (formatting only, nothing that links or runs). */
const PROPERTIES = new Set([
  // paragraph
  'pStyle', 'keepNext', 'keepLines', 'pageBreakBefore', 'widowControl', 'numPr', 'ilvl', 'numId', 'pBdr', 'top', 'left',
  'bottom', 'right', 'start', 'end', 'between', 'bar', 'shd', 'tabs', 'tab', 'spacing', 'ind', 'jc', 'outlineLvl',
  'contextualSpacing', 'suppressAutoHyphens', 'bidi', 'textAlignment', 'snapToGrid', 'mirrorIndents',
  // run
  'rStyle', 'rFonts', 'b', 'bCs', 'i', 'iCs', 'caps', 'smallCaps', 'strike', 'dstrike', 'outline', 'shadow', 'emboss',
  'imprint', 'noProof', 'vanish', 'color', 'w', 'kern', 'position', 'sz', 'szCs', 'highlight', 'u', 'effect', 'bdr',
  'vertAlign', 'rtl', 'cs', 'lang', 'em',
  // table, row, cell
  'tblStyle', 'tblW', 'tblInd', 'tblBorders', 'insideH', 'insideV', 'tblLayout', 'tblCellMar', 'tblLook', 'tblCellSpacing',
  'tblCaption', 'tblDescription', 'cantSplit', 'trHeight', 'tblHeader', 'tcW', 'gridSpan', 'vMerge', 'hMerge', 'tcBorders',
  'tl2br', 'tr2bl', 'noWrap', 'tcMar', 'textDirection', 'tcFitText', 'vAlign', 'hideMark',
]);

const RUN_LEVEL = new Set(['r', 'hyperlink']);
const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const XMLNS_NS = 'http://www.w3.org/2000/xmlns/';
const MAX_RAW_XML_CHARS = 1_000_000;

function rawXmlInvalid(tag: string, issue: string): AppError {
  return unprocessable(ErrorCode.RAW_XML_INVALID,
    `The value of {@${tag}} is not raw XML docproc inserts: ${issue}. Send WordprocessingML paragraphs (<w:p>), tables (<w:tbl>) or runs (<w:r>) with formatting only.`,
    { details: [{ field: tag, issue }] });
}

function checkAttributes(element: Element, tag: string): void {
  for (let i = 0; i < element.attributes.length; i++) {
    const attribute = element.attributes[i];
    if (attribute.namespaceURI === XMLNS_NS) {
      if (attribute.value !== W_NS) throw rawXmlInvalid(tag, `the namespace declaration ${attribute.name} is not allowed`);
      continue;
    }
    if (attribute.namespaceURI === W_NS || (attribute.namespaceURI === XML_NS && attribute.localName === 'space')) continue;
    throw rawXmlInvalid(tag, `the attribute ${attribute.name} on <${element.nodeName}> is not allowed`);
  }
}

function checkElement(element: Element, parent: string, insideProperties: boolean, tag: string): void {
  const name = element.localName ?? '';
  if (element.namespaceURI !== W_NS) throw rawXmlInvalid(tag, `<${element.nodeName}> is not a WordprocessingML (w:) element`);
  const allowed = insideProperties ? PROPERTIES.has(name) || (name === 'rPr' && parent === 'pPr') : STRUCTURE[name]?.includes(parent);
  if (!allowed) throw rawXmlInvalid(tag, `<w:${name}> is not allowed ${parent === '#root' ? 'at the top level' : `inside <w:${parent}>`}`);
  checkAttributes(element, tag);
  const properties = insideProperties || PROPERTY_CONTAINERS.has(name);
  for (let child: Node | null = element.firstChild, next: Node | null; child; child = next) {
    next = child.nextSibling;
    if (child.nodeType === 8) element.removeChild(child);
    else if (child.nodeType === 1) checkElement(child as Element, name, properties, tag);
    else if ((child.nodeType === 3 || child.nodeType === 4) && name !== 't' && child.nodeValue!.trim() !== '') {
      throw rawXmlInvalid(tag, `text must be inside <w:t>, not directly in <w:${name}>`);
    } else if (child.nodeType === 7) throw rawXmlInvalid(tag, 'processing instructions are not allowed');
  }
  if (name === 'tc' && !elementChildren(element).some((child) => child.localName === 'p' || child.localName === 'tbl')) {
    throw rawXmlInvalid(tag, 'every <w:tc> needs at least one <w:p>');
  }
  if (name === 'tr' && !elementChildren(element).some((child) => child.localName === 'tc')) throw rawXmlInvalid(tag, 'every <w:tr> needs at least one <w:tc>');
}

/** The XML to put in place of the `{@tag}` paragraph, or a 422 RAW_XML_INVALID naming what is wrong. */
export function checkRawXml(value: unknown, tag: string): string {
  if (typeof value !== 'string') throw rawXmlInvalid(tag, `expected a string, got ${value === null ? 'null' : typeof value}`);
  if (value.trim() === '') return '';
  if (value.length > MAX_RAW_XML_CHARS) throw rawXmlInvalid(tag, `it is longer than ${MAX_RAW_XML_CHARS} characters`);
  if (/<!DOCTYPE|<!ENTITY/i.test(value)) throw rawXmlInvalid(tag, 'document type declarations are not allowed');
  const problems: string[] = [];
  let root: Element | null = null;
  try {
    const doc = new DOMParser({ onError: (_level: string, message: string) => problems.push(message) })
      .parseFromString(`<root xmlns:w="${W_NS}">${value}</root>`, 'text/xml');
    root = doc.documentElement as Element | null;
  } catch (error) {
    problems.push((error as Error).message);
  }
  if (problems.length || !root) throw rawXmlInvalid(tag, `it is not well-formed XML (${(problems[0] ?? 'unreadable').split('\n')[0].slice(0, 200)})`);
  const top = elementChildren(root);
  for (let child: Node | null = root.firstChild; child; child = child.nextSibling) {
    if ((child.nodeType === 3 || child.nodeType === 4) && child.nodeValue!.trim() !== '') throw rawXmlInvalid(tag, 'text must be inside <w:r><w:t>…</w:t></w:r>');
    if (child.nodeType === 7) throw rawXmlInvalid(tag, 'processing instructions are not allowed');
  }
  for (const element of top) checkElement(element, '#root', false, tag);
  const runs = top.filter((element) => RUN_LEVEL.has(element.localName ?? ''));
  if (runs.length && runs.length !== top.length) throw rawXmlInvalid(tag, 'runs and paragraphs cannot be mixed at the top level');
  const xml = top.map((element) => serializeFragment(element)).join('');
  return runs.length ? `<w:p>${xml}</w:p>` : xml;
}
