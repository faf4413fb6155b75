import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blipPictures } from '../../../src/documents/docx-pdf/blip-pictures.js';
import { measureDocTables } from '../../../src/documents/docx-pdf/doc-layout.js';
import { LAYOUT_BUDGET } from '../../../src/documents/docx-pdf/layout-budget.js';
import { prepareForPdf } from '../../../src/documents/docx-pdf/prepare.js';
import { countPptRecords } from '../../../src/documents/docx-pdf/ppt-structure.js';
import { STRUCTURE_BUDGET } from '../../../src/documents/docx-pdf/structure-budget.js';
import { DomainError } from '../../../src/errors/domain-error.js';
import { buildDocStreams, buildPptStream, pptAtom, pptContainer, type DocBlock, type ShapeTree } from '../../support/office/legacy-office.js';
import { answering, rejection } from '../../support/domain-error.js';
import { buildCompoundFile } from '../../support/office/compound-file-builder.js';

/**
 * The binary PPT and DOC counts (ppt-structure.ts, doc-layout.ts, blip-pictures.ts) on generated
 * streams: what they count is the structure the builder was given, and on any damaged stream they
 * end with a count or 400 INVALID_FILE_FORMAT, never another error.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261126);
const UNLIMITED_STRUCTURE = { ...STRUCTURE_BUDGET, maxSlides: Infinity, maxShapes: Infinity };
const UNLIMITED_LAYOUT = { ...LAYOUT_BUDGET, maxTableNesting: Infinity, maxTableCells: Infinity };

const shapeTree: fc.Arbitrary<ShapeTree> = fc.letrec<{ tree: ShapeTree }>((tie) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant('shape' as const), fc.array(tie('tree'), { maxLength: 3 })),
})).tree;
const page = fc.array(shapeTree, { maxLength: 4 });
const pptSpec = fc.record(
  { slides: fc.array(page, { maxLength: 6 }), masters: fc.array(page, { maxLength: 2 }), notes: fc.array(page, { maxLength: 3 }), notesMaster: page },
  { requiredKeys: ['slides', 'masters', 'notes'] },
);

const docBlocks: fc.Arbitrary<DocBlock[]> = fc.letrec<{ blocks: DocBlock[]; block: DocBlock }>((tie) => ({
  blocks: fc.array(tie('block'), { minLength: 1, maxLength: 3 }),
  block: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant('p' as const),
    fc.record({ rows: fc.array(fc.array(tie('blocks'), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }) }),
  ),
})).blocks;

/** A mutation of a stream: bytes overwritten, the stream cut short, or both. */
// Positions near the start (the FIB, record headers, the CLX) half the time.
const damage = fc.record({ writes: fc.array(fc.tuple(fc.oneof(fc.nat(1100), fc.nat()), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }), cut: fc.option(fc.nat()) });
const damaged = (bytes: Buffer, { writes, cut }: { writes: [number, number][]; cut: number | null }) => {
  const copy = Buffer.from(bytes);
  for (const [at, value] of writes) copy[at % copy.length] = value;
  return cut === null ? copy : copy.subarray(0, cut % (copy.length + 1));
};
const onlyInvalidFile = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('INVALID_FILE_FORMAT');
  }
};

