import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { PdfOptionFields, PdfOptionQuery, pdfOptionsFrom } from '../../../src/routes/v1/schemas/pdf-options.js';

/**
 * Swagger UI sends every multipart text field with a sample value (the schema's example, else the
 * first enum value, else "string"); an empty field must mean "not given" and be what it samples.
 */
describe('PDF option fields', () => {
  const check = new Ajv({ strict: false }).compile(Type.Object(PdfOptionFields));

  it('each multipart field takes the empty text, first in its enum or as its example, and it means not given', () => {
    const empty: Record<string, string> = {};
    for (const [name, schema] of Object.entries(PdfOptionFields) as [string, { enum?: unknown[]; examples?: unknown[] }][]) {
      const sample = schema.enum ? schema.enum[0] : schema.examples?.[0];
      expect(sample, name).toBe('');
      empty[name] = '';
    }
    expect(check(empty)).toBe(true);
    expect(pdfOptionsFrom({}, empty)).toEqual({ pdf: undefined, outputFilename: undefined });
  });

  it('given values still count, and query parameters carry no example Swagger UI would send', () => {
    expect(pdfOptionsFrom({}, { landscape: 'true', quality: '75', pdfa: 'PDF/A-2b', outputFilename: 'x' })).toEqual({
      pdf: { landscape: true, quality: 75, pdfa: 'PDF/A-2b' },
      outputFilename: 'x',
    });
    expect(check({ quality: '0' })).toBe(false);
    expect(check({ landscape: 'yes' })).toBe(false);
    for (const [name, schema] of Object.entries(PdfOptionQuery) as [string, { examples?: unknown; example?: unknown; default?: unknown }][]) {
      expect([schema.examples, schema.example, schema.default], name).toEqual([undefined, undefined, undefined]);
    }
  });
});
