import { Type, type Static } from '@sinclair/typebox';
import { DocumentContentType } from './document.js';
import { signAuditTrailPartExample, signOptionalPartExamples, signSignerPartExample } from './example-values.js';
import { PdfOptionQuery } from './pdf-options.js';
import { StringEnum } from './string-enum.js';

/**
 * Request/response schemas of POST /v1/sign (SuperDoc sign shape + docproc extras) and
 * GET /v1/verify/key. The engine (src/documents/sign) re-checks what JSON Schema expresses
 * poorly (a "submit" event in the audit trail) and answers 400 VALIDATION_ERROR.
 */
export const SignerSchema = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 320, description: "The signer's e-mail address." }),
    name: Type.String({ minLength: 2, maxLength: 255, description: "The signer's full name (shown on the signature and the audit page)." }),
    ip: Type.Optional(Type.String({ maxLength: 64, description: "The signer's IP address, as seen by your application." })),
    userAgent: Type.Optional(Type.String({ maxLength: 1024, description: "The signer's browser user agent." })),
  },
  {
    // SuperDoc's signer is an open object: other details (title, company, …) are kept in the audit record and printed.
    additionalProperties: Type.Union([Type.String({ maxLength: 1000 }), Type.Number(), Type.Boolean(), Type.Null()]),
    maxProperties: 40,
    description: 'Other properties (e.g. `title`, `company`: text, numbers, booleans) are kept in audit-trail.json and printed on the audit page.',
  },
);

export const AuditEventSchema = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 64, description: 'ready, scroll, field_change, submit, or any other event name of yours (recorded as given).' }),
    timestamp: Type.String({ minLength: 1, maxLength: 64, description: 'When it happened (ISO 8601).' }),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form event details (summarised on the audit page, kept whole in audit-trail.json).' })),
  },
  { additionalProperties: true },
);

export const AuditTrailSchema = Type.Array(AuditEventSchema, {
  minItems: 1,
  maxItems: 10_000,
  contains: Type.Object({ type: Type.Literal('submit') }, { additionalProperties: true }),
  description: 'What the signer did, in order. At least one "submit" event (the act of signing) is required.',
});

/** Base64 of at most 1 MB (MAX_APPEARANCE_IMAGE_BYTES), counted before decoding. */
const AppearanceImageSchema = Type.String({
  minLength: 1,
  maxLength: Math.ceil((1024 * 1024) / 3) * 4,
  contentEncoding: 'base64',
  description: 'docproc extra: a PNG or JPEG (base64, at most 1 MB and 4 megapixels) drawn in the box left of the text, as tall as the box, aspect kept. ' +
    'In multipart, send it as the file part `appearanceImage` instead.',
});

export const SignAppearanceSchema = Type.Union([
  Type.Object(
    {
      page: Type.Integer({ minimum: 1, description: '1-based page number.' }),
      x: Type.Number({ description: 'PDF points (1/72 in) from the left edge of the page.' }),
      y: Type.Number({ description: 'PDF points from the bottom edge of the page.' }),
      width: Type.Number({ exclusiveMinimum: 0 }),
      height: Type.Number({ exclusiveMinimum: 0 }),
      image: Type.Optional(AppearanceImageSchema),
    },
    { additionalProperties: false, description: 'A visible signature box showing the signer name, time and reason.' },
  ),
  Type.Object(
    {
      field: Type.String({ minLength: 1, description: 'Full name of an existing, empty signature field to fill (one another tool made, an @signpdf placeholder included).' }),
      image: Type.Optional(AppearanceImageSchema),
    },
    { additionalProperties: false },
  ),
], { description: 'Without it the signature is invisible (a zero-size widget on page 1).' });

export const AuditCertificateOptionSchema = Type.Object(
  { enabled: Type.Optional(Type.Boolean({ default: true, description: 'Append the audit-trail certificate page (not on PDFs that are already signed). Absent means true.' })) },
  { description: 'The audit-trail certificate page. The audit record is attached in every case (audit-trail.json, or audit-trail-<n>.json when countersigning).' },
);

