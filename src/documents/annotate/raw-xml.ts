import { SaxesParser, type SaxesAttributeNS, type SaxesTagNS } from 'saxes';
import { DomainError, ErrorCode } from '../../errors/domain-error.js';
import { LAYOUT_BUDGET, layoutTooComplex } from '../docx-pdf/layout-budget.js';
import { W_NS } from './dom.js';
import { escapeXml } from '../ooxml/xml-text.js';

/**
 * Checks the value of a `{@raw}` tag: well-formed WordprocessingML paragraphs, tables or runs built
 * only from the elements below, with only w: attributes (and xml:space). Fields (w:fldSimple,
 * w:instrText: INCLUDETEXT and friends), relationships (r:id, r:embed: external links, images),
 * section properties, embedded objects and anything outside the w: namespace are refused.
 *
 * Parsed with saxes, a strict XML 1.0 parser (xmldom keeps a bare `&`, `]]>` in text or `<a/ >` as
 * if they were well-formed), and written out again from what was parsed: what is inserted is
 * exactly the elements, attributes and text that were checked (comments dropped, runs wrapped in a
 * paragraph).
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
/**
 * Deepest element nesting of a value: a table nested LAYOUT_BUDGET.maxTableNesting deep needs about
 * three elements per level. Bounded so that namespace resolution, which reads the stack of open
 * elements, stays linear in the value's length (20 000 nested tables took 49 s unbounded).
 */
export const MAX_RAW_XML_DEPTH = 4 * LAYOUT_BUDGET.maxTableNesting;
const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const XMLNS_NS = 'http://www.w3.org/2000/xmlns/';
const MAX_RAW_XML_CHARS = 1_000_000;
/** Characters XML 1.0 does not allow, written directly or as a character reference (&#0;). */
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

class RawXmlRefused extends Error {}

function rawXmlInvalid(tag: string, issue: string): DomainError {
  return new DomainError(ErrorCode.RAW_XML_INVALID,
    `The value of {@${tag}} is not raw XML docproc inserts: ${issue}. Send WordprocessingML paragraphs (<w:p>), tables (<w:tbl>) or runs (<w:r>) with formatting only.`,
    { details: [{ field: tag, issue }] });
}

const rawXmlTooDeep = () =>
  new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX, `A {@raw} value nests elements more than ${MAX_RAW_XML_DEPTH} deep; flatten it (tables nest at most ${LAYOUT_BUDGET.maxTableNesting} deep).`, {
    extensions: { limit: { name: 'annotate.maxRawXmlDepth', max: MAX_RAW_XML_DEPTH } },
  });


interface OpenElement {
  local: string;
  insideProperties: boolean;
  blockChildren: number;
  cells: number;
}

function attributesXml(tag: SaxesTagNS): string {
  let xml = '';
  for (const attribute of Object.values(tag.attributes) as SaxesAttributeNS[]) {
    if (attribute.uri === XMLNS_NS || (attribute.prefix === '' && attribute.local === 'xmlns')) {
      if (attribute.value !== W_NS) throw new RawXmlRefused(`the namespace declaration ${attribute.name} is not allowed`);
      continue;
    }
    if (NOT_XML_CHAR.test(attribute.value)) throw new RawXmlRefused(`the attribute ${attribute.name} holds a character XML does not allow`);
    if (attribute.uri === W_NS) xml += ` w:${attribute.local}="${escapeXml(attribute.value)}"`;
    else if (attribute.uri === XML_NS && attribute.local === 'space') xml += ` xml:space="${escapeXml(attribute.value)}"`;
    else throw new RawXmlRefused(`the attribute ${attribute.name} on <${tag.name}> is not allowed`);
  }
  return xml;
}

