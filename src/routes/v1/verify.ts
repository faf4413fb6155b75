import { reportWarnings } from '../../documents/warnings.js';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { bodyBudget } from '../../http/body-budget.js';
import type { DocxVerifyReport, VerifyReport } from '../../documents/verify/index.js';
import { uploadedFile } from '../../http/multipart.js';
import { problemResponses } from '../../http/problem.js';
import { detectFormat } from '../../inputs/detect-format.js';
import { loadDocumentSource, type DocumentSource } from '../../inputs/document-source.js';
import type { Services } from '../../services.js';
import type { VerifyDocxTaskInput, VerifyPdfTaskInput } from '../../../workers/verify.js';
import { verifyJsonExample } from './schemas/examples.js';
import { VerifyAnswerSchema, VerifyJsonBodySchema } from './schemas/verify.js';

const VerifyMultipartSchema = Type.Object({ file: Type.String({ format: 'binary', description: 'The signed PDF or DOCX' }) });

/** What POST /v1/verify takes (anything else: 415 naming these). */
const VERIFIABLE_FORMATS = ['pdf', 'docx'] as const;

export default function verifyRoutes(services: Services): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/verify',
      {
        ...bodyBudget(services.config.limits.maxJsonBytes),
        schema: {
          operationId: 'verify',
          tags: ['Verify'],
          summary: 'Check every signature of a PDF or DOCX: authentic, intact, unchanged since',
          description:
            'For each signature field: integrity of the signed bytes, the CMS signature, the certificate chain against the trusted roots (TRUST_ROOTS plus the service’s own signing root), ' +
            'byte-range coverage, and what later revisions changed (object by object). `valid` is true only when there is at least one signature and every one is TOTAL_PASSED with no disallowed change after it. ' +
            'A DOCX (detected by its ZIP signature) is checked as an OOXML package signature (XML-DSig): the digest of every signed part, the SignatureValue over the canonical SignedInfo, the chain, and which parts no signature covers; its report has `document.format: "docx"`.',
          body: {
            content: {
              'application/json': { schema: { ...VerifyJsonBodySchema, examples: [verifyJsonExample] } },
              'multipart/form-data': { schema: VerifyMultipartSchema },
            },
          } as never,
          response: { 200: VerifyAnswerSchema, ...problemResponses(400, 401, 413, 415, 422, 429, 503) },
        },
      },
      async (request) => {
        const data = request.isMultipart()
          ? uploadedFile(request, 'file').data
          : await loadDocumentSource((request.body as Static<typeof VerifyJsonBodySchema>).document as DocumentSource, services.config.urlInputs);
        const { trustRoots } = await services.signing();
        const maxBytes = services.config.limits.maxFileBytes;
        const { fetch, ...revocationFetch } = services.config.revocation;
        const report = detectFormat(data, VERIFIABLE_FORMATS, { unsupportedAs: 400 }) === 'docx'
          ? await services.workers.run<VerifyDocxTaskInput, DocxVerifyReport>('verifyDocx', { docx: data, trustRoots, maxBytes }, request.job)
          : await services.workers.run<VerifyPdfTaskInput, VerifyReport>('verifyPdf', { pdf: data, trustRoots, maxBytes, ...(fetch ? { revocationFetch } : {}) }, request.job);
        return { ...report, warnings: reportWarnings(report) };
      },
    );
  };
}
