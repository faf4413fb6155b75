import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkRawXml } from '../../../src/documents/annotate/raw-xml.js';
import { DomainError } from '../../../src/errors/domain-error.js';

/**
 * Differential test of the {@raw} checker against Python's expat (an independent XML parser):
 * whatever expat finds not well-formed we refuse, and whatever we accept expat reads with the same
 * elements and the same text as the value sent (re-serializing changes nothing that shows).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 4242);
const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';

const EXPAT = `
import json, sys
from xml.parsers import expat
def read(xml):
    parser = expat.ParserCreate(namespace_separator=' ')
    names, texts, depth = [], [], [0]
    in_t = [0]
    def start(name, attrs):
        names.append(name)
        if name == '${W} t': in_t[0] += 1
    def end(name):
        if name == '${W} t': in_t[0] -= 1
    def chars(data):
        if in_t[0]: texts.append(data)
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse('<root xmlns:w="${W}">' + xml + '</root>', True)
    except Exception as e:
        return None
    return {'names': names[1:], 'text': ''.join(texts)}
print(json.dumps([[read(x) for x in pair] for pair in json.load(sys.stdin)]))
`;

type Reading = { names: string[]; text: string } | null;

const text = fc.stringMatching(/^[A-Za-z0-9 éß中&<>"']{0,10}$/).map((s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'));
const run = fc.tuple(fc.constantFrom('', '<w:rPr><w:b/></w:rPr>', '<w:rPr><w:color w:val="FF0000"/><w:i/></w:rPr>'), text, fc.constantFrom('', '<w:tab/>', '<w:br/>'))
  .map(([props, t, extra]) => `<w:r>${props}${extra}<w:t xml:space="preserve">${t}</w:t></w:r>`);
const paragraph = fc.tuple(fc.constantFrom('', '<w:pPr><w:jc w:val="center"/></w:pPr>'), fc.array(run, { maxLength: 3 })).map(([p, rs]) => `<w:p>${p}${rs.join('')}</w:p>`);
const wellFormedish = fc.oneof(fc.array(paragraph, { minLength: 1, maxLength: 3 }).map((x) => x.join('')), fc.array(run, { minLength: 1, maxLength: 3 }).map((x) => x.join('')));
const damage = fc.tuple(fc.nat(), fc.constantFrom('<', '>', '&', '</w:p>', '<w:r>', '"', '<!-- x -->', '<![CDATA[c]]>', '&#0;', '&#x1F600;', '&unknown;', '<?pi?>', ' w:val="1"', '\u0000',
  ' w:val=1', '</ w:p>', '<w:p/ >', '<>', '</w:P>', '<1>', ' xmlns:x="urn:x"', '&#xD800;', '\uDC00', ']]>', '<w:t>', ' a="b" a="c"', '\r\n', '&#9;'));
const sample = fc.oneof(
  wellFormedish,
  fc.tuple(wellFormedish, damage).map(([xml, [at, insert]]) => { const i = at % (xml.length + 1); return xml.slice(0, i) + insert + xml.slice(i); }),
  fc.tuple(wellFormedish, fc.nat()).map(([xml, at]) => xml.slice(0, at % (xml.length + 1))),
);

describe('{@raw} checker against expat', () => {
  it('refuses everything expat cannot read, and what it accepts reads the same in expat', () => {
    const samples = fc.sample(sample, { numRuns: 600, seed: SEED });
    const outcomes = samples.map((xml) => {
      try {
        return { xml, out: checkRawXml(xml, 'raw') };
      } catch (error) {
        expect(error, xml).toBeInstanceOf(DomainError);
        expect((error as DomainError).code).toBe('RAW_XML_INVALID');
        return { xml, out: null };
      }
    });
    const readings = JSON.parse(execFileSync('python3', ['-c', EXPAT], { input: JSON.stringify(outcomes.map((o) => [o.xml, o.out ?? ''])) }).toString()) as Reading[][];
    let accepted = 0;
    let refusedByBoth = 0;
    outcomes.forEach(({ xml, out }, i) => {
      const [input, output] = readings[i]!;
      if (input === null) {
        expect(out, `expat cannot read ${JSON.stringify(xml)} but it was accepted`).toBeNull();
        refusedByBoth++;
        return;
      }
      if (out === null) return; // well-formed but outside the allow-list
      accepted++;
      expect(output, `our output for ${JSON.stringify(xml)} is not well-formed`).not.toBeNull();
      expect(output!.text, xml).toBe(input.text);
      const isRunLevel = input.names[0] === `${W} r`;
      expect(output!.names, xml).toEqual(isRunLevel ? [`${W} p`, ...input.names] : input.names);
    });
    expect(accepted).toBeGreaterThan(50);
    expect(refusedByBoth).toBeGreaterThan(50);
  });
});