export const SignDocumentSchema = Type.Union([
  Type.Object({ base64: Type.String({ minLength: 1, description: 'The PDF or DOCX, base64-encoded.' }), contentType: DocumentContentType }),
  Type.Object({ url: Type.String({ format: 'uri', pattern: '^https?://', description: 'Where to fetch the PDF or DOCX (http/https).' }), contentType: DocumentContentType }),
]);

export const SignP12Schema = Type.Object(
  {
    base64: Type.String({ minLength: 1, description: 'Your PKCS#12 (.p12/.pfx), base64-encoded; used for this request only, never stored.' }),
    passphrase: Type.Optional(Type.String({ default: '', description: 'The PKCS#12 passphrase; absent means empty.' })),
  },
  { additionalProperties: false, description: 'docproc extra: sign with your own certificate instead of the service certificate.' },
);

/** An optional object SuperDoc clients may send as null: null means absent. */
const OrNull = <T extends import('@sinclair/typebox').TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

const signOptionProperties = {
  eventId: Type.Optional(Type.String({ maxLength: 255, description: 'Your identifier for this signing event (printed on the audit page).' })),
  metadata: OrNull(Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form data kept in audit-trail.json; null = none.' })),
  reason: Type.Optional(Type.String({ maxLength: 500, description: 'docproc extra: /Reason of the signature.' })),
  location: Type.Optional(Type.String({ maxLength: 500, description: 'docproc extra: /Location of the signature.' })),
  contactInfo: Type.Optional(Type.String({ maxLength: 500, description: 'docproc extra: /ContactInfo of the signature.' })),
};

export const CertifySchema = StringEnum(['no-changes', 'form-filling', 'annotations'], {
  description: 'docproc extra: make this a certification signature (DocMDP) that allows, after it, no changes (`no-changes`, P=1), ' +
    'filling forms and signing (`form-filling`, P=2), or those and annotations (`annotations`, P=3). Only the first signature of a PDF can certify it ' +
    '(422 on a PDF that already carries a signature). PDF only.',
  examples: ['form-filling'],
});

export const SignatureLevelSchema = StringEnum(['B-B', 'B-T', 'B-LT', 'B-LTA'], {
  description: 'PAdES level of a PDF signature. B-B: signature only. B-T: plus a signature time-stamp (needs TSA_URL; the default when one is set). ' +
    'B-LT: plus the validation data of every signature in the document (certificates, OCSP responses, CRLs) in a DSS. B-LTA: plus a document time-stamp over it all (needs TSA_URL).',
});

export const SignJsonBodySchema = Type.Object(
  {
    document: SignDocumentSchema,
    signer: Type.Optional(SignerSchema),
    auditTrail: Type.Optional(AuditTrailSchema),
    certificate: OrNull(AuditCertificateOptionSchema),
    appearance: OrNull(SignAppearanceSchema),
    certify: Type.Optional(CertifySchema),
    p12: OrNull(SignP12Schema),
    extend: Type.Optional(StringEnum(['B-LT', 'B-LTA'], {
      description: 'docproc extra: raise an already signed PDF to this level without signing it again (signer and auditTrail are then not needed).',
    })),
    ...signOptionProperties,
  },
  { description: 'signer and auditTrail are required to sign (400 without them); only a request with `extend` goes without them.' },
);

export const SignQuerySchema = Type.Object({
  to: Type.Optional(StringEnum(['pdf', 'docx'], {
    default: 'pdf',
    description: 'pdf (default): a DOCX is converted to PDF, then signed (PAdES). docx: a DOCX keeps its format and gets an OOXML package signature.',
  })),
  level: Type.Optional(SignatureLevelSchema),
  // A DOCX is rendered to PDF before it is signed: the PDF options of convert apply (docproc extra).
  ...PdfOptionQuery,
});

/**
 * multipart/form-data text parts: the JSON members as JSON strings. File parts: `file` (the
 * document) and the caller's PKCS#12 as `p12` or as `certificate`. The `certificate` name is
 * shared with SuperDoc's audit option: sent as a FILE part it is a PKCS#12; sent as a TEXT
 * part it is the JSON `{"enabled": …}` audit option, as in the JSON body. When `certificate`
 * carries the PKCS#12, set the audit option with the `auditCertificate` text part.
 */
export const SignMultipartFieldsSchema = Type.Object({
  signer: Type.String({ description: 'JSON object: {"email", "name", "ip"?, "userAgent"?}.', examples: [signSignerPartExample] }),
  auditTrail: Type.String({ description: 'JSON array of audit events (at least one "submit").', examples: [signAuditTrailPartExample] }),
  eventId: Type.Optional(Type.String({ examples: [signOptionalPartExamples.eventId] })),
  metadata: Type.Optional(Type.String({ description: 'JSON object.', examples: [signOptionalPartExamples.metadata] })),
  certificate: Type.Optional(Type.String({ description: 'As a text part: JSON {"enabled": true|false} (audit page). As a file part: your PKCS#12.', examples: [signOptionalPartExamples.certificate] })),
  auditCertificate: Type.Optional(Type.String({ enum: ['true', 'false'], description: 'Audit page on/off when the `certificate` part is your PKCS#12 file.' })),
  passphrase: Type.Optional(Type.String({ description: 'Passphrase of the PKCS#12 file part (`p12` or `certificate`).', examples: [signOptionalPartExamples.passphrase] })),
  reason: Type.Optional(Type.String({ maxLength: 500, examples: [signOptionalPartExamples.reason] })),
  location: Type.Optional(Type.String({ maxLength: 500, examples: [signOptionalPartExamples.location] })),
  contactInfo: Type.Optional(Type.String({ maxLength: 500, examples: [signOptionalPartExamples.contactInfo] })),
  appearance: Type.Optional(Type.String({ description: 'JSON: {"page","x","y","width","height"} or {"field"}. The image goes in the `appearanceImage` file part.', examples: [signOptionalPartExamples.appearance] })),
  certify: Type.Optional(CertifySchema),
});

export const SignResponseSchema = Type.Object({
  document: Type.Object({
    base64: Type.String(),
    contentType: Type.String({ examples: ['application/pdf', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'] }),
  }),
  warnings: Type.Optional(Type.Array(Type.String())),
});

export const VerifyKeyResponseSchema = Type.Object({
  version: Type.String({ description: 'Key identifier: the first 16 hex digits of the certificate SHA-256 fingerprint (changes when the key rotates).' }),
  algorithm: Type.String({ examples: ['RSA-SHA256', 'ECDSA-SHA256'] }),
  publicKey: Type.String({ description: 'SubjectPublicKeyInfo, PEM.' }),
  fingerprint: Type.String({ description: 'SHA-256 of the signing certificate, colon-separated hex.' }),
  validFrom: Type.String({ format: 'date', description: 'First day of validity (UTC), as SuperDoc publishes it.' }),
  validTo: Type.String({ format: 'date', description: 'Last day of validity (UTC).' }),
  validFromTime: Type.String({ format: 'date-time', description: 'The exact start of validity.' }),
  validToTime: Type.String({ format: 'date-time', description: 'The exact end of validity.' }),
  issuer: Type.String(),
  subject: Type.String(),
  chain: Type.Array(Type.String(), { description: 'Signing certificate first, then its issuers, PEM.' }),
  isDevelopment: Type.Boolean({ description: 'True when the service runs with its self-made development CA (signatures for testing only).' }),
});

export type SignJsonBody = Static<typeof SignJsonBodySchema>;
export type SignQuery = Static<typeof SignQuerySchema>;
export type SignResponse = Static<typeof SignResponseSchema>;
export type VerifyKeyResponse = Static<typeof VerifyKeyResponseSchema>;
