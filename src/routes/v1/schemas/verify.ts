import { WarningsSchema } from '../../../http/document-reply.js';
import { Type, type Static } from '@sinclair/typebox';
import { DocumentContentType } from './document.js';

/**
 * Request/response schemas of POST /v1/verify. The response mirrors VerifyReport from
 * src/documents/verify/types.ts (a unit test checks engine output against VerifyResponseSchema).
 */

export const VerifyDocumentSchema = Type.Union([
  Type.Object({ base64: Type.String({ minLength: 1, description: 'The signed PDF or DOCX, base64-encoded.' }), contentType: DocumentContentType }, { additionalProperties: false }),
  Type.Object(
    { url: Type.String({ format: 'uri', pattern: '^https?://', description: 'Where to fetch the signed PDF or DOCX (http/https).' }), contentType: DocumentContentType },
    { additionalProperties: false },
  ),
]);

/** An example root a caller might trust for one request (a throw-away EC certificate). */
export const EXAMPLE_TRUST_ROOT_PEM = `-----BEGIN CERTIFICATE-----\nMIIBvTCCAWOgAwIBAgIUelUPkhjq4qdWoeJaCPFC0FAPMR4wCgYIKoZIzj0EAwIw\nNDEgMB4GA1UEAwwXRXhhbXBsZSBQYXJ0bmVyIFJvb3QgQ0ExEDAOBgNVBAoMB0V4\nYW1wbGUwHhcNMjYxMTI2MDk1NjU0WhcNMzYxMTIzMDk1NjU0WjA0MSAwHgYDVQQD\nDBdFeGFtcGxlIFBhcnRuZXIgUm9vdCBDQTEQMA4GA1UECgwHRXhhbXBsZTBZMBMG\nByqGSM49AgEGCCqGSM49AwEHA0IABLvo5lUHw/aE7woetBBzye9H0TkLDvAW86HM\nd74kr/s6WPAhm5c2ibaxz4Q6NWUxdyG3Z6uUXPyA7DIvniVjWgWjUzBRMB0GA1Ud\nDgQWBBRWWrJP80pxr11qIw26KXe+mie9vjAfBgNVHSMEGDAWgBRWWrJP80pxr11q\nIw26KXe+mie9vjAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIEEu\nfZ2C17GL2t1CZJUVnHidK6rVdzSiieI4dQk3Fbe2AiEAtD7FmifadQcDi2kua7Qz\n6yLyJNWjJ02qdgya0FKoU3M=\n-----END CERTIFICATE-----\n`;

export const TrustRootsSchema = Type.String({
  minLength: 1,
  maxLength: 262_144,
  description:
    'One or more PEM certificates (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----, at most 20) trusted as roots for this request only, in addition to the ' +
    "operator's (TRUST_ROOTS, the service's signing root, TRUST_SYSTEM, TRUST_LISTS). Each signature's `signer.trustAnchor.source` names where the root it chains to comes from.",
  examples: [EXAMPLE_TRUST_ROOT_PEM],
});

export const VerifyJsonBodySchema = Type.Object(
  {
    document: VerifyDocumentSchema,
    eventId: Type.Optional(Type.String({ maxLength: 255, description: 'Your identifier for this event, as SuperDoc clients send it; not used.' })),
    trustRoots: Type.Optional(TrustRootsSchema),
  },
  { description: 'JSON body. Alternatively send multipart/form-data with the PDF or DOCX in a `file` part (and `trustRoots` as a text part).' },
);

const DateTime = (description: string) => Type.String({ format: 'date-time', description });

export const VerifySignerSummarySchema = Type.Object({
  name: Type.Union([Type.String(), Type.Null()], { description: 'Common name of the signer certificate.' }),
  email: Type.Union([Type.String(), Type.Null()]),
  organization: Type.Union([Type.String(), Type.Null()]),
});

function TrustAnchorSchema() {
  return Type.Object({
    subject: Type.String(),
    source: Type.String({
      description: "Where the anchor comes from: TRUST_ROOTS, the service's signing root, docproc's development CA (NOT FOR PRODUCTION), the request's trustRoots, the system store (ca-certificates), or an EU trusted list (territory, provider / service).",
      examples: ['EU trusted list BE: Example QTSP / Example Qualified CA'],
    }),
  });
}

export const VerifyCertificateSchema = Type.Object({
  commonName: Type.Union([Type.String(), Type.Null()]),
  email: Type.Union([Type.String(), Type.Null()]),
  organization: Type.Union([Type.String(), Type.Null()]),
  serialNumber: Type.String({ description: 'Hexadecimal, lower case.' }),
  subject: Type.String(),
  issuer: Type.String(),
  notBefore: DateTime('Start of the certificate validity.'),
  notAfter: DateTime('End of the certificate validity.'),
  chain: Type.Array(Type.String(), { description: 'Subjects of the chain as built: signer first, trust anchor last when trusted.' }),
  trustAnchor: Type.Union([TrustAnchorSchema(), Type.Null()], { description: 'The root the chain ends at and where its trust comes from; null when not trusted.' }),
});