describe('PowerPoint record tree: slides and shapes', () => {
  it('counts the slides of the slide list and every shape of slides, masters and notes, through the edit chain or over every record (property)', () => {
    fc.assert(
      fc.property(pptSpec, (spec) => {
        const built = buildPptStream(spec);
        for (const edit of [built.currentEdit, undefined]) {
          const counted = countPptRecords(built.stream, edit, UNLIMITED_STRUCTURE);
          expect(counted.slides).toBe(built.slides);
          expect(counted.shapes).toBe(built.shapes);
        }
      }),
      { numRuns: 100, seed: SEED },
    );
  });

  it('on a damaged stream or edit offset ends with a count, never an error (property)', () => {
    fc.assert(
      fc.property(pptSpec, damage, fc.option(fc.nat()), (spec, mutation, edit) => {
        const built = buildPptStream(spec);
        countPptRecords(damaged(built.stream, mutation), edit ?? built.currentEdit, UNLIMITED_STRUCTURE);
      }),
      { numRuns: 300, seed: SEED },
    );
  });

  it('refuses past maxSlides and maxShapes with 422 naming the limit', () => {
    const { stream, currentEdit } = buildPptStream({ slides: Array.from({ length: 11 }, () => ['shape']), masters: [[]], notes: [] });
    expect(countPptRecords(stream, currentEdit, { ...STRUCTURE_BUDGET, maxSlides: 11 }).slides).toBe(11);
    expect(rejection(() => countPptRecords(stream, currentEdit, { ...STRUCTURE_BUDGET, maxSlides: 10 }))).toMatchObject({
      code: 'DOCUMENT_TOO_COMPLEX',
      extensions: { limit: { name: 'convert.maxSlides', max: 10 } },
    });
    // 11 slides × (patriarch + 1) + the master's patriarch = 23 shapes.
    expect(countPptRecords(stream, currentEdit, { ...STRUCTURE_BUDGET, maxShapes: 23 }).shapes).toBe(23);
    expect(rejection(() => countPptRecords(stream, currentEdit, { ...STRUCTURE_BUDGET, maxShapes: 22 })).extensions).toMatchObject({ limit: { name: 'convert.maxShapes', max: 22 } });
  });

  it('follows the persist directory to a page wherever it lies, counts a page listed twice twice, and lets the newest edit win', () => {
    const built = buildPptStream({ slides: [['shape', 'shape']], masters: [], notes: [] });
    // A newer edit: the slide list names the slide twice, the slide now lies inside an atom's body (where no walk of the
    // stream's records would find it) and holds 5 shapes.
    const hidden = pptContainer(0x03ee, [pptContainer(0x040c, [pptContainer(0xf002, Array.from({ length: 5 }, () => pptContainer(0xf004, [])))])]);
    const persist = (id: number) => {
      const body = Buffer.alloc(20);
      body.writeUInt32LE(id, 0);
      return pptAtom(0x03f3, body);
    };
    const document = pptContainer(0x03e8, [pptContainer(0x0ff0, [persist(2), persist(2)], 0)]);
    const documentAt = built.stream.length;
    const blobAt = documentAt + document.length;
    const blob = pptAtom(0x0fba, Buffer.concat([Buffer.alloc(3), hidden]));
    const directoryAt = blobAt + blob.length;
    const directory = Buffer.alloc(12);
    directory.writeUInt32LE(1 | (2 << 20), 0);
    directory.writeUInt32LE(documentAt, 4);
    directory.writeUInt32LE(blobAt + 8 + 3, 8);
    const directoryAtom = pptAtom(0x1772, directory);
    const edit = Buffer.alloc(28);
    edit.writeUInt32LE(built.currentEdit, 8); // offsetLastEdit: the older edit
    edit.writeUInt32LE(directoryAt, 12);
    edit.writeUInt32LE(1, 16);
    const stream = Buffer.concat([built.stream, document, blob, directoryAtom, pptAtom(0x0ff5, edit)]);
    const newest = directoryAt + directoryAtom.length;
    expect(countPptRecords(stream, newest, UNLIMITED_STRUCTURE)).toMatchObject({ slides: 2, shapes: 10 });
    expect(countPptRecords(stream, built.currentEdit, UNLIMITED_STRUCTURE)).toMatchObject({ slides: 1, shapes: 3 });
  });

  it('reads a record longer than its container up to the container, and containers nested past 64 levels as atoms', () => {
    const overlong = pptContainer(0x03e8, [pptContainer(0x0ff0, [pptContainer(0xf004, []), pptContainer(0xf004, [])])]);
    overlong.writeUInt32LE(overlong.readUInt32LE(12) + 100, 12);
    expect(countPptRecords(overlong, undefined).shapes).toBe(2);
    let deep = pptContainer(0xf004, []);
    for (let i = 0; i < 70; i++) deep = pptContainer(0xf004, [deep]);
    expect(countPptRecords(deep, undefined).shapes).toBe(65);
  });
});

