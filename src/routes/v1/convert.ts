import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { bodyBudget } from '../../http/body-budget.js';
import { DOCUMENT_FORMATS } from '../../inputs/formats.js';
import { CONVERTIBLE_FORMATS } from '../../operations/convert.js';
import { PdfOptionFields, PdfOptionQuery, pdfOptionsFrom } from './schemas/pdf-options.js';
import { DomainError, ErrorCode } from '../../errors/domain-error.js';
import { documentResponses, outputFilename, sendDocument } from '../../http/document-reply.js';
import { uploadedFile } from '../../http/multipart.js';
import { DOCUMENT_ERRORS, errorResponses, RENDER_ERRORS } from '../../http/response-docs.js';
import type { Services } from '../../services.js';
import { StringEnum } from './schemas/string-enum.js';

const ConvertQuery = Type.Object(
  {
    from: Type.Optional(
      StringEnum(
        DOCUMENT_FORMATS.filter((f) => CONVERTIBLE_FORMATS.includes(f)),
        {
          description:
            'Source format. When absent it is detected from the content (never from the file name alone): PDF, OLE2 (doc, dot, xls, ppt), OOXML by its main content type, OpenDocument by its mimetype, RTF, WordPerfect; ' +
            'text is HTML when it starts with a tag, else the text format its file name says (txt, csv, md), else CSV when its lines split alike at one separator, else Markdown. ' +
            'When given it must agree with the content (400 otherwise); for text it decides. Other formats: 415 with the list of accepted ones.',
          examples: ['xlsx'],
        },
      ),
    ),
    to: Type.Optional(StringEnum(['pdf', 'docx'], { default: 'pdf', description: 'Target format (default pdf). docx only from md or html.' })),
    trackedChanges: Type.Optional(
      StringEnum(['markup', 'accept', 'reject'], {
        default: 'markup',
        description: 'Word documents→PDF: markup shows insertions and deletions with change marks, one colour per reviewer; accept renders as if every change were accepted; reject as if every change were rejected.',
      }),
    ),
    ...PdfOptionQuery,
  },
  { additionalProperties: false },
);

const ConvertMultipart = Type.Object({
  file: Type.String({ format: 'binary', description: 'The document to convert (Word, Excel, PowerPoint, OpenDocument, RTF, WordPerfect, text, CSV, Markdown or HTML)' }),
  reference: Type.Optional(Type.String({ format: 'binary', description: 'md/html→docx: a DOCX whose styles replace the built-in ones (like pandoc --reference-doc)' })),
  ...PdfOptionFields,
});

export default function convertRoutes(services: Services): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/convert',
      {
        // The document and an optional reference DOCX, plus the small text fields.
        ...bodyBudget(2 * services.config.limits.maxFileBytes + 1024 * 1024),
        schema: {
          operationId: 'convert',
          tags: ['Convert'],
          summary: 'Convert office documents→PDF, Markdown/HTML→DOCX or PDF',
          description:
            'Word (doc, dot, docx, docm, dotx, odt, ott, rtf, txt, wpd), spreadsheets (xls, xlsx, xlsm, ods, csv — laid out as tables) and presentations (ppt, pptx, odp) render to PDF on warm LibreOffice processes, ' +
            'Word documents with tracked changes (see trackedChanges), fields and tables of contents brought up to date; linked content is never fetched. ' +
            'PDF options (pageRanges, landscape, pdfa, pdfua, …) are accepted as query parameters or multipart fields; an unknown one is a 400. ' +
            'Markdown (CommonMark + GFM, front matter) and HTML become native DOCX (Word styles, numbering, footnotes, tracked changes for `<ins>`/`<del>`), and PDF through the same renderer. ' +
            'Remote images are not fetched: they become their alt text, listed in the X-Docproc-Warnings header.',
          querystring: ConvertQuery,
          consumes: ['multipart/form-data'],
          body: ConvertMultipart,
          response: { ...documentResponses(['pdf', 'docx'], false), ...errorResponses(...DOCUMENT_ERRORS, ...RENDER_ERRORS) },
        },
        // Before body validation, so a JSON or raw body is told "wrong media type", not "missing field".
        preValidation: async (request) => {
          if (!request.isMultipart()) throw new DomainError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'Send the document as multipart/form-data in a part named "file".');
        },
      },
      async (request, reply) => {
        const file = uploadedFile(request, 'file');
        const query = request.query as Static<typeof ConvertQuery>;
        const to = query.to ?? 'pdf';
        const { pdf, outputFilename: wantedName } = pdfOptionsFrom(query, request.body as Record<string, unknown>);
        const result = await services.operations.convert({
          file: file.data,
          filename: file.filename,
          from: query.from,
          to,
          trackedChanges: query.trackedChanges,
          pdf,
          reference: request.uploadedFiles?.reference?.data,
          // Time from the start of the request to here: the upload, multipart parsing, auth and validation.
          receivedMs: reply.elapsedTime,
        }, request.job);
        return sendDocument(request, reply, result.document, to, outputFilename(wantedName ?? file.filename, to), result.warnings);
      },
    );
  };
}
