import type { JobContext } from '../compute/fair-queue.js';
import { annotateDocument, type AnnotateInput } from './annotate.js';
import { convertDocument, type ConvertInput } from './convert.js';
import type { OperationDeps } from './deps.js';
import { extendSignature, signDocument, signingCertificate, type SignInput } from './sign.js';
import { verifyDocument, type VerifyInput } from './verify.js';

export type { AnnotateInput, ConvertInput, SignInput, VerifyInput };
export type { DocumentInput, OperationDeps, RenderOptions, SigningSetup } from './deps.js';
export { documentWorkers, type DocumentWorkers } from './document-workers.js';

/**
 * The operations the routes call, one per request: each takes typed input (bytes or a document
 * source, already parsed from the request) and runs the whole pipeline — detection, the workers,
 * the renderer, the signing policy — knowing nothing of HTTP.
 */
export function createOperations(deps: OperationDeps) {
  return {
    convert: (input: ConvertInput, job?: JobContext) => convertDocument(deps, input, job),
    annotate: (input: AnnotateInput, job?: JobContext) => annotateDocument(deps, input, job),
    sign: (input: SignInput, job?: JobContext) => signDocument(deps, input, job),
    extendSignature: (input: Parameters<typeof extendSignature>[1], job?: JobContext) => extendSignature(deps, input, job),
    signingCertificate: () => signingCertificate(deps),
    verify: (input: VerifyInput, job?: JobContext) => verifyDocument(deps, input, job),
  };
}

export type Operations = ReturnType<typeof createOperations>;
