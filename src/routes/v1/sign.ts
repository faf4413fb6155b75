import { Type, type Static } from '@sinclair/typebox';
import { bodyBudget, NO_BODY } from '../../http/body-budget.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SignRequest } from '../../documents/sign/index.js';
import { DomainError, ErrorCode, fileTooLarge, validationError } from '../../errors/domain-error.js';
import { MAX_APPEARANCE_IMAGE_BYTES } from '../../documents/sign/pdf/appearance-image.js';
import { documentResponses, outputFilename, sendDocument } from '../../http/document-reply.js';
import { jsonField, uploadedFile } from '../../http/multipart.js';
import { DOCUMENT_ERRORS, errorResponses, KEYED_ERRORS, RENDER_ERRORS, URL_INPUT_ERRORS } from '../../http/response-docs.js';
import { validateValue } from '../../http/validate.js';
import { decodeBase64, type DocumentSource } from '../../inputs/document-source.js';
import type { DocumentInput } from '../../operations/index.js';
import type { Services } from '../../services.js';
import {
  AuditCertificateOptionSchema,
  AuditTrailSchema,
  SignAppearanceSchema,
  SignerSchema,
  SignJsonBodySchema,
  SignMultipartFieldsSchema,
  SignQuerySchema,
  VerifyKeyResponseSchema,
} from './schemas/sign.js';
import { signJsonExample } from './schemas/examples.js';
import { pdfOptionsFrom } from './schemas/pdf-options.js';

/** What POST /v1/sign takes (anything else: 415 naming these). */

const SignMultipartSchema = Type.Composite([
  Type.Object({
    file: Type.String({ format: 'binary', description: 'The PDF or DOCX to sign' }),
    p12: Type.Optional(Type.String({ format: 'binary', description: 'Your PKCS#12 (.p12/.pfx) for this request only; never stored' })),
    appearanceImage: Type.Optional(Type.String({ format: 'binary', description: 'A PNG or JPEG (at most 1 MB and 4 megapixels) drawn in the signature box left of the text; needs `appearance`.' })),
  }),
  SignMultipartFieldsSchema,
]);

type JsonBody = Static<typeof SignJsonBodySchema>;
type MultipartBody = Static<typeof SignMultipartSchema>;

interface SignInput {
  document: DocumentInput;
  filename?: string;
  request: SignRequest;
  p12?: { data: Buffer; passphrase: string };
}

const RecordSchema = Type.Record(Type.String(), Type.Unknown());