const RevocationSchema = Type.Object(
  {
    subject: Type.String(),
    serialNumber: Type.String({ description: 'Hexadecimal, lower case.' }),
    status: Type.Union([Type.Literal('good'), Type.Literal('revoked'), Type.Literal('unknown'), Type.Literal('notChecked')], {
      description: 'notChecked: the PDF carries no evidence and REVOCATION_FETCH is off, or the certificate names no responder; it does not change the verdict. unknown: a responder could not be reached or does not know the certificate (INDETERMINATE/TRY_LATER).',
    }),
    source: Type.Union([Type.Literal('pdf-dss'), Type.Literal('cms'), Type.Literal('ocsp-fetched'), Type.Literal('crl-fetched'), Type.Literal('none')], {
      description: 'Where the evidence came from: the PDF document security store, the CMS (adbe-revocationInfoArchival), or fetched now.',
    }),
    method: Type.Union([Type.Literal('ocsp'), Type.Literal('crl'), Type.Null()]),
    producedAt: Type.Union([DateTime('When the OCSP response or CRL used was produced (thisUpdate).'), Type.Null()]),
    revokedAt: Type.Union([DateTime('Revocation time.'), Type.Null()]),
    reason: Type.Union([Type.String({ examples: ['keyCompromise'] }), Type.Null()]),
    problems: Type.Array(Type.String(), { description: 'Evidence found but not usable, and fetch failures.' }),
  },
  { description: 'Revocation status of one certificate of the chain.' },
);

export const VerifyTimestampSchema = Type.Object({
  time: Type.Union([DateTime('Time asserted by the time-stamp authority.'), Type.Null()]),
  tsa: Type.Union([Type.String(), Type.Null()], { description: 'Name of the time-stamp authority.' }),
  intact: Type.Boolean({ description: 'The message imprint matches the signature value (or, for a document time-stamp, the signed bytes).' }),
  valid: Type.Boolean({ description: "The token's own signature verifies." }),
  trusted: Type.Boolean({ description: 'The TSA certificate chains to a trusted root.' }),
  trustAnchor: Type.Optional(Type.Union([TrustAnchorSchema(), Type.Null()], { description: "The root the TSA's chain ends at and where its trust comes from." })),
  revocation: Type.Optional(Type.Array(RevocationSchema, { description: "Revocation of the time-stamp unit's chain (PDF signature time-stamps)." })),
  errors: Type.Array(Type.String()),
});

const Indication = Type.Union([Type.Literal('TOTAL_PASSED'), Type.Literal('TOTAL_FAILED'), Type.Literal('INDETERMINATE')], {
  description: 'ETSI EN 319 102-1 main indication.',
});

const SubIndication = Type.Union(
  [
    'FORMAT_FAILURE',
    'HASH_FAILURE',
    'SIG_CRYPTO_FAILURE',
    'NOT_YET_VALID',
    'EXPIRED',
    'SIGNED_DATA_NOT_FOUND',
    'NO_SIGNING_CERTIFICATE_FOUND',
    'NO_CERTIFICATE_CHAIN_FOUND',
    'OUT_OF_BOUNDS_NO_POE',
    'CRYPTO_CONSTRAINTS_FAILURE_NO_POE',
    'REVOKED',
    'REVOKED_NO_POE',
    'TRY_LATER',
  ].map((s) => Type.Literal(s)),
);


const ModificationLevel = Type.Union(
  [Type.Literal('none'), Type.Literal('archival'), Type.Literal('signatures'), Type.Literal('formFilling'), Type.Literal('annotations'), Type.Literal('other')],
  {
    description:
      'The most significant kind of change made after this signature, judged by how the document uses each changed object: archival = validation data (DSS/VRI), document time-stamps, metadata, empty invisible signature fields; signatures = also new signatures and visible signature fields; formFilling = also field values and appearances; annotations = also annotations added, changed or removed; other = something no rule explains (refused).',
  },
);