/** Parses, checks and writes out the value; throws RawXmlRefused with the issue. */
function rewrite(value: string): { xml: string; runLevel: boolean } {
  const parser = new SaxesParser({ xmlns: true, fragment: true, additionalNamespaces: { w: W_NS }, position: false });
  const stack: OpenElement[] = [];
  const topLevel = new Set<'run' | 'block'>();
  let tables = 0;
  let xml = '';
  let syntaxError: string | null = null;
  const refuse = (issue: string): never => {
    throw new RawXmlRefused(issue);
  };
  const text = (content: string) => {
    if (NOT_XML_CHAR.test(content)) refuse('the text holds a character XML does not allow (a control character or a lone surrogate)');
    const parent = stack[stack.length - 1];
    if (parent?.local === 't') xml += escapeXml(content);
    else if (content.trim() !== '') refuse(parent ? `text must be inside <w:t>, not directly in <w:${parent.local}>` : 'text must be inside <w:r><w:t>…</w:t></w:r>');
  };
  parser.on('error', (error) => {
    syntaxError ??= error.message;
  });
  parser.on('doctype', () => refuse('document type declarations are not allowed'));
  parser.on('processinginstruction', () => refuse('processing instructions are not allowed'));
  parser.on('xmldecl', () => refuse('an XML declaration is not allowed inside a document'));
  parser.on('text', text);
  parser.on('cdata', text);
  parser.on('opentag', (tag: SaxesTagNS) => {
    if (stack.length >= MAX_RAW_XML_DEPTH) throw rawXmlTooDeep();
    if (tag.local === 'tbl' && ++tables > LAYOUT_BUDGET.maxTableNesting) throw layoutTooComplex('maxTableNesting');
    const parent = stack[stack.length - 1];
    const parentName = parent?.local ?? '#root';
    const local = tag.local;
    if (tag.uri !== W_NS) refuse(`<${tag.name}> is not a WordprocessingML (w:) element`);
    const insideProperties = parent?.insideProperties ?? false;
    const allowed = insideProperties ? PROPERTIES.has(local) || (local === 'rPr' && parentName === 'pPr') : STRUCTURE[local]?.includes(parentName);
    if (!allowed) refuse(`<w:${local}> is not allowed ${parentName === '#root' ? 'at the top level' : `inside <w:${parentName}>`}`);
    if (!parent) topLevel.add(RUN_LEVEL.has(local) ? 'run' : 'block');
    if (parent && (local === 'p' || local === 'tbl')) parent.blockChildren++;
    if (parent && local === 'tc') parent.cells++;
    xml += `<w:${local}${attributesXml(tag)}${tag.isSelfClosing ? '/>' : '>'}`;
    stack.push({ local, insideProperties: insideProperties || PROPERTY_CONTAINERS.has(local), blockChildren: 0, cells: 0 });
  });
  parser.on('closetag', (tag: SaxesTagNS) => {
    const element = stack.pop()!;
    if (element.local === 'tbl') tables--;
    if (element.local === 'tc' && element.blockChildren === 0) refuse('every <w:tc> needs at least one <w:p>');
    if (element.local === 'tr' && element.cells === 0) refuse('every <w:tr> needs at least one <w:tc>');
    if (!tag.isSelfClosing) xml += `</w:${element.local}>`;
  });
  parser.write(value).close();
  if (syntaxError) refuse(`it is not well-formed XML (${String(syntaxError).split('\n')[0]!.slice(0, 200)})`);
  if (topLevel.size > 1) refuse('runs and paragraphs cannot be mixed at the top level');
  return { xml, runLevel: topLevel.has('run') };
}

/** The XML to put in place of the `{@tag}` paragraph, or a 422 RAW_XML_INVALID naming what is wrong. */
export function checkRawXml(value: unknown, tag: string): string {
  if (typeof value !== 'string') throw rawXmlInvalid(tag, `expected a string, got ${value === null ? 'null' : typeof value}`);
  if (value.trim() === '') return '';
  if (value.length > MAX_RAW_XML_CHARS) throw rawXmlInvalid(tag, `it is longer than ${MAX_RAW_XML_CHARS} characters`);
  if (NOT_XML_CHAR.test(value)) throw rawXmlInvalid(tag, 'it holds a character XML does not allow (a control character or a lone surrogate)');
  let result: { xml: string; runLevel: boolean };
  try {
    result = rewrite(value);
  } catch (error) {
    if (error instanceof RawXmlRefused) throw rawXmlInvalid(tag, error.message);
    if (error instanceof DomainError) throw error; // a budget refusal (too deep)
    // saxes throws its own Error for some syntax errors once the error handler has run.
    throw rawXmlInvalid(tag, `it is not well-formed XML (${(error as Error).message.split('\n')[0]!.slice(0, 200)})`);
  }
  return result.runLevel ? `<w:p>${result.xml}</w:p>` : result.xml;
}
