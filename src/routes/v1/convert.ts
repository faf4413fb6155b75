import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { bodyBudget } from '../../http/body-budget.js';
import { detectSourceFormat, type SourceFormat } from '../../documents/detect.js';
import { AppError, ErrorCode, invalidFile } from '../../errors/app-error.js';
import { documentResponses, outputFilename, sendDocument } from '../../http/document-reply.js';
import { uploadedFile } from '../../http/multipart.js';
import { problemResponses } from '../../http/problem.js';
import type { Services } from '../../services.js';
import type { MarkupTaskInput, MarkupTaskOutput } from '../../../workers/markup.js';
import { StringEnum } from './schemas/string-enum.js';
import { sendWarnings, toBuffer } from './shared.js';

const ConvertQuery = Type.Object(
  {
    from: Type.Optional(
      StringEnum(['docx', 'md', 'html'], {
        description: 'Source format. When absent it is detected from the content: a ZIP package is DOCX, text starting with an HTML tag is HTML, other text is Markdown.',
      }),
    ),
    to: Type.Optional(StringEnum(['pdf', 'docx'], { default: 'pdf', description: 'Target format (default pdf). docx only from md or html.' })),
    trackedChanges: Type.Optional(
      StringEnum(['markup', 'accept', 'reject'], {
        default: 'markup',
        description: 'DOCX→PDF: markup shows insertions and deletions with change marks, one colour per reviewer; accept renders as if every change were accepted; reject as if every change were rejected.',
      }),
    ),
  },
  { additionalProperties: false },
);

const ConvertMultipart = Type.Object({
  file: Type.String({ format: 'binary', description: 'The document to convert (DOCX, Markdown or HTML)' }),
  reference: Type.Optional(Type.String({ format: 'binary', description: 'md/html→docx: a DOCX whose styles replace the built-in ones (like pandoc --reference-doc)' })),
});

/** Lists, quotes and HTML elements nested deeper than this are refused (422) rather than risk the stack. */
const MAX_NESTING_DEPTH = 100;

const MARKUP_TASKS: Record<Exclude<SourceFormat, 'docx'>, string> = { md: 'markdownToDocx', html: 'htmlToDocx' };

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
          summary: 'Convert DOCX→PDF, Markdown/HTML→DOCX or PDF',
          description:
            'DOCX→PDF renders on warm LibreOffice processes with tracked changes (see trackedChanges), fields and tables of contents brought up to date, and linked content never fetched. ' +
            'Markdown (CommonMark + GFM, front matter) and HTML become native DOCX (Word styles, numbering, footnotes, tracked changes for `<ins>`/`<del>`), and PDF through the same renderer. ' +
            'Remote images are not fetched: they become their alt text, listed in the X-Docproc-Warnings header.',
          querystring: ConvertQuery,
          consumes: ['multipart/form-data'],
          body: ConvertMultipart,
          response: { ...documentResponses(['pdf', 'docx'], false), ...problemResponses(400, 401, 413, 415, 422, 429, 503, 504) },
        },
        // Before body validation, so a JSON or raw body is told "wrong media type", not "missing field".
        preValidation: async (request) => {
          if (!request.isMultipart()) throw new AppError(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'Send the document as multipart/form-data in a part named "file".');
        },
      },
      async (request, reply) => {
        const file = uploadedFile(request, 'file');
        const query = request.query as Static<typeof ConvertQuery>;
        const from = query.from ?? detectSourceFormat(file.data);
        if (!from) throw invalidFile('The file is neither DOCX, HTML nor Markdown text; send one of those (or say which with ?from=).');
        const to = query.to ?? 'pdf';
        if (from === 'docx' && to === 'docx') throw new AppError(400, ErrorCode.VALIDATION_ERROR, 'DOCX to DOCX is not a conversion; use to=pdf.', { details: [{ field: 'querystring.to', issue: 'must be pdf for a DOCX source' }] });

        if (to === 'pdf') services.assertCanRenderPdf();

        let output: Buffer;
        if (from === 'docx') {
          // Time from the start of the request to here: the upload, multipart parsing, auth and validation.
          output = await services.renderPdf(file.data, { trackedChanges: query.trackedChanges ?? 'markup', stages: { receive: reply.elapsedTime }, job: request.job });
        } else {
          const result = await services.workers.run<MarkupTaskInput, MarkupTaskOutput>(MARKUP_TASKS[from], {
            source: file.data,
            reference: request.uploadedFiles?.reference?.data,
            limits: { maxBytes: services.config.limits.maxFileBytes, maxNestingDepth: MAX_NESTING_DEPTH },
            remoteImages: { allowHosts: services.config.remoteImageHosts, allowPrivateAddresses: services.config.outboundAllowPrivateAddresses },
          }, request.job);
          sendWarnings(reply, result.warnings);
          const docx = toBuffer(result.docx);
          output = to === 'docx' ? docx : await services.renderPdf(docx, { trackedChanges: 'markup', job: request.job });
        }
        return sendDocument(request, reply, output, to, outputFilename(file.filename, to));
      },
    );
  };
}
