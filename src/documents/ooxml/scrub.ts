import type { Element, Node } from '@xmldom/xmldom';
import { OpcPackage } from './package.js';
import { ELEMENT_NODE, PROCESSING_INSTRUCTION_NODE, decodeXmlBytes, parseXml, serializeXml } from './xml.js';

/**
 * Removes what could make LibreOffice read anything outside the document, before it sees the DOCX
 * (independently of its jail and profile): references inside SVG pictures (<image>, <use>, CSS
 * url() and @import, stylesheets, entities, foreignObject, script), DOCTYPEs in any XML part, and
 * external relationships that load content (images, OLE, templates, sub-documents, frames, altChunks)
 * from anywhere but the web. Hyperlinks are kept: nothing loads them.
 */

export interface ScrubResult {
  docx: Buffer;
  /** References removed or neutralised (0: the input came back unchanged). */
  removed: number;
}

const EMPTY_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>';
const NEUTRAL_TARGET = 'about:blank';
const HYPERLINK_TYPE = /\/hyperlink$/;
const DOCTYPE = '<!DOCTYPE';
/**
 * The text without its DOCTYPEs (XML names them in upper case), each with its internal subset
 * (entities): from `<!DOCTYPE` to the first `>` outside `[…]`. One scan of the text: it stops at the
 * first DOCTYPE that does not end (`unterminated`), which no XML reader takes, leaving the rest as it is.
 */
export function removeDoctypes(text: string): { text: string; removed: number; unterminated: boolean } {
  let kept = '';
  let from = 0;
  let removed = 0;
  for (let start = text.indexOf(DOCTYPE); start >= 0; start = text.indexOf(DOCTYPE, from)) {
    const end = doctypeEnd(text, start + DOCTYPE.length);
    if (end < 0) return { text: kept + text.slice(from), removed, unterminated: true };
    kept += text.slice(from, start);
    from = end;
    removed++;
  }
  return { text: removed ? kept + text.slice(from) : text, removed, unterminated: false };
}

