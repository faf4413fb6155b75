import Docxtemplater from 'docxtemplater';
import fc from 'fast-check';
import PizZip from 'pizzip';
import { describe, expect, it } from 'vitest';
import { annotateDocx } from '../../../src/documents/annotate/index.js';
import { createTagParser } from '../../../src/documents/annotate/tag-parser.js';
import { countTemplateWork, TEMPLATE_BUDGET, type CompiledPart, type TagParser } from '../../../src/documents/annotate/template-budget.js';
import { buildDocx, para } from '../../support/annotate/docx-builder.js';
import { answering, rejection } from '../../support/domain-error.js';

/** The render cost counter: refuses loop bombs before they run, and its count bounds the real work. */
describe('template work is counted before docxtemplater renders', () => {
  it('a 1 KB template of four nested loops over 100 items is refused with 422 naming the limit, without rendering', () => {
    const template = buildDocx({ body: para('{#a}{#a}{#a}{#a}{x}{/a}{/a}{/a}{/a}') });
    expect(template.length).toBeLessThan(4096); // the builder's package parts; the template text is 36 bytes
    const started = performance.now();
    const err = rejection(() => annotateDocx({ template, fields: [], data: { a: Array.from({ length: 100 }, (_, i) => ({ x: i })) } }));
    expect(err).toMatchObject(answering(422, 'DOCUMENT_TOO_COMPLEX', { extensions: { limit: { name: 'annotate.maxWork', max: TEMPLATE_BUDGET.maxWork } } }));
    expect(err.message).toContain('1,000,000');
    console.log(`template-budget: 10^8-iteration template refused in ${Math.round(performance.now() - started)} ms`);
  });

  it('loops nested deeper than maxLoopDepth are refused; realistic templates are far inside the budget', () => {
    const deep = Array.from({ length: 40 }, (_, i) => `{#c${i}}`).join('') + 'x' + Array.from({ length: 40 }, (_, i) => `{/c${39 - i}}`).join('');
    const data = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`c${i}`, true]));
    expect(rejection(() => annotateDocx({ template: buildDocx({ body: para(deep) }), fields: [], data }))).toMatchObject({ code: 'DOCUMENT_TOO_COMPLEX', extensions: { limit: { name: 'annotate.maxLoopDepth' } } });
    // A 1 000-row table of 8 columns with a nested list per row renders.
    const body = para('{#rows}') + para('{c0} {c1} {c2} {c3} {c4} {c5} {c6} {c7}') + para('{#notes}{.}; {/notes}') + para('{/rows}');
    const rows = Array.from({ length: 1000 }, (_, i) => ({ c0: i, c1: 'b', c2: 'c', c3: 'd', c4: 'e', c5: 'f', c6: 'g', c7: 'h', notes: ['x', 'y', 'z'] }));
    expect(annotateDocx({ template: buildDocx({ body }), fields: [], data: { rows } }).docx.length).toBeGreaterThan(0);
  });

  it('a template just under the budget renders (the log gives its CPU time), one just over is refused', () => {
    const body = para('{#rows}') + para('{a} {b} {c} {d}') + para('{#items}{x}-{y}{/items}') + para('{/rows}');
    const rowsFor = (n: number) => Array.from({ length: n }, (_, i) => ({ a: i, b: 'b', c: 'c', d: 'd', items: Array.from({ length: 10 }, (_, j) => ({ x: j, y: 'y' })) }));
    // Find the largest row count the counter accepts (work grows linearly with rows).
    const { doc } = compile(buildDocx({ body }), createTagParser(() => undefined));
    const perRow = countTemplateWork(compiledOf(doc), { rows: rowsFor(2) }, createTagParser(() => undefined), { maxWork: Infinity, maxLoopDepth: 32 }) -
      countTemplateWork(compiledOf(doc), { rows: rowsFor(1) }, createTagParser(() => undefined), { maxWork: Infinity, maxLoopDepth: 32 });
    const rows = Math.floor((TEMPLATE_BUDGET.maxWork * 0.98) / perRow);
    const started = performance.now();
    const cpu = process.cpuUsage();
    annotateDocx({ template: buildDocx({ body }), fields: [], data: { rows: rowsFor(rows) } });
    const { user, system } = process.cpuUsage(cpu);
    console.log(`template-budget: ${rows} rows (${perRow} steps each, ${rows * perRow} steps) rendered in ${Math.round(performance.now() - started)} ms, ${Math.round((user + system) / 1000)} ms CPU`);
    expect(rejection(() => annotateDocx({ template: buildDocx({ body }), fields: [], data: { rows: rowsFor(Math.ceil(TEMPLATE_BUDGET.maxWork / perRow) + 1) } })).code).toBe('DOCUMENT_TOO_COMPLEX');
  });
});

/** docxtemplater as annotate.ts sets it up, with a parser whose lookups are counted. */
function compile(template: Buffer, parser: TagParser) {
  const doc = new Docxtemplater(new PizZip(template), { paragraphLoop: true, linebreaks: true, errorLogging: false, parser: parser as never, nullGetter: () => '' });
  return { doc };
}
const compiledOf = (doc: Docxtemplater) =>
  Object.values((doc as unknown as { compiled: Record<string, { postparsed?: CompiledPart[] }> }).compiled).map((file) => file.postparsed ?? []);

type Node = { kind: 'text' } | { kind: 'tag'; name: string } | { kind: 'loop'; name: string; inverted: boolean; body: Node[] };
const NAMES = ['a', 'b', 'c', 'd'];

const nodeArb: fc.Arbitrary<Node[]> = fc.letrec<{ nodes: Node[]; node: Node }>((tie) => ({
  nodes: fc.array(tie('node'), { maxLength: 4 }),
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant<Node>({ kind: 'text' }),
    fc.record({ kind: fc.constant('tag' as const), name: fc.constantFrom(...NAMES) }),
    fc.record({ kind: fc.constant('loop' as const), name: fc.constantFrom(...NAMES), inverted: fc.boolean(), body: tie('nodes') }),
  ),
})).nodes;

const dataArb = fc.letrec<{ value: unknown; record: Record<string, unknown> }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false, '', 'text', 0, 7),
    fc.array(tie('record'), { maxLength: 4 }),
    tie('record'),
  ),
  record: fc.dictionary(fc.constantFrom(...NAMES), tie('value'), { maxKeys: 4 }),
})).record;

const templateText = (nodes: Node[]): string =>
  nodes.map((n) => (n.kind === 'text' ? 'x' : n.kind === 'tag' ? `{${n.name}}` : `{${n.inverted ? '^' : '#'}${n.name}}${templateText(n.body)}{/${n.name}}`)).join('');

describe('property: the count bounds the real work', () => {
  it('the scope lookups docxtemplater makes while rendering never exceed the counted work', () => {
    fc.assert(
      fc.property(nodeArb, dataArb, (nodes, data) => {
        const template = buildDocx({ body: para(templateText(nodes) || 'x') });
        let lookups = 0;
        const inner = createTagParser(() => undefined);
        const counting: TagParser = (tag) => {
          const getter = inner(tag);
          return { get: (scope, context) => (lookups++, getter.get(scope, context as never)) };
        };
        const { doc } = compile(template, counting);
        const counted = countTemplateWork(compiledOf(doc), data, createTagParser(() => undefined), { maxWork: Infinity, maxLoopDepth: 1000 });
        doc.render(data);
        expect(lookups).toBeLessThanOrEqual(counted);
      }),
      { seed: 2026, numRuns: 300 },
    );
  });
});