describe('Word piece table and paragraph properties: table cells and nesting', () => {
  it('counts every cell of outer and nested tables and the deepest nesting (property)', () => {
    fc.assert(
      fc.property(docBlocks, fc.integer({ min: 1, max: 2 ** 31 - 1 }), (blocks, seed) => {
        const built = buildDocStreams(blocks, seed);
        expect(measureDocTables(built.word, built.table, built.data, UNLIMITED_LAYOUT)).toEqual({ cells: built.cells, nesting: built.nesting });
      }),
      { numRuns: 100, seed: SEED },
    );
  });

  it('on damaged streams ends with a count or INVALID_FILE_FORMAT (property)', () => {
    fc.assert(
      fc.property(docBlocks, damage, damage, fc.constantFrom('word', 'table', 'data'), (blocks, m1, m2, which) => {
        const built = buildDocStreams(blocks);
        const word = which === 'word' ? damaged(built.word, m1) : built.word;
        const table = which === 'table' ? damaged(built.table, m1) : damaged(built.table, { writes: m2.writes, cut: null });
        const data = which === 'data' ? damaged(built.data, m1) : built.data;
        onlyInvalidFile(() => measureDocTables(word, table, data, UNLIMITED_LAYOUT));
      }),
      { numRuns: 150, seed: SEED },
    );
  });

  it('refuses past maxTableCells and maxTableNesting with the DOCX limits and errors', () => {
    const row = (cells: number): DocBlock[] => [{ rows: [Array.from({ length: cells }, () => ['p'] as DocBlock[])] }];
    const wide = buildDocStreams([...row(4), ...row(4), ...row(3)]);
    expect(measureDocTables(wide.word, wide.table, wide.data, { ...LAYOUT_BUDGET, maxTableCells: 11 }).cells).toBe(11);
    expect(rejection(() => measureDocTables(wide.word, wide.table, wide.data, { ...LAYOUT_BUDGET, maxTableCells: 10 }))).toMatchObject({
      code: 'DOCUMENT_TOO_COMPLEX',
      extensions: { limit: { name: 'convert.maxTableCells', max: 10 } },
    });
    let nested: DocBlock[] = ['p'];
    for (let i = 0; i < LAYOUT_BUDGET.maxTableNesting + 1; i++) nested = [{ rows: [[nested]] }];
    const deep = buildDocStreams(nested);
    expect(deep.nesting).toBe(LAYOUT_BUDGET.maxTableNesting + 1);
    expect(rejection(() => measureDocTables(deep.word, deep.table, deep.data)).extensions).toMatchObject({ limit: { name: 'convert.maxTableNesting' } });
  });

  it('refuses a piece table whose pieces lie outside the stream or overlap far past its size', () => {
    const built = buildDocStreams([{ rows: [[['p'], ['p']]] }]);
    const clxAt = built.table.indexOf(0x02, 8);
    const pieces = (built.table.readUInt32LE(clxAt + 1) - 4) / 12;
    const outside = Buffer.from(built.table);
    outside.writeUInt32LE(built.word.length + 10, clxAt + 5 + (pieces + 1) * 4 + 2);
    expect(rejection(() => measureDocTables(built.word, outside, built.data)).message).toContain('outside the document');
    const longPiece = Buffer.from(built.table);
    longPiece.writeUInt32LE(0x7fffffff, clxAt + 5 + pieces * 4);
    expect(rejection(() => measureDocTables(built.word, longPiece, built.data)).code).toBe('INVALID_FILE_FORMAT');
  });
});

