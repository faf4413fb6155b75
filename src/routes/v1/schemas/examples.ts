import type { AnnotateJsonBody } from './annotate.js';
import { EXAMPLE_DOCX_BASE64, EXAMPLE_PDF_BASE64, exampleAuditTrail, exampleFields, exampleSigner } from './example-values.js';
import type { SignJsonBody } from './sign.js';
import type { VerifyJsonBody } from './verify.js';

/**
 * JSON request bodies for the OpenAPI document, typed by their schemas, so Swagger UI's "Try it out"
 * starts from a request that succeeds as is (test/client/all-operations.test.ts sends each one and
 * checks the answer). The values, and the multipart part examples, are in example-values.ts.
 */
export { EXAMPLE_DOCX_BASE64, EXAMPLE_PDF_BASE64 };

export const annotateJsonExample: AnnotateJsonBody = {
  document: { base64: EXAMPLE_DOCX_BASE64 },
  fields: exampleFields,
};

export const signJsonExample: SignJsonBody = {
  document: { base64: EXAMPLE_PDF_BASE64 },
  signer: exampleSigner,
  auditTrail: exampleAuditTrail,
  eventId: 'order-A-1042',
  reason: 'I agree to the terms',
};

/** An unsigned PDF: the report says valid=false, "The document has no signatures." */
export const verifyJsonExample: VerifyJsonBody = {
  document: { base64: EXAMPLE_PDF_BASE64 },
};
