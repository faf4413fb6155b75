import { Type, type Static } from '@sinclair/typebox';
import { DocumentContentType } from './document.js';
import { annotateDataPartExample, annotateFieldsPartExample } from './example-values.js';

/**
 * Request/response schemas of POST /v1/annotate (the SuperDoc annotate shape).
 * A field names its target with exactly one of `id` or `group`: a real oneOf of two closed objects.
 */
const Dimension = Type.Union([Type.Number({ exclusiveMinimum: 0 }), Type.String({ pattern: '^\\s*\\d+(\\.\\d+)?\\s*(px|pt|in|cm|mm)?\\s*$' })], {
  description: 'Pixels at 96 dpi (number or "200px"); pt, in, cm and mm are accepted too.',
});

const Color = Type.String({ description: 'CSS-like colour: "#1f3a93", "1F3A93" or a basic name like "blue".' });

export const AnnotateFieldOptionsSchema = Type.Object(
  {
    keepTextNodeStyles: Type.Optional(Type.Boolean({ default: true, description: 'text: keep the formatting of the placeholder.' })),
    dimensions: Type.Optional(
      Type.Object({ width: Type.Optional(Dimension), height: Type.Optional(Dimension) }, {
        description: 'image/signature: display size; with one side only, the other follows the aspect ratio.',
      }),
    ),
    arcElement: Type.Optional(Type.Object({ color: Type.Optional(Color) }, { description: 'signature: colour of the curved line (a DrawingML curve) drawn under the signature; default #1F3A93.' })),
    topLabel: Type.Optional(Type.Object({ color: Type.Optional(Color), text: Type.Optional(Type.String()) }, { description: 'signature: label above (default "Signed by:").' })),
    bottomLabel: Type.Optional(Type.Object({ color: Type.Optional(Color), text: Type.Optional(Type.String()) }, { description: 'signature: label below, e.g. date or IP.' })),
    copyRowStyle: Type.Optional(Type.Boolean({ default: true, description: 'table: new rows keep the template row formatting.' })),
  },
  { additionalProperties: true },
);

const CellValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);

const FieldValue = Type.Union(
  [Type.String(), Type.Number(), Type.Boolean(), Type.Null(), Type.Array(Type.Array(CellValue))],
  {
    description:
      'text: the text ("\\n" = line break). image/signature: a PNG, JPEG, GIF or SVG image as base64, data: URI, cid:<multipart part name> or https URL (an SVG is embedded with a PNG fallback drawn from it; what the SVG itself links to is never loaded); a signature that is not an image is typed text. table: rows of cell values.',
  },
);

const FieldType = Type.Union([Type.Literal('text'), Type.Literal('image'), Type.Literal('signature'), Type.Literal('table')]);

const commonFieldProperties = {
  type: FieldType,
  value: Type.Optional(FieldValue),
  options: Type.Optional(AnnotateFieldOptionsSchema),
};

export const AnnotateFieldByIdSchema = Type.Object(
  { id: Type.String({ minLength: 1, description: 'Tag name ({id}, {%id}, {#id}) or content-control tag/title.' }), ...commonFieldProperties },
  { additionalProperties: false },
);

export const AnnotateFieldByGroupSchema = Type.Object(
  { group: Type.String({ minLength: 1, description: 'Fills every tag and content control carrying this name.' }), ...commonFieldProperties },
  { additionalProperties: false },
);

/** Exactly one of the two matches (oneOf): a field with both id and group, or neither, is rejected. */
export const AnnotateFieldSchema = Type.Unsafe<Static<typeof AnnotateFieldByIdSchema> | Static<typeof AnnotateFieldByGroupSchema>>({
  oneOf: [AnnotateFieldByIdSchema, AnnotateFieldByGroupSchema],
});

/** The `fields` array; also validates the multipart `fields` part after JSON.parse. */
export const AnnotateFieldsSchema = Type.Array(AnnotateFieldSchema, { maxItems: 5000 });

export const AnnotateDocumentSchema = Type.Union([
  Type.Object({ base64: Type.String({ minLength: 1, description: 'The DOCX template, base64-encoded.' }), contentType: DocumentContentType }),
  Type.Object({ url: Type.String({ format: 'uri', pattern: '^https?://', description: 'Where to fetch the DOCX template (http/https).' }), contentType: DocumentContentType }),
]);

export const AnnotateJsonBodySchema = Type.Object({
  document: AnnotateDocumentSchema,
  fields: AnnotateFieldsSchema,
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form docxtemplater data: loops, conditions, nested objects.' })),
  strict: Type.Optional(Type.Boolean({ default: false, description: 'Fail (422 MISSING_VALUES) when a tag has no value.' })),
  ignoreUnknownFields: Type.Optional(Type.Boolean({ default: false, description: 'A field that matches nothing is a warning, not 422 FIELD_NOT_FOUND.' })),
});

/** multipart/form-data text parts; `file` and `cid:` image parts are files. */
export const AnnotateMultipartFieldsSchema = Type.Object({
  fields: Type.String({ description: 'JSON array of fields (same as the JSON body).', examples: [annotateFieldsPartExample] }),
  data: Type.Optional(Type.String({ description: 'JSON object of free-form data.', examples: [annotateDataPartExample] })),
  strict: Type.Optional(Type.String({ enum: ['true', 'false'] })),
  ignoreUnknownFields: Type.Optional(Type.String({ enum: ['true', 'false'] })),
});

/** Parsed `data` part. */
export const AnnotateDataSchema = Type.Record(Type.String(), Type.Unknown());

export const AnnotateResponseSchema = Type.Object({
  document: Type.Object({
    base64: Type.String(),
    contentType: Type.String({ examples: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'application/pdf'] }),
  }),
  warnings: Type.Optional(Type.Array(Type.String())),
});

export type AnnotateFieldBody = Static<typeof AnnotateFieldSchema>;
export type AnnotateJsonBody = Static<typeof AnnotateJsonBodySchema>;
export type AnnotateResponse = Static<typeof AnnotateResponseSchema>;