/** Where a DOCTYPE whose body starts at `at` ends (after its `>`), or -1 when it does not. */
function doctypeEnd(text: string, at: number): number {
  const delimiter = /[[>]/g;
  delimiter.lastIndex = at;
  for (let found = delimiter.exec(text); found; found = delimiter.exec(text)) {
    if (found[0] === '>') return found.index + 1;
    const close = text.indexOf(']', found.index + 1);
    if (close < 0) return -1;
    delimiter.lastIndex = close + 1;
  }
  return -1;
}
/** Raster data URIs are self-contained; an SVG data URI could hold references of its own. */
const SAFE_DATA_URI = /^data:image\/(png|jpe?g|gif|bmp|webp)[;,]/i;
/** CSS that loads something: @import rules and url() other than a fragment. */
const unsafeCss = () => /@import[^;]*;?|url\(\s*(?!['"]?#)[^)]*(?:\)|$)/gi;

const isSafeReference = (value: string): boolean => {
  const v = value.trim();
  return v.startsWith('#') || SAFE_DATA_URI.test(v);
};

/** An SVG with every reference to outside content removed; unparseable SVG becomes an empty picture. */
export function scrubSvg(text: string): { svg: string; removed: number } {
  const withoutDoctype = removeDoctypes(text);
  if (withoutDoctype.unterminated) return { svg: EMPTY_SVG, removed: withoutDoctype.removed + 1 };
  let removed = withoutDoctype.removed;
  let doc;
  try {
    doc = parseXml(withoutDoctype.text);
  } catch {
    return { svg: EMPTY_SVG, removed: removed + 1 };
  }
  const visit = (node: Node, depth: number): void => {
    if (depth > 256) throw new Error('SVG nested too deeply');
    for (let child = node.firstChild; child; ) {
      const next = child.nextSibling;
      if (child.nodeType === PROCESSING_INSTRUCTION_NODE) {
        node.removeChild(child);
        removed++;
      } else if (child.nodeType === ELEMENT_NODE) {
        const el = child as Element;
        const name = el.localName?.toLowerCase();
        if (name === 'script' || name === 'foreignobject') {
          node.removeChild(el);
          removed++;
        } else {
          removed += scrubElement(el);
          visit(el, depth + 1);
        }
      }
      child = next;
    }
  };
  try {
    visit(doc, 0);
  } catch {
    return { svg: EMPTY_SVG, removed: removed + 1 };
  }
  return { svg: serializeXml(doc), removed };
}

function scrubElement(el: Element): number {
  let removed = 0;
  for (const attr of Array.from(el.attributes)) {
    const local = (attr.localName ?? attr.name).toLowerCase();
    const refersOut = (local === 'href' || local === 'src') && !isSafeReference(attr.value);
    const cssOut = attr.value.replace(unsafeCss(), '') !== attr.value;
    if (refersOut || cssOut) {
      el.removeAttributeNode(attr);
      removed++;
    }
  }
  const css = el.localName?.toLowerCase() === 'style' ? el.textContent ?? '' : '';
  if (css && css.replace(unsafeCss(), '') !== css) {
    el.textContent = css.replace(unsafeCss(), '');
    removed++;
  }
  return removed;
}

const isSvgPart = (pkg: OpcPackage, part: string) => /\.svg$/i.test(part) || pkg.contentType(part) === 'image/svg+xml';

/** External relationships that make an office suite load something (not hyperlinks), aimed off the web. */
function scrubRelationships(text: string): { xml: string; removed: number } | undefined {
  if (!/TargetMode\s*=\s*["']External["']/i.test(text) && !text.includes('<!DOCTYPE')) return undefined;
  const withoutDoctype = removeDoctypes(text);
  if (withoutDoctype.unterminated) throw new Error('a DOCTYPE without its end');
  let removed = withoutDoctype.removed;
  const doc = parseXml(withoutDoctype.text);
  for (const rel of Array.from(doc.getElementsByTagNameNS('*', 'Relationship'))) {
    if (rel.getAttribute('TargetMode') !== 'External' || HYPERLINK_TYPE.test(rel.getAttribute('Type') ?? '')) continue;
    const target = (rel.getAttribute('Target') ?? '').trim();
    if (/^https?:\/\//i.test(target) || target === NEUTRAL_TARGET) continue;
    rel.setAttribute('Target', NEUTRAL_TARGET);
    removed++;
  }
  return removed ? { xml: serializeXml(doc), removed } : undefined;
}

/** Cheap pre-check on the raw bytes: UTF-16 parts (rare) are always decoded and looked at. */
const mayHoldDoctype = (bytes: Uint8Array): boolean =>
  (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff) || Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes('<!DOCTYPE');

/** Scrubs a DOCX (see the module comment). Returns the input itself when nothing needed removing. */
export function scrubExternalReferences(docx: Buffer): ScrubResult {
  const pkg = OpcPackage.open(docx, { tolerant: true });
  const removed = scrubPackage(pkg);
  return removed ? { docx: pkg.write(), removed } : { docx, removed: 0 };
}

/** The same on a package already open (opened with `tolerant`), in place; returns the references removed. */
export function scrubPackage(pkg: OpcPackage): number {
  let removed = 0;
  for (const part of pkg.partNames()) {
    const bytes = pkg.bytes(part);
    if (!bytes) continue;
    if (isSvgPart(pkg, part)) {
      const result = scrubSvg(decodeXmlBytes(bytes));
      if (result.removed) {
        pkg.setText(part, result.svg);
        removed += result.removed;
      }
    } else if (/\.rels$/i.test(part)) {
      let result;
      try {
        result = scrubRelationships(decodeXmlBytes(bytes));
      } catch {
        continue; // not well-formed: LibreOffice will not read it either
      }
      if (result) {
        pkg.setText(part, result.xml);
        removed += result.removed;
      }
    } else if (/\.xml$/i.test(part) && mayHoldDoctype(bytes)) {
      const text = decodeXmlBytes(bytes);
      const cleaned = removeDoctypes(text);
      if (cleaned.removed) {
        pkg.setText(part, cleaned.text);
        removed++;
      }
    }
  }
  return removed;
}
