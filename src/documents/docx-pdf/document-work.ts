import type { DocumentWork } from '../../office/bridge-protocol.js';
import type { OpcPackage } from '../ooxml/package.js';
import { decodeXmlBytes } from '../ooxml/xml.js';

/**
 * What LibreOffice must do to a DOCX besides loading and exporting it, read from the package in
 * Node: recompute fields, update indexes. A document needing neither is loaded read-only and
 * exported straight away (most of the cost of a refresh is paid whether or not there is anything
 * to refresh).
 */

/** Field types that make an index LibreOffice has to rebuild. */
const INDEX_FIELDS = new Set(['TOC', 'INDEX', 'TOA', 'BIBLIOGRAPHY']);
/**
 * Field types a refresh does not change: LibreOffice computes page numbers at layout time (PAGE,
 * NUMPAGES, SECTIONPAGES), and the rest show what is stored or are markers. Any other type, an
 * unknown one included, gets the refresh (test/integration/office/document-work.test.ts checks
 * on every corpus document that the fast path renders the same text as the full one).
 */
const STATIC_FIELDS = new Set([
  'PAGE', 'NUMPAGES', 'SECTIONPAGES',
  'HYPERLINK', 'FORMTEXT', 'FORMCHECKBOX', 'FORMDROPDOWN', 'MERGEFIELD', 'ADDIN', 'SYMBOL', 'EQ',
  'MACROBUTTON', 'GOTOBUTTON', 'PRIVATE', 'XE', 'TC', 'RD', 'TA', 'SHAPE', 'EMBED',
]);

const WORDPROCESSINGML_PART = /^application\/vnd\.openxmlformats-officedocument\.wordprocessingml\.[a-z.]+\+xml$/i;
/** The tokens of fields: complex-field characters, instruction text, simple fields (any namespace prefix). */
const FIELD_TOKENS = /<(?:[\w.-]+:)?fldChar\b[^<>]*?fldCharType\s*=\s*["'](begin|separate|end)["']|<(?:[\w.-]+:)?instrText\b[^<>]*?(?:\/>|>([^<]*)<)|<(?:[\w.-]+:)?fldSimple\b[^<>]*?\binstr\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

/** The field types (first word of each field code, upper case) used anywhere in the WordprocessingML parts. */
export function fieldTypes(pkg: OpcPackage): Set<string> {
  const types = new Set<string>();
  for (const part of pkg.partNames()) {
    if (!WORDPROCESSINGML_PART.test(pkg.contentType(part) ?? '')) continue;
    const bytes = pkg.bytes(part);
    if (bytes) for (const type of fieldTypesIn(decodeXmlBytes(bytes))) types.add(type);
  }
  return types;
}

const typeOf = (code: string): string | undefined => /^\s*([^\s\\]+)/.exec(decodeEntities(code))?.[1]?.toUpperCase();
const decodeEntities = (text: string) => text.replace(/&(lt|gt|amp|quot|apos);/g, (_, e: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" })[e]!);

/** Field types of one part's XML. Nested fields (a field inside another's code) are counted too. */
export function fieldTypesIn(xml: string): Set<string> {
  const types = new Set<string>();
  /** Open complex fields: their code so far, and whether the result part has begun. */
  const open: { code: string; inResult: boolean }[] = [];
  for (const match of xml.matchAll(FIELD_TOKENS)) {
    const [, charType, instrText, simpleDouble, simpleSingle] = match;
    if (charType === 'begin') open.push({ code: '', inResult: false });
    else if (charType === 'separate') {
      const field = open.at(-1);
      if (field && !field.inResult) {
        field.inResult = true;
        const type = typeOf(field.code);
        if (type) types.add(type);
      }
    } else if (charType === 'end') {
      const field = open.pop();
      if (field && !field.inResult) {
        const type = typeOf(field.code);
        if (type) types.add(type);
      }
    } else if (instrText !== undefined) {
      const field = open.at(-1);
      if (field && !field.inResult) field.code += instrText;
    } else {
      const type = typeOf(simpleDouble ?? simpleSingle ?? '');
      if (type) types.add(type);
    }
  }
  return types;
}

export function documentWork(pkg: OpcPackage): DocumentWork {
  const types = fieldTypes(pkg);
  const indexes = [...types].some((t) => INDEX_FIELDS.has(t));
  const fields = [...types].some((t) => !INDEX_FIELDS.has(t) && !STATIC_FIELDS.has(t));
  return { fields, indexes };
}