export default function signRoutes(services: Services): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/sign',
      {
        ...bodyBudget(services.config.limits.maxJsonBytes, { multipartTwin: true }),
        schema: {
          operationId: 'sign',
          tags: ['Sign'],
          summary: 'Sign a PDF (PAdES) or a DOCX, with a bound audit trail',
          description:
            'PDF: a PAdES B-B signature (B-T with a time stamp when the service has a TSA) appended as an incremental update, so earlier signatures stay valid. ' +
            'Unless `certificate.enabled` is false an audit-trail page is added first, and `audit-trail.json` is attached; the signature covers both. ' +
            'Every PDF signature also carries its audit record in its own signature dictionary (`/DocprocAuditTrail`, reported by verify as `auditTrail`); on an already signed PDF (countersigning) that is the only place: no page and no attachment are added. ' +
            'An empty signature field is filled when named in `appearance.field`; without `appearance`, an unfilled placeholder another tool left (@signpdf, for one) is filled instead of adding a field. ' +
            '`certify` makes the first signature of a PDF a certification (DocMDP) signature. ' +
            'DOCX: converted to PDF and signed (default), or with `to=docx` kept as DOCX with an OOXML package signature. ' +
            'Multipart: `certificate` as a FILE part (or `p12`) is your PKCS#12 with `passphrase`; as a TEXT part it is the JSON audit-page option.',
          querystring: SignQuerySchema,
          body: {
            content: {
              'application/json': { schema: { ...SignJsonBodySchema, examples: [signJsonExample] } },
              'multipart/form-data': { schema: SignMultipartSchema },
            },
          } as never,
          response: { ...documentResponses(['pdf', 'docx'], true), ...errorResponses(...DOCUMENT_ERRORS, ...URL_INPUT_ERRORS, ...RENDER_ERRORS, 'SIGNING_ERROR', 'INVALID_CERTIFICATE', 'CERTIFICATE_EXPIRED') },
        },
      },
      async (request, reply) => {
        const extend = request.isMultipart() ? undefined : (request.body as JsonBody).extend;
        if (extend) return extendSignedPdf(request, reply, extend);
        const input = request.isMultipart() ? readMultipart(request, request.body as MultipartBody) : readJson(request.body as JsonBody);
        input.request.requestId = String(request.id);
        input.request.documentName = input.filename;
        const to = request.query.to ?? 'pdf';
        const { pdf, outputFilename: wantedName } = pdfOptionsFrom(request.query);
        const result = await services.operations.sign({ ...input, to, level: request.query.level, pdf }, request.job);
        return sendDocument(request, reply, result.document, to, outputFilename(wantedName ?? input.filename, to, 'signed'), result.warnings);
      },
    );

    app.get(
      '/verify/key',
      {
        bodyLimit: NO_BODY,
        config: { bodyBudget: NO_BODY },
        schema: {
          operationId: 'getSigningKey',
          tags: ['Sign'],
          summary: "The service's current signing certificate",
          description: 'As SuperDoc publishes it (version, algorithm, public key, SHA-256 fingerprint, validity, issuer), plus the certificate chain.',
          response: { 200: VerifyKeyResponseSchema, ...errorResponses(...KEYED_ERRORS) },
        },
      },
      async () => services.operations.signingCertificate(),
    );
  };

  async function extendSignedPdf(request: FastifyRequest, reply: FastifyReply, level: 'B-LT' | 'B-LTA') {
    const body = request.body as JsonBody;
    const result = await services.operations.extendSignature({ document: body.document as DocumentSource, level }, request.job);
    return sendDocument(request, reply, result.document, 'pdf', outputFilename(undefined, 'pdf', level.toLowerCase()), result.warnings);
  }

  function readJson(body: JsonBody): SignInput {
    // Optional in the schema only so that `extend` can go without them (generated clients keep a plain object type).
    const missing = (['signer', 'auditTrail'] as const).filter((name) => body[name] === undefined || body[name] === null);
    if (missing.length) {
      throw validationError(`The request is invalid: body must have required ${missing.map((m) => `property '${m}'`).join(' and ')} (only an "extend" request goes without them).`,
        missing.map((field) => ({ field: `body.${field}`, issue: 'required' })));
    }
    // SuperDoc clients send absent optional objects as null.
    const present = Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null)) as JsonBody;
    const { document: _doc, p12, ...request } = present;
    const signRequest = { ...request, appearance: withImageBytes(request.appearance ?? undefined) } as SignRequest;
    return {
      document: body.document as DocumentSource,
      request: signRequest,
      p12: p12 ? { data: decodeBase64(p12.base64, 'p12.base64', 1024 * 1024), passphrase: p12.passphrase ?? '' } : undefined,
    };
  }

  /** The appearance with its base64 image (if any) decoded. */
  function withImageBytes(appearance: Static<typeof SignAppearanceSchema> | undefined): SignRequest['appearance'] {
    if (!appearance) return undefined;
    const { image, ...rest } = appearance;
    return image === undefined ? rest : { ...rest, image: decodeAppearanceImage(image) };
  }

  function decodeAppearanceImage(base64: string): Buffer {
    if (base64.length > Math.ceil(MAX_APPEARANCE_IMAGE_BYTES / 3) * 4 + 64) {
      throw fileTooLarge('appearance.image is larger than 1 MB, the most a signature image may be. Send a smaller PNG or JPEG.');
    }
    return decodeBase64(base64, 'appearance.image', MAX_APPEARANCE_IMAGE_BYTES);
  }

  function readMultipart(request: FastifyRequest, body: MultipartBody): SignInput {
    const file = uploadedFile(request, 'file');
    const p12File = request.uploadedFiles?.p12 ?? request.uploadedFiles?.certificate;
    const certificateOption: unknown = request.uploadedFiles?.certificate
      ? body.auditCertificate === undefined ? undefined : { enabled: body.auditCertificate === 'true' }
      : jsonField(body.certificate, 'certificate');
    // null, as SuperDoc clients send an absent optional object, is absent.
    const optional = <T>(value: T | null | undefined, validate: (v: T) => T) => (value === undefined || value === null ? undefined : validate(value));
    const signRequest: SignRequest = {
      signer: validateValue(SignerSchema, jsonField(body.signer, 'signer'), 'signer'),
      auditTrail: validateValue(AuditTrailSchema, jsonField(body.auditTrail, 'auditTrail'), 'auditTrail') as SignRequest['auditTrail'],
      eventId: body.eventId,
      metadata: optional(jsonField<Record<string, unknown>>(body.metadata, 'metadata'), (v) => validateValue(RecordSchema, v, 'metadata')),
      certificate: optional(certificateOption, (v) => validateValue(AuditCertificateOptionSchema, v, 'certificate')) as SignRequest['certificate'],
      appearance: withImageBytes(optional(jsonField(body.appearance, 'appearance'), (v) => validateValue(SignAppearanceSchema, v, 'appearance'))),
      reason: body.reason,
      location: body.location,
      contactInfo: body.contactInfo,
      certify: body.certify,
    };
    const imagePart = request.uploadedFiles?.appearanceImage;
    if (imagePart) {
      if (!signRequest.appearance) throw validationError('The appearanceImage part needs an `appearance` part (a box {"page","x","y","width","height"} or {"field"}) to be drawn in.', [{ field: 'appearance', issue: 'required with appearanceImage' }]);
      signRequest.appearance = { ...signRequest.appearance, image: imagePart.data };
    }
    // Empty is what HTML forms (Swagger UI included) send for an untouched passphrase field.
    if (body.passphrase && !p12File) {
      throw new DomainError(ErrorCode.VALIDATION_ERROR, 'A passphrase was sent without a PKCS#12 file part (p12 or certificate).');
    }
    return {
      document: file.data,
      filename: file.filename,
      request: signRequest,
      p12: p12File ? { data: p12File.data, passphrase: body.passphrase ?? '' } : undefined,
    };
  }
}