describe('BLIP pictures in binary Office streams', () => {
  const blip = (type: number, instance: number, picture: Buffer) => pptAtom(type, Buffer.concat([Buffer.alloc(16 * (instance & 1 ? 2 : 1)), Buffer.from([0xff]), picture]), instance);
  const png = (width: number, height: number) => {
    const header = Buffer.from('89504e470d0a1a0a0000000d49484452000000000000000008020000', 'hex');
    header.writeUInt32BE(width, 16);
    header.writeUInt32BE(height, 20);
    return header;
  };
  const dib = (width: number, height: number) => {
    const header = Buffer.alloc(40);
    header.writeUInt32LE(40, 0);
    header.writeInt32LE(width, 4);
    header.writeInt32LE(-height, 8);
    return header;
  };
  const jpeg = (width: number, height: number) => {
    const sof = Buffer.from('ffd8ffe000104a46494600010100000100010000ffc00011080000000003012200021101031101', 'hex');
    sof.writeUInt16BE(height, 25);
    sof.writeUInt16BE(width, 27);
    return sof;
  };

  it('reads the size of PNG, JPEG and DIB BLIPs anywhere in a stream, and steps over metafiles', () => {
    const stream = Buffer.concat([
      Buffer.from('some text before'),
      blip(0xf01e, 0x6e0, png(11_000, 10_000)),
      blip(0xf01a, 0x3d4, png(1, 1)), // an EMF BLIP: not read as a raster picture
      blip(0xf01f, 0x7a9, dib(300, 200)),
      Buffer.alloc(7),
      blip(0xf01d, 0x46a, jpeg(640, 480)),
    ]);
    expect([...blipPictures(stream)]).toEqual([
      { width: 11_000, height: 10_000 },
      { width: 300, height: 200 },
      { width: 640, height: 480 },
    ]);
  });

  it('ends on any bytes, reading each byte a bounded number of times (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => {
        for (const size of blipPictures(Buffer.from(bytes))) expect(size.width).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 300, seed: SEED },
    );
  });
});

