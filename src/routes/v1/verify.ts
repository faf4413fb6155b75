import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { bodyBudget } from '../../http/body-budget.js';
import { uploadedFile } from '../../http/multipart.js';
import { DOCUMENT_ERRORS, errorResponses, URL_INPUT_ERRORS } from '../../http/response-docs.js';
import type { DocumentSource } from '../../inputs/document-source.js';
import type { Services } from '../../services.js';
import { verifyJsonExample } from './schemas/examples.js';
import { TrustRootsSchema, VerifyAnswerSchema, VerifyJsonBodySchema } from './schemas/verify.js';

const VerifyMultipartSchema = Type.Object({ file: Type.String({ format: 'binary', description: 'The signed PDF or DOCX' }), trustRoots: Type.Optional(TrustRootsSchema) });

/** What POST /v1/verify takes (anything else: 415 naming these). */
/** The request's own roots (added to the operator's for this request only), or a 400 naming what is wrong. */

export default function verifyRoutes(services: Services): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/verify',
      {
        ...bodyBudget(services.config.limits.maxJsonBytes, { multipartTwin: true }),
        schema: {
          operationId: 'verify',
          tags: ['Verify'],
          summary: 'Check every signature of a PDF or DOCX: authentic, intact, unchanged since',
          description:
            'For each signature field: integrity of the signed bytes, the CMS signature, the certificate chain against the trusted roots (TRUST_ROOTS, the service’s own signing root, TRUST_SYSTEM, TRUST_LISTS, and the request’s own `trustRoots`, each named as the anchor’s `source`), ' +
            'byte-range coverage, and what later revisions changed (object by object). `valid` is true only when there is at least one signature and every one is TOTAL_PASSED with no disallowed change after it. ' +
            'A DOCX (detected by its ZIP signature) is checked as an OOXML package signature (XML-DSig): the digest of every signed part, the SignatureValue over the canonical SignedInfo, the chain, and which parts no signature covers; its report has `document.format: "docx"`.',
          body: {
            content: {
              'application/json': { schema: { ...VerifyJsonBodySchema, examples: [verifyJsonExample] } },
              'multipart/form-data': { schema: VerifyMultipartSchema },
            },
          } as never,
          response: { 200: VerifyAnswerSchema, ...errorResponses(...DOCUMENT_ERRORS, ...URL_INPUT_ERRORS) },
        },
      },
      async (request) => {
        const body = request.body as { trustRoots?: string } & Partial<Static<typeof VerifyJsonBodySchema>>;
        const document = request.isMultipart() ? uploadedFile(request, 'file').data : (body.document as DocumentSource);
        return services.operations.verify({ document, trustRoots: body.trustRoots }, request.job);
      },
    );
  };
}