export const VerifySignatureSchema = Type.Object({
  field: Type.String({ description: 'Fully qualified name of the signature field.' }),
  signed: Type.Boolean({ description: 'False for an empty field or an unfilled placeholder.' }),
  subFilter: Type.Union([Type.String(), Type.Null()], { examples: ['adbe.pkcs7.detached', 'ETSI.CAdES.detached', 'ETSI.RFC3161'] }),
  kind: Type.Union([Type.Literal('approval'), Type.Literal('certification'), Type.Literal('documentTimestamp')]),
  signingTime: Type.Union([DateTime('Claimed signing time (signing-time attribute, else /M).'), Type.Null()]),
  reason: Type.Union([Type.String(), Type.Null()]),
  location: Type.Union([Type.String(), Type.Null()]),
  byteRange: Type.Union([Type.Array(Type.Number()), Type.Null()]),
  signer: Type.Union([VerifyCertificateSchema, Type.Null()]),
  digestAlgorithm: Type.Union([Type.String(), Type.Null()]),
  signatureAlgorithm: Type.Union([Type.String(), Type.Null()]),
  intact: Type.Boolean({ description: 'The signed digest equals the hash of the /ByteRange content.' }),
  cryptoValid: Type.Boolean({ description: "The signature verifies with the signer certificate's key." }),
  trusted: Type.Boolean({ description: 'The chain reaches a trusted root, every signature along it checked.' }),
  certificateValidAtSigningTime: Type.Boolean(),
  timestamp: Type.Union([VerifyTimestampSchema, Type.Null()]),
  revocation: Type.Array(RevocationSchema, { description: "The signer's chain, signer first (the trust anchor is not checked)." }),
  coverage: Type.Union([Type.Literal('entireFile'), Type.Literal('entireRevision'), Type.Literal('unclear')]),
  modificationsAfter: ModificationLevel,
  docMdp: Type.Union([
    Type.Object({
      permission: Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3)], { description: '1 archival updates only (validation data, document time-stamps), 2 also form filling and signing, 3 also annotations.' }),
      respected: Type.Boolean({ description: 'Later changes stay within the permission (and, for 1 and 2, no new visible signature field was added).' }),
    }),
    Type.Null(),
  ]),
  fieldMdp: Type.Union([
    Type.Object(
      {
        action: Type.Union([Type.Literal('All'), Type.Literal('Include'), Type.Literal('Exclude')]),
        fields: Type.Array(Type.String(), { description: 'Fully qualified names the action includes or excludes.' }),
        respected: Type.Boolean({ description: 'No locked field changed after this signature.' }),
      },
      { description: 'The form fields this signature locked (FieldMDP).' },
    ),
    Type.Null(),
  ]),
  auditTrail: Type.Union([
    Type.Object({}, {
      additionalProperties: true,
      description: 'The audit record docproc wrote into this signature\'s dictionary (/DocprocAuditTrail, covered by the signature): signer, audit events, document hash, certificate. Every docproc PDF signature carries one; the first signature of a document also attaches it as audit-trail.json.',
    }),
    Type.Null(),
  ]),
  indication: Indication,
  subIndication: Type.Union([SubIndication, Type.Null()]),
  errors: Type.Array(Type.String()),
  warnings: Type.Array(Type.String()),
});

