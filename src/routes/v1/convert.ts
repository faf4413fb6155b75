import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { bodyBudget } from '../../http/body-budget.js';
import { DOCUMENT_FORMATS } from '../../inputs/formats.js';
import { CONVERTIBLE_FORMATS } from '../../operations/convert.js';
import { PdfOptionFields, PdfOptionQuery, pdfOptionsFrom } from './schemas/pdf-options.js';
import { DEFAULT_ATTACHED_FILE_LIMITS } from '../../documents/model/attached-files.js';
import { decodeBase64, type DocumentSource } from '../../inputs/document-source.js';
import { DocumentContentType } from './schemas/document.js';
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
            'When given it must agree with the content (400 otherwise); for text it decides. Other formats: 415 with the list of accepted ones. Example: `xlsx`. ' +
            // No schema example: Swagger UI would send it with every try-it-out request.
            'Leave it empty in Swagger UI to have the format detected.',
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
  files: Type.Optional(
    Type.Union([Type.String({ format: 'binary' }), Type.Array(Type.String({ format: 'binary' }), { maxItems: DEFAULT_ATTACHED_FILE_LIMITS.maxFiles })], {
      description:
        `md/html: the images the document refers to by relative name, one part per file (repeat the part), matched by the part's file name after normalisation (%-escapes, ./ and ../ segments, backslashes); never looked up on a file system. ` +
        `A reference to a file not sent is a warning naming it. At most ${DEFAULT_ATTACHED_FILE_LIMITS.maxFiles} files, ${DEFAULT_ATTACHED_FILE_LIMITS.maxTotalBytes / 1048576} MB together.`,
    }),
  ),
  ...PdfOptionFields,
});

const ConvertJsonBody = Type.Object(
  {
    document: Type.Union([
      Type.Object({ base64: Type.String({ minLength: 1, description: 'The document, base64-encoded.' }), contentType: DocumentContentType }),
      Type.Object({ url: Type.String({ format: 'uri', pattern: '^https?://', description: 'Where to fetch the document (http/https; when the operator allows URL inputs).' }), contentType: DocumentContentType }),
    ]),
    filename: Type.Optional(Type.String({ maxLength: 255, description: 'The document’s file name: names the answer, and tells txt/csv/md apart for text without from.', examples: ['notes.md'] })),
    reference: Type.Optional(Type.Object({ base64: Type.String({ minLength: 1, description: 'md/html→docx: a DOCX whose styles replace the built-in ones.' }) })),
    files: Type.Optional(
      Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 1024, description: 'The name the document refers to the file by, e.g. images/logo.png.' }), base64: Type.String({ minLength: 1 }) }), {
        maxItems: DEFAULT_ATTACHED_FILE_LIMITS.maxFiles,
        description: 'md/html: the images the document refers to by relative name (see the multipart `files` part).',
      }),
    ),
  },
  { additionalProperties: false },
);

const convertJsonExample = { document: { base64: Buffer.from('# Report\n\n![Logo](images/logo.png)\n').toString('base64') }, filename: 'report.md', files: [{ name: 'images/logo.png', base64: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==' }] };

export default function convertRoutes(services: Services): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/convert',
      {
        // The document, an optional reference DOCX and the document's files, plus the small text fields.
        ...bodyBudget(2 * services.config.limits.maxFileBytes + DEFAULT_ATTACHED_FILE_LIMITS.maxTotalBytes + 1024 * 1024, { multipartTwin: true }),
        schema: {
          operationId: 'convert',
          tags: ['Convert'],
          summary: 'Convert office documents→PDF, Markdown/HTML→DOCX or PDF',
          description:
            'Word (doc, dot, docx, docm, dotx, odt, ott, rtf, txt, wpd, Apple Pages \'09 and 2013+), spreadsheets (xls, xlsx, xlsm, ods, csv — laid out as tables) and presentations (ppt, pptx, odp) render to PDF on warm LibreOffice processes, ' +
            'Word documents with tracked changes (see trackedChanges), fields and tables of contents brought up to date; linked content is never fetched. ' +
            'PDF options (pageRanges, landscape, pdfa, pdfua, …) are accepted as query parameters or multipart fields; an unknown one is a 400. ' +
            'Markdown (CommonMark + GFM, front matter) and HTML become native DOCX (Word styles, numbering, footnotes, tracked changes for `<ins>`/`<del>`), and PDF through the same renderer. ' +
            'Images referred to by relative name come from the `files` sent with the document; remote images are fetched only from hosts the operator allows (REMOTE_IMAGE_HOSTS, ALLOW_URL_INPUTS; none by default) within the per-request image budget — any other image becomes its alt text, listed in the warnings.',
          querystring: ConvertQuery,
          body: {
            content: {
              'multipart/form-data': { schema: ConvertMultipart },
              'application/json': { schema: { ...ConvertJsonBody, examples: [convertJsonExample] } },
            },
          } as never,
          response: { ...documentResponses(['pdf', 'docx'], true), ...errorResponses(...DOCUMENT_ERRORS, ...RENDER_ERRORS) },
        },
      },
      async (request, reply) => {
        const json = request.isMultipart() ? undefined : (request.body as Static<typeof ConvertJsonBody>);
        // A JSON document (base64 or url) is decoded or fetched by the operation (remote inputs are fetched there only).
        const file = json ? { data: json.document as DocumentSource, filename: json.filename ?? '' } : uploadedFile(request, 'file');
        const query = request.query as Static<typeof ConvertQuery>;
        const to = query.to ?? 'pdf';
        const { pdf, outputFilename: wantedName } = pdfOptionsFrom(query, json ? {} : (request.body as Record<string, unknown>));
        const files = json
          ? (json.files ?? []).map((f, i) => ({ name: f.name, data: decodeBase64(f.base64, `files.${i}.base64`, DEFAULT_ATTACHED_FILE_LIMITS.maxTotalBytes) }))
          : (request.uploadedFileLists?.files ?? []).map((f) => ({ name: f.filename, data: f.data }));
        const reference = json?.reference ? decodeBase64(json.reference.base64, 'reference.base64', services.config.limits.maxFileBytes) : request.uploadedFiles?.reference?.data;
        const result = await services.operations.convert({
          file: file.data,
          filename: file.filename,
          from: query.from,
          to,
          trackedChanges: query.trackedChanges,
          pdf,
          reference,
          files,
          // Time from the start of the request to here: the upload, multipart parsing, auth and validation.
          receivedMs: reply.elapsedTime,
        }, request.job);
        return sendDocument(request, reply, result.document, to, outputFilename(wantedName ?? file.filename, to), result.warnings);
      },
    );
  };
}
