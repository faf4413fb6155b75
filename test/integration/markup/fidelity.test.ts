import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { htmlToDocx } from '../../../src/documents/html/index.js';
import { markdownToDocx } from '../../../src/documents/markdown/index.js';
import { roundTrip, type FidelityResult, type From } from './fidelity.js';
import { generatedHtml, generatedMarkdown } from './generated.js';
import { CORPUS_DIR } from '../../support/corpus.js';

/**
 * Fidelity of every corpus .md/.html, and of generated documents, against pandoc as an
 * independent reader (see fidelity.ts for the units and what is normalised). The measure is
 * relative to pandoc's own round trip: of the source blocks (headings, paragraphs, list items with
 * their levels and numbering, table cells, images, code blocks) that pandoc reads back from its
 * own DOCX, the share it also reads back from ours. pandoc runs on the one file, as the service
 * gets it (no neighbouring images, no network).
 *
 * Where pandoc's own source readers disagree with what a browser or GitHub shows, the source
 * units are not held against us; each case is named here, and matched on the unit's text:
 */
const READER_DISAGREEMENTS: Record<string, { why: string; units: RegExp }> = {
  // GFM spec 6.9: no autolink when the last two domain segments hold an underscore, uppercase WWW
  // is not an autolink trigger in pandoc but is in cmark-gfm / remark-gfm; pandoc links `https://example`.
  'remark-gfm-autolink-literal.md': { why: 'pandoc 2.17 autolinks differ from the GFM spec', units: /www\.|WWW\.|https:\/\/example$|aaa@a\.b_\.c|\[\[https/ },
  // GitHub renders `* [x] a` followed by `* b` as one list; pandoc splits at the first plain item.
  'remark-gfm-tasklist.md': { why: 'pandoc splits a task list from a following plain item', units: /^UL \d$/ },
  // pandoc's HTML reader ignores CSS: the e-mail's button is bold in a browser and in our DOCX.
  'email-inlined.html': { why: 'pandoc ignores inline CSS (font-weight)', units: /Call To Action/ },
  // pandoc's HTML reader drops a rowspan in a table without <tbody> and pads the row instead.
  'pandoc-html-reader.html': { why: 'pandoc drops colspan/rowspan of a <thead>-less table', units: /^TR\| 1x1:P Details \| 1x1: \| 1x1:$/ },
};
const MEAN_THRESHOLD = 0.98;
const PER_DOCUMENT_THRESHOLD = 0.9;
const limits = { maxBytes: 20 * 1024 * 1024, maxNestingDepth: 64 };
const GENERATED_SEEDS = [1, 2, 3, 4, 5, 6];

interface Case {
  name: string;
  from: From;
  source: () => Buffer;
}

const corpus: Case[] = [
  ...readdirSync(join(CORPUS_DIR, 'md')).filter((f) => f.endsWith('.md')).map((f) => ({ name: f, from: 'gfm' as const, source: () => readFileSync(join(CORPUS_DIR, 'md', f)) })),
  ...readdirSync(join(CORPUS_DIR, 'html')).filter((f) => f.endsWith('.html')).map((f) => ({ name: f, from: 'html' as const, source: () => readFileSync(join(CORPUS_DIR, 'html', f)) })),
];
const generated: Case[] = GENERATED_SEEDS.flatMap((seed) => [
  { name: `generated-${seed}.md`, from: 'gfm' as const, source: () => Buffer.from(generatedMarkdown(seed)) },
  { name: `generated-${seed}.html`, from: 'html' as const, source: () => Buffer.from(generatedHtml(seed)) },
]);

/** The relative share, less the units of a named reader disagreement. */
function share(name: string, result: FidelityResult): { share: number; missing: string[] } {
  const relative = result.relative!;
  const disagreement = READER_DISAGREEMENTS[name];
  const excused = disagreement ? relative.missing.filter((u) => disagreement.units.test(u)) : [];
  const missing = relative.missing.filter((u) => !excused.includes(u));
  const units = relative.units - excused.length;
  return { share: units === 0 ? 1 : relative.matched / units, missing };
}

describe('markup fidelity against pandoc, relative to pandoc\'s own round trip', () => {
  const shares: { name: string; share: number }[] = [];

  for (const c of [...corpus, ...generated]) {
    it(`${c.name}: pandoc reads from our DOCX what it reads back from its own`, async () => {
      const source = c.source();
      const { docx } = await (c.from === 'gfm' ? markdownToDocx : htmlToDocx)(source, { limits });
      const result = roundTrip(source, c.from, docx); // throws if pandoc cannot read our DOCX
      const measured = share(c.name, result);
      shares.push({ name: c.name, share: measured.share });
      console.log(`  ${c.name}: ${(100 * measured.share).toFixed(1)}% of ${result.relative!.units} units (absolute ${(100 * result.share).toFixed(1)}%)`);
      expect(measured.share, `missing: ${measured.missing.slice(0, 5).join(' || ')}`).toBeGreaterThanOrEqual(PER_DOCUMENT_THRESHOLD);
      expect(execFileSync('pandoc', ['-f', 'docx', '-t', 'plain'], { input: docx }).length).toBeGreaterThan(0);
    }, 300_000); // pandoc reads a 200 KB document three times: a minute on a loaded 2-core machine
  }

  it(`reaches a mean of ${MEAN_THRESHOLD} over the corpus and the generated documents`, () => {
    expect(shares).toHaveLength(corpus.length + generated.length);
    const mean = shares.reduce((sum, s) => sum + s.share, 0) / shares.length;
    console.log(`markup fidelity: mean ${(100 * mean).toFixed(2)}% over ${shares.length} documents`);
    expect(mean).toBeGreaterThanOrEqual(MEAN_THRESHOLD);
  });
});
