import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../../src/documents/ooxml/c14n.js';
import { descendants, parseXml } from '../../../src/documents/ooxml/xml.js';

const inclusive = { exclusive: false, withComments: false };
const exclusive = { exclusive: true, withComments: false };

describe('C14N 1.0 (examples from the W3C recommendations)', () => {
  it('start and end tags: namespace declarations first, attributes sorted by namespace URI then name, empty elements expanded (C14N §3.3, without its DTD default attribute: DTD defaults are not applied)', () => {
    const doc = parseXml(
      '<doc><e1   /><e2   ></e2><e3   name = "elem3"   id="elem3"   /><e4   name="elem4"   id="elem4"   ></e4>' +
        '<e5 a:attr="out" b:attr="sorted" attr2="all" attr="I\'m" xmlns:b="http://www.ietf.org" xmlns:a="http://www.w3.org" xmlns="http://example.org"/>' +
        '<e6 xmlns="" xmlns:a="http://www.w3.org"><e7 xmlns="http://www.ietf.org"><e8 xmlns="" xmlns:a="http://www.w3.org"><e9 xmlns="" xmlns:a="http://www.ietf.org"/></e8></e7></e6></doc>',
    );
    expect(canonicalize(doc, inclusive)).toBe(
      '<doc><e1></e1><e2></e2><e3 id="elem3" name="elem3"></e3><e4 id="elem4" name="elem4"></e4>' +
        '<e5 xmlns="http://example.org" xmlns:a="http://www.w3.org" xmlns:b="http://www.ietf.org" attr="I\'m" attr2="all" b:attr="sorted" a:attr="out"></e5>' +
        '<e6 xmlns:a="http://www.w3.org"><e7 xmlns="http://www.ietf.org"><e8 xmlns=""><e9 xmlns:a="http://www.ietf.org"></e9></e8></e7></e6></doc>',
    );
  });

  it('character escaping in text and attributes, CDATA as text, XML declaration and comments dropped', () => {
    const doc = parseXml('<?xml version="1.0"?>\n<!-- c --><doc a="&quot;x&#9;y&#10;&lt;&amp;" b=\'>\'><![CDATA[a<b>&c]]>t&gt;<!-- inner --><?pi  data?></doc>\n<!-- after -->');
    expect(canonicalize(doc, inclusive)).toBe('<doc a="&quot;x&#x9;y&#xA;&lt;&amp;" b=">">a&lt;b&gt;&amp;ct&gt;<?pi data?></doc>');
    expect(canonicalize(doc, { exclusive: false, withComments: true })).toBe(
      '<!-- c -->\n<doc a="&quot;x&#x9;y&#xA;&lt;&amp;" b=">">a&lt;b&gt;&amp;ct&gt;<!-- inner --><?pi data?></doc>\n<!-- after -->',
    );
  });

  it('document subset: inclusive keeps every in-scope namespace and inherited xml:*, exclusive only the visibly used ones (exc-c14n §2.2)', () => {
    const doc = parseXml(
      '<n0:local xmlns:n0="foo:bar" xmlns:n3="ftp://example.org" xml:space="preserve"><n1:elem2 xmlns:n1="http://example.net" xml:lang="en"><n3:stuff xmlns:n3="ftp://example.org"/></n1:elem2></n0:local>',
    );
    const elem2 = descendants(doc, 'http://example.net', 'elem2')[0]!;
    expect(canonicalize(elem2, inclusive)).toBe(
      '<n1:elem2 xmlns:n0="foo:bar" xmlns:n1="http://example.net" xmlns:n3="ftp://example.org" xml:lang="en" xml:space="preserve"><n3:stuff></n3:stuff></n1:elem2>',
    );
    expect(canonicalize(elem2, exclusive)).toBe('<n1:elem2 xmlns:n1="http://example.net" xml:lang="en"><n3:stuff xmlns:n3="ftp://example.org"></n3:stuff></n1:elem2>');
    expect(canonicalize(elem2, { ...exclusive, inclusivePrefixes: ['n0'] })).toBe(
      '<n1:elem2 xmlns:n0="foo:bar" xmlns:n1="http://example.net" xml:lang="en"><n3:stuff xmlns:n3="ftp://example.org"></n3:stuff></n1:elem2>',
    );
  });

  it('a default namespace inherited by the apex is rendered on it; xmlns="" only where it undoes a rendered default', () => {
    const doc = parseXml('<Signature xmlns="urn:dsig"><SignedInfo><a xmlns=""><b/></a></SignedInfo></Signature>');
    const signedInfo = descendants(doc, 'urn:dsig', 'SignedInfo')[0]!;
    expect(canonicalize(signedInfo, inclusive)).toBe('<SignedInfo xmlns="urn:dsig"><a xmlns=""><b></b></a></SignedInfo>');
    const a = descendants(doc, '', 'a')[0] ?? (signedInfo.firstChild as never);
    expect(canonicalize(a, inclusive)).toBe('<a><b></b></a>');
  });
});
