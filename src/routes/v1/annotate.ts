import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { bodyBudget } from '../../http/body-budget.js';
import { documentResponses, outputFilename, sendDocument } from '../../http/document-reply.js';
import { rawJsonOf } from '../../http/json-body.js';
import { jsonField, uploadedFile } from '../../http/multipart.js';
import { DOCUMENT_ERRORS, errorResponses, RENDER_ERRORS, URL_INPUT_ERRORS } from '../../http/response-docs.js';
import { validateValue } from '../../http/validate.js';
import type { DocumentSource } from '../../inputs/document-source.js';
import type { Services } from '../../services.js';
import type { AnnotateInput } from '../../operations/index.js';
import { AnnotateDataSchema, AnnotateFieldsSchema, AnnotateJsonBodySchema, AnnotateMultipartFieldsSchema } from './schemas/annotate.js';
import { annotateJsonExample } from './schemas/examples.js';
import { PdfOptionFields, PdfOptionQuery, pdfOptionsFrom } from './schemas/pdf-options.js';
import { StringEnum } from './schemas/string-enum.js';
import { attachedParts, isTrue } from './shared.js';

/** What POST /v1/annotate fills (anything else: 415 naming it). */

const AnnotateMultipartSchema = Type.Composite(
  [Type.Object({ file: Type.String({ format: 'binary', description: 'The DOCX template' }) }), AnnotateMultipartFieldsSchema, Type.Object(PdfOptionFields)],
  // A union, not just binary: in generated TypeScript the index signature must also admit the declared text parts.
  { additionalProperties: Type.Union([Type.String({ format: 'binary' }), Type.String()], { description: 'Image file parts, referenced from field values as cid:<part name>' }) },
);

const AnnotateQuery = Type.Object(
  {
    to: Type.Optional(StringEnum(['docx', 'pdf'], { default: 'docx', description: 'docx (default) or pdf (rendered by LibreOffice; the PDF options apply)' })),
    ...PdfOptionQuery,
  },
  { additionalProperties: false },
);

type MultipartBody = Static<typeof AnnotateMultipartSchema>;
/** The request as the annotate operation takes it, before the output choices (to, PDF options). */
type ParsedAnnotate = Omit<AnnotateInput, 'to' | 'pdf'>;
type JsonBody = Static<typeof AnnotateJsonBodySchema>;

export default function annotateRoutes(services: Services): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/annotate',
      {
        ...bodyBudget(services.config.limits.maxJsonBytes, { multipartTwin: true, rawJsonKeys: ['data'] }),
        schema: {
          operationId: 'annotate',
          tags: ['Annotate'],
          summary: 'Fill a DOCX template with text, images, signatures and tables',
          description:
            'Fields go to docxtemplater tags (`{id}` text, `{%id}` image/signature, `{#id}…{/id}` table rows) and to Word content controls whose tag or title equals the id (or group) — for SuperDoc editor controls with a JSON tag, its `fieldId`, `group` or `displayLabel` — in the body, headers, footers, footnotes and text boxes. ' +
            'A tag is looked up by its whole text first (`{first-name}`, `{Customer Name}`), then read as an angular expression with filters (`{amount | number:2:\'de-DE\'}`, `{due | date:\'DD MMMM YYYY\'}`; unknown filter: 422). ' +
            'Jinja/Mustache `{{ }}`, `{% %}` and docx-templates `+++` tags are named in a 422; `{@raw}` values must be allow-listed WordprocessingML (422 RAW_XML_INVALID otherwise). ' +
            '`data` is passed to docxtemplater as is (loops, conditions). JSON requests get `{document:{base64,contentType}}` unless `Accept` names the binary type; multipart requests get the file.',
          querystring: AnnotateQuery,
          body: {
            content: {
              'application/json': { schema: { ...AnnotateJsonBodySchema, examples: [annotateJsonExample] } },
              'multipart/form-data': { schema: AnnotateMultipartSchema },
            },
          } as never,
          response: { ...documentResponses(['docx', 'pdf'], true), ...errorResponses(...DOCUMENT_ERRORS, ...URL_INPUT_ERRORS, ...RENDER_ERRORS, 'TEMPLATE_INVALID', 'FIELD_NOT_FOUND', 'TABLE_SHAPE_MISMATCH', 'MISSING_VALUES', 'RAW_XML_INVALID') },
        },
      },
      async (request, reply) => {
        const to = request.query.to ?? 'docx';
        const { pdf, outputFilename: wantedName } = pdfOptionsFrom(request.query, request.isMultipart() ? (request.body as Record<string, unknown>) : {});
        const input = request.isMultipart() ? readMultipart(request.body as MultipartBody, request) : readJson(request.body as JsonBody);
        const result = await services.operations.annotate({ ...input, to, pdf }, request.job);
        return sendDocument(request, reply, result.document, to, outputFilename(wantedName ?? input.filename, to, 'annotated'), result.warnings);
      },
    );
  };

  function readJson(body: JsonBody): ParsedAnnotate {
    // A large body's `data` arrives as its JSON text, parsed by the worker that fills the template.
    const dataJson = rawJsonOf(body, 'data');
    return {
      template: body.document as DocumentSource,
      fields: body.fields,
      ...(dataJson ? { dataJson } : { data: body.data }),
      images: {},
      options: { strict: body.strict, ignoreUnknownFields: body.ignoreUnknownFields },
    };
  }

  function readMultipart(body: MultipartBody, request: Parameters<typeof uploadedFile>[0]): ParsedAnnotate {
    const file = uploadedFile(request, 'file');
    const fields = validateValue(AnnotateFieldsSchema, jsonField(body.fields, 'fields') ?? [], 'fields');
    const data = body.data === undefined ? undefined : validateValue(AnnotateDataSchema, jsonField(body.data, 'data'), 'data');
    return {
      template: file.data,
      filename: file.filename,
      fields,
      data,
      images: attachedParts(request, ['file']),
      options: { strict: isTrue(body.strict), ignoreUnknownFields: isTrue(body.ignoreUnknownFields) },
    };
  }
}