describe('prepareForPdf reads PPT, DOC and DOT compound files through the CFB reader', () => {
  const blip = (picture: Buffer) => pptAtom(0xf01e, Buffer.concat([Buffer.alloc(17), picture]), 0x6e0);
  const png = (width: number, height: number) => {
    const header = Buffer.from('89504e470d0a1a0a0000000d49484452000000000000000008020000', 'hex');
    header.writeUInt32BE(width, 16);
    header.writeUInt32BE(height, 20);
    return header;
  };
  const built = (slides: number) => buildPptStream({ slides: Array.from({ length: slides }, () => []), masters: [[]], notes: [] });
  const ppt = (slides: number, pictures: Buffer = Buffer.alloc(0)) =>
    buildCompoundFile([
      { name: 'PowerPoint Document', data: built(slides).stream },
      { name: 'Pictures', data: pictures },
      { name: 'Current User', data: built(slides).currentUser },
    ]);
  const doc = (blocks: DocBlock[], data?: Buffer) => {
    const built = buildDocStreams(blocks);
    return buildCompoundFile([
      { name: 'WordDocument', data: built.word },
      { name: '1Table', data: built.table },
      { name: 'Data', data: data ?? built.data },
    ]);
  };

  it('a PPT at maxSlides passes, one more slide is 422 convert.maxSlides', () => {
    expect(prepareForPdf(ppt(STRUCTURE_BUDGET.maxSlides), 'ppt', 'markup').timings.guards).toBeGreaterThan(0);
    expect(rejection(() => prepareForPdf(ppt(STRUCTURE_BUDGET.maxSlides + 1), 'ppt', 'markup'))).toMatchObject(
      answering(422, 'DOCUMENT_TOO_COMPLEX', { extensions: { limit: { name: 'convert.maxSlides', max: STRUCTURE_BUDGET.maxSlides } } }),
    );
  });

  it('a PPT or DOC picture past maxPicturePixels is 422 convert.maxPicturePixels', () => {
    expect(prepareForPdf(ppt(1, blip(png(10_000, 10_000))), 'ppt', 'markup')).toBeDefined();
    const limit = { extensions: { limit: { name: 'convert.maxPicturePixels', max: LAYOUT_BUDGET.maxPicturePixels } } };
    expect(rejection(() => prepareForPdf(ppt(1, blip(png(10_001, 10_000))), 'ppt', 'markup'))).toMatchObject(answering(422, 'DOCUMENT_TOO_COMPLEX', limit));
    expect(rejection(() => prepareForPdf(doc(['p'], Buffer.concat([Buffer.alloc(100), blip(png(20_000, 20_000))])), 'doc', 'markup'))).toMatchObject(
      answering(422, 'DOCUMENT_TOO_COMPLEX', limit),
    );
  });

  it('a DOC or DOT past maxTableCells is 422 convert.maxTableCells; at the limit it passes', () => {
    const table = (cells: number): DocBlock[] => [{ rows: Array.from({ length: cells / 50 }, () => Array.from({ length: 50 }, () => [] as DocBlock[])) }];
    expect(prepareForPdf(doc(table(LAYOUT_BUDGET.maxTableCells)), 'dot', 'markup')).toBeDefined();
    expect(rejection(() => prepareForPdf(doc([...table(LAYOUT_BUDGET.maxTableCells), ...table(50)]), 'doc', 'markup'))).toMatchObject(
      answering(422, 'DOCUMENT_TOO_COMPLEX', { extensions: { limit: { name: 'convert.maxTableCells', max: LAYOUT_BUDGET.maxTableCells } } }),
    );
  });

  it('a Word 6.0/95 document (nFib 0x0065/0x0068) or an encrypted one is not counted, whatever it holds', () => {
    const built = buildDocStreams([{ rows: Array.from({ length: 600 }, () => Array.from({ length: 50 }, () => [] as DocBlock[])) }]);
    const file = (word: Buffer) => buildCompoundFile([{ name: 'WordDocument', data: word }, { name: '1Table', data: built.table }, { name: 'Data', data: built.data }]);
    expect(rejection(() => prepareForPdf(file(built.word), 'doc', 'markup')).code).toBe('DOCUMENT_TOO_COMPLEX');
    for (const nFib of [0x0065, 0x0068]) {
      const word = Buffer.from(built.word);
      word.writeUInt16LE(0xa5dc, 0);
      word.writeUInt16LE(nFib, 2);
      expect(prepareForPdf(file(word), 'doc', 'markup')).toBeDefined();
    }
    const encrypted = Buffer.from(built.word);
    encrypted.writeUInt16LE(encrypted.readUInt16LE(0x0a) | 0x0100, 0x0a);
    expect(prepareForPdf(file(encrypted), 'doc', 'markup')).toBeDefined();
  });

  it('an encrypted PPT (Current User headerToken 0xF3D1C4DF) is not read; an unencrypted one with the same records is', () => {
    const over = built(STRUCTURE_BUDGET.maxSlides + 1);
    const file = (token: number) => {
      const currentUser = Buffer.from(over.currentUser);
      currentUser.writeUInt32LE(token, 12);
      return buildCompoundFile([{ name: 'PowerPoint Document', data: over.stream }, { name: 'Current User', data: currentUser }]);
    };
    expect(prepareForPdf(file(0xf3d1c4df), 'ppt', 'markup')).toBeDefined();
    expect(rejection(() => prepareForPdf(file(0xe391c05f), 'ppt', 'markup')).code).toBe('DOCUMENT_TOO_COMPLEX');
  });

  it('a compound file without the stream its format needs is 400 INVALID_FILE_FORMAT', () => {
    const other = buildCompoundFile([{ name: 'Workbook', data: Buffer.alloc(5000) }]);
    expect(rejection(() => prepareForPdf(other, 'ppt', 'markup'))).toMatchObject(answering(400, 'INVALID_FILE_FORMAT'));
    expect(rejection(() => prepareForPdf(other, 'doc', 'markup'))).toMatchObject(answering(400, 'INVALID_FILE_FORMAT'));
  });
});
