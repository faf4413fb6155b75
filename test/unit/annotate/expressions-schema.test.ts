import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { compileExpression } from '../../../src/documents/annotate/expressions.js';
import { parseImage } from '../../../src/documents/annotate/images.js';
import { AnnotateFieldsSchema, AnnotateJsonBodySchema } from '../../../src/routes/v1/schemas/annotate.js';
import { gifHeader, jpegHeader, pngImage } from '../../support/annotate/docx-builder.js';

describe('safe expressions', () => {
  const scope = { person: { birth_year: 1990, age: 34, name: 'Jo' }, items: [1, 2, 3], price: 10, qty: 3 };
  it.each([
    ['person.birth_year+person.age', 2024],
    ['price * qty - 5', 25],
    ['(price + 2) / 4', 3],
    ['items.length', 3],
    ['items[1]', 2],
    ['person["name"] + "!"', 'Jo!'],
    ['price > 5 && qty == 3', true],
    ['-price', -10],
  ])('%s', (source, expected) => {
    expect(compileExpression(source)(scope)).toBe(expected);
  });

  it('never reaches prototypes or runs code', () => {
    expect(compileExpression('person.constructor')(scope)).toBeUndefined();
    expect(compileExpression('person.__proto__')(scope)).toBeUndefined();
    expect(compileExpression('items.map')(scope)).toBeUndefined();
    expect(() => compileExpression('person.name()')).toThrow();
    expect(() => compileExpression('a = 1')).toThrow();
  });

  it('resolves names from outer loop scopes', () => {
    const run = compileExpression('currency + price');
    expect(run({ price: 3 }, { scopeList: [{ currency: 'EUR ' }, { price: 3 }], num: 1 })).toBe('EUR 3');
  });
});

describe('image sniffing', () => {
  it('reads intrinsic sizes of PNG, GIF and JPEG', () => {
    expect(parseImage(pngImage(31, 17), 'x')).toMatchObject({ extension: 'png', widthPx: 31, heightPx: 17 });
    expect(parseImage(gifHeader(640, 480), 'x')).toMatchObject({ extension: 'gif', widthPx: 640, heightPx: 480 });
    expect(parseImage(jpegHeader(1024, 768), 'x')).toMatchObject({ extension: 'jpeg', widthPx: 1024, heightPx: 768 });
    expect(parseImage(Buffer.from('plain text'), 'x')).toBeNull();
  });

  it('refuses images above the pixel limit', () => {
    expect(() => parseImage(gifHeader(20000, 20000), 'fields[0]')).toThrow(/megapixel/);
  });
});

describe('annotate schemas (Ajv, as Fastify configures it)', () => {
  const ajv = new Ajv({ removeAdditional: false, allErrors: true, coerceTypes: 'array', strict: false });
  const validateFields = ajv.compile(AnnotateFieldsSchema);
  const validateBody = ajv.compile(AnnotateJsonBodySchema);

  it('accepts the SuperDoc-shaped JSON body exactly as a SuperDoc client sends it', () => {
    const body = {
      document: { base64: 'UEsDBAo=' },
      fields: [
        { id: 'customer_name', type: 'text', value: 'Jane Doe', options: { keepTextNodeStyles: true } },
        { id: 'logo', type: 'image', value: 'https://example.com/logo.png', options: { dimensions: { width: '200', height: '100' } } },
        { id: 'sig', type: 'signature', value: 'Jane Doe', options: { arcElement: { color: '#1f3a93' }, topLabel: { color: '#333' }, bottomLabel: { color: '#999', text: 'ip: 10.0.0.1' } } },
        { id: 'items', type: 'table', value: [['Pen', '2'], ['Ink', '5']], options: { copyRowStyle: true } },
        { group: 'party', type: 'text', value: 'ACME' },
      ],
      data: { items: [{ name: 'x' }] },
      strict: false,
      ignoreUnknownFields: true,
    };
    expect(validateBody(body), JSON.stringify(validateBody.errors)).toBe(true);
  });

  it('has oneOf semantics for id/group: both or neither is rejected', () => {
    expect(validateFields([{ id: 'a', type: 'text', value: 'x' }])).toBe(true);
    expect(validateFields([{ group: 'a', type: 'text', value: 'x' }])).toBe(true);
    expect(validateFields([{ id: 'a', group: 'b', type: 'text', value: 'x' }])).toBe(false);
    expect(validateFields([{ type: 'text', value: 'x' }])).toBe(false);
    expect(validateFields([{ id: 'a', type: 'video', value: 'x' }])).toBe(false);
  });
});
