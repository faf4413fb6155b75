import type { Element } from '@xmldom/xmldom';
import fc from 'fast-check';
import PizZip from 'pizzip';
import { describe, expect, it } from 'vitest';
import { scrubExternalReferences, scrubSvg } from '../../../src/documents/ooxml/scrub.js';
import { parseXml } from '../../../src/documents/ooxml/xml.js';

/** Every reference left in an SVG: href/src attributes and CSS url()/@import. */
function references(svg: string): string[] {
  const doc = parseXml(svg);
  const out: string[] = [];
  const walk = (el: Element) => {
    for (const attr of Array.from(el.attributes)) {
      const local = (attr.localName ?? attr.name).toLowerCase();
      if (local === 'href' || local === 'src') out.push(attr.value);
      for (const m of attr.value.matchAll(/url\(([^)]*)\)/g)) out.push(m[1]!);
    }
    if (el.localName === 'style') for (const m of (el.textContent ?? '').matchAll(/url\(([^)]*)\)|@import/g)) out.push(m[1] ?? '@import');
    for (const child of Array.from(el.childNodes)) if (child.nodeType === 1) walk(child as Element);
  };
  walk(doc.documentElement as unknown as Element);
  return out;
}

const safe = (ref: string) => ref.trim().replace(/^['"]/, '').startsWith('#') || /^data:image\/(png|jpe?g|gif|bmp|webp)[;,]/i.test(ref.trim());

const HOSTILE = [
  'file:///etc/passwd',
  'FILE:///data/key.pem',
  '/etc/hostname',
  '../../secret.svg',
  '\\\\host\\share\\x.png',
  'smb://host/share/x.png',
  'http://169.254.169.254/latest/meta-data',
  'data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciPjxpbWFnZSBocmVmPSJmaWxlOi8vL2V0Yy9wYXNzd2QiLz48L3N2Zz4=',
  'jar:file:///x.zip!/a.png',
  'vnd.sun.star.pkg://x',
];

describe('scrubSvg', () => {
  it.each(HOSTILE)('removes %s from <image>, <use>, CSS and presentation attributes', (target) => {
    const svg =
      `<?xml version="1.0"?><?xml-stylesheet href="${target}" type="text/css"?>` +
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">' +
      `<style>@import url("${target}"); rect { fill: url(${target}); } .ok { fill: url(#grad) }</style>` +
      `<image xlink:href="${target}"/><image href="${target}"/><use xlink:href="${target}#a"/><feImage href="${target}"/>` +
      `<rect fill="url(${target})" style="background: url('${target}')"/><a xlink:href="#local"><text>kept</text></a>` +
      `<foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="${target}"/></foreignObject><script href="${target}"/>` +
      '</svg>';
    const { svg: out, removed } = scrubSvg(svg);
    expect(removed).toBeGreaterThan(0);
    expect(references(out).filter((r) => !safe(r))).toEqual([]);
    expect(out).not.toContain('xml-stylesheet');
    expect(out).toContain('kept');
    expect(out).toContain('#local');
  });

  it('an SVG with a DOCTYPE and entities loses them; one that no longer parses becomes an empty picture', () => {
    const xxe = '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg"><text>&x;</text></svg>';
    const { svg } = scrubSvg(xxe);
    expect(svg).not.toContain('passwd');
    expect(svg).not.toContain('ENTITY');
    expect(scrubSvg('<svg><not closed').svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"[^>]*\/>$/);
  });

  it('leaves a harmless SVG untouched (fragments and raster data URIs stay)', () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><defs><linearGradient id="g"/></defs><rect fill="url(#g)"/><image href="data:image/png;base64,iVBORw0KGgo="/><use xlink:href="#g"/></svg>';
    expect(scrubSvg(svg).removed).toBe(0);
  });

  it('property: whatever the reference, none that leaves the picture survives', () => {
    const reference = fc.oneof(fc.constantFrom(...HOSTILE), fc.webUrl(), fc.string({ maxLength: 40 }).map((s) => s.replace(/[<>&"]/g, '')));
    fc.assert(
      fc.property(reference, fc.constantFrom('image', 'use', 'feImage', 'a', 'pattern'), fc.constantFrom('href', 'xlink:href', 'src'), (ref, element, attribute) => {
        const svg = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><${element} ${attribute}="${ref}" style="fill:url(${ref.replace(/[()]/g, '')})"/></svg>`;
        expect(references(scrubSvg(svg).svg).filter((r) => !safe(r))).toEqual([]);
      }),
      { seed: 16, numRuns: 300 },
    );
  });
});

describe('scrubExternalReferences', () => {
  const docx = (rels: string, extra: Record<string, string> = {}) => {
    const zip = new PizZip();
    zip.file('[Content_Types].xml', '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="svg" ContentType="image/svg+xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>');
    zip.file('_rels/.rels', '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>');
    zip.file('word/document.xml', '<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p/></w:body></w:document>');
    zip.file('word/_rels/document.xml.rels', `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rels}</Relationships>`);
    for (const [name, text] of Object.entries(extra)) zip.file(name, text);
    return zip.generate({ type: 'nodebuffer' });
  };
  const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

  it('neutralises external loads that are not web URLs, keeps hyperlinks and web images', () => {
    const input = docx(
      `<Relationship Id="a" Type="${R}/image" Target="file:///etc/passwd" TargetMode="External"/>` +
        `<Relationship Id="b" Type="${R}/attachedTemplate" Target="\\\\host\\share\\t.dotm" TargetMode="External"/>` +
        `<Relationship Id="c" Type="${R}/oleObject" Target="/data/key.pem" TargetMode="External"/>` +
        `<Relationship Id="d" Type="${R}/hyperlink" Target="file:///somewhere" TargetMode="External"/>` +
        `<Relationship Id="e" Type="${R}/image" Target="https://example.com/x.png" TargetMode="External"/>`,
      { 'word/media/p.svg': '<svg xmlns="http://www.w3.org/2000/svg"><image href="file:///etc/passwd"/></svg>', 'word/settings.xml': '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x/>' },
    );
    const { docx: out, removed } = scrubExternalReferences(input);
    expect(removed).toBe(5);
    const zip = new PizZip(out);
    const rels = zip.file('word/_rels/document.xml.rels')!.asText();
    expect(rels).not.toMatch(/passwd|share|key\.pem/);
    expect(rels).toContain('file:///somewhere');
    expect(rels).toContain('https://example.com/x.png');
    expect(zip.file('word/media/p.svg')!.asText()).not.toContain('passwd');
    expect(zip.file('word/settings.xml')!.asText()).not.toContain('DOCTYPE');
  });

  it('returns the very same bytes when there is nothing to remove', () => {
    const input = docx(`<Relationship Id="d" Type="${R}/hyperlink" Target="https://example.com" TargetMode="External"/>`);
    expect(scrubExternalReferences(input).docx).toBe(input);
  });
});