export const VerifyPdfResponseSchema = Type.Object({
  valid: Type.Boolean({
    description: 'True only when there is at least one signature and every signature is TOTAL_PASSED with no disallowed change after it. Document time-stamps are not signatures: a document with only time-stamps is not valid.',
  }),
  reason: Type.String({ description: 'One sentence: why not valid, or that all is well.' }),
  signer: Type.Union([VerifySignerSummarySchema, Type.Null()], { description: 'The last signer (never a time-stamp authority).' }),
  signers: Type.Array(VerifySignerSummarySchema, { description: 'One per signature, in signing order (document time-stamps are not listed).' }),
  document: Type.Object({
    format: Type.Literal('pdf'),
    pages: Type.Integer({ minimum: 0 }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    revisions: Type.Integer({ minimum: 1 }),
    signatureCount: Type.Integer({ minimum: 0, description: 'Signatures (approval and certification), time-stamps not counted.' }),
    timestampCount: Type.Integer({ minimum: 0, description: 'Document time-stamps.' }),
    modifiedAfterLastSignature: Type.Boolean({ description: 'Anything (allowed or not) was written after the last signature, document time-stamps and validation data included.' }),
    warnings: Type.Array(Type.String(), { description: 'Structural problems found while reading the file (e.g. a broken cross-reference chain) and how they were recovered.' }),
  }),
  signatures: Type.Array(VerifySignatureSchema, { description: 'One per signed signature field, in signing order (document time-stamps are in `timestamps`).' }),
  timestamps: Type.Array(VerifySignatureSchema, {
    description: 'Document time-stamps (kind documentTimestamp), in order: each proves the document existed at its time; they sign nothing on behalf of anyone.',
  }),
  unsignedFields: Type.Array(Type.String(), { description: 'Fully qualified names of empty signature fields (not yet signed); they are not failed signatures.' }),
});

const Signed = Type.Object({
  part: Type.String({ description: 'Part name, e.g. /word/document.xml.' }),
  contentType: Type.Union([Type.String(), Type.Null()], { description: 'Content type the signature recorded for the part.' }),
  digestAlgorithm: Type.Union([Type.String(), Type.Null()]),
  transforms: Type.Array(Type.String(), { description: 'Reference transforms in order, e.g. RelationshipTransform, C14N 1.0.' }),
  relationships: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'For relationship parts signed through the RelationshipTransform: the relationship Ids covered.' }),
  intact: Type.Boolean({ description: 'The part is present, has the recorded content type, and its digest matches.' }),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const VerifyDocxSignatureSchema = Type.Object({
  part: Type.String({ description: 'The signature part, e.g. /_xmlsignatures/sig1.xml.' }),
  id: Type.Union([Type.String(), Type.Null()], { description: 'Id attribute of the XML-DSig Signature.' }),
  signingTime: Type.Union([DateTime('Claimed signing time (XAdES SigningTime, else the OPC SignatureTime).'), Type.Null()]),
  reason: Type.Union([Type.String(), Type.Null()], { description: "The signer's stated purpose (Office SignatureComments)." }),
  signer: Type.Union([VerifyCertificateSchema, Type.Null()]),
  digestAlgorithm: Type.Union([Type.String(), Type.Null()]),
  signatureAlgorithm: Type.Union([Type.String(), Type.Null()]),
  canonicalization: Type.Union([Type.String(), Type.Null()], { description: 'Canonicalization of SignedInfo.' }),
  xades: Type.Boolean({ description: 'The signature signs XAdES properties (signing certificate, signing time).' }),
  intact: Type.Boolean({ description: 'Every signed part and signed object matches its digest.' }),
  cryptoValid: Type.Boolean({ description: 'SignatureValue verifies over the canonical SignedInfo with the signer certificate key.' }),
  trusted: Type.Boolean({ description: 'The chain reaches a trusted root, every signature along it checked.' }),
  certificateValidAtSigningTime: Type.Boolean(),
  timestamp: Type.Union([VerifyTimestampSchema, Type.Null()], { description: 'XAdES SignatureTimeStamp, when present.' }),
  signedObjects: Type.Array(Type.Object({ uri: Type.String(), type: Type.Union([Type.String(), Type.Null()]), intact: Type.Boolean() }), {
    description: 'Same-document references of SignedInfo (package object, Office object, XAdES properties).',
  }),
  parts: Type.Array(Signed, { description: 'Package parts listed in the signed Manifest.' }),
  indication: Indication,
  subIndication: Type.Union([SubIndication, Type.Null()]),
  errors: Type.Array(Type.String()),
  warnings: Type.Array(Type.String()),
});

export const VerifyDocxResponseSchema = Type.Object({
  valid: Type.Boolean({ description: 'True only when there is at least one signature and every signature is TOTAL_PASSED.' }),
  reason: Type.String({ description: 'One sentence: why not valid, or that all is well.' }),
  signer: Type.Union([VerifySignerSummarySchema, Type.Null()], { description: 'The last signer (by signing time).' }),
  signers: Type.Array(VerifySignerSummarySchema, { description: 'One per signature, by signing time.' }),
  document: Type.Object({
    format: Type.Literal('docx'),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    signatureCount: Type.Integer({ minimum: 0 }),
    parts: Type.Integer({ minimum: 0, description: 'Parts in the package ([Content_Types].xml excluded).' }),
    uncoveredParts: Type.Array(Type.String(), { description: 'Parts no signature covers (the signature parts and their origin excluded).' }),
    warnings: Type.Array(Type.String()),
  }),
  signatures: Type.Array(VerifyDocxSignatureSchema, { description: 'One per OOXML signature part, by signing time.' }),
});

/** A PDF report (document.format "pdf", unchanged shape) or a DOCX report (document.format "docx"). */
export const VerifyResponseSchema = Type.Union([VerifyPdfResponseSchema, VerifyDocxResponseSchema]);

/** What POST /v1/verify answers: the engine's report plus `warnings`, the report's notes (document, signatures, time-stamps) in one list. */
const withWarnings = <T extends typeof VerifyPdfResponseSchema | typeof VerifyDocxResponseSchema>(report: T) =>
  Type.Composite([report, Type.Object({ warnings: WarningsSchema })]);
export const VerifyAnswerSchema = Type.Union([withWarnings(VerifyPdfResponseSchema), withWarnings(VerifyDocxResponseSchema)], {
  title: 'VerifyReport',
  description: 'The verification report: a PDF report (document.format "pdf") or a DOCX report (document.format "docx"), with `valid`, the signers, every signature and `warnings`.',
});

export type VerifyJsonBody = Static<typeof VerifyJsonBodySchema>;
export type VerifyResponse = Static<typeof VerifyResponseSchema>;
