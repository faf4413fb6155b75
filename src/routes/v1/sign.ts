import type { PortableAnchor } from '../../documents/pki/trust.js';
import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { bodyBudget, NO_BODY } from '../../http/body-budget.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { detectFormat } from '../../inputs/detect-format.js';
import { describeCertificate, type SignRequest } from '../../documents/sign/index.js';
import { DomainError, ErrorCode, fileTooLarge, invalidFile, validationError } from '../../errors/domain-error.js';
import { MAX_APPEARANCE_IMAGE_BYTES } from '../../documents/sign/pdf/appearance-image.js';
import { documentResponses, outputFilename, sendDocument } from '../../http/document-reply.js';
import { jsonField, uploadedFile } from '../../http/multipart.js';
import { DOCUMENT_ERRORS, errorResponses, KEYED_ERRORS, RENDER_ERRORS, URL_INPUT_ERRORS } from '../../http/response-docs.js';
import { validateValue } from '../../http/validate.js';
import { decodeBase64, loadDocumentSource, type DocumentSource } from '../../inputs/document-source.js';
import type { Services } from '../../services.js';
import type { SignatureLevel } from '../../documents/sign/ltv.js';
import type { ExtendTaskInput, SignTaskInput, SignTaskOutput } from '../../../workers/sign.js';
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
import { toBuffer } from './shared.js';

/** What POST /v1/sign takes (anything else: 415 naming these). */
const SIGNABLE_FORMATS = ['pdf', 'docx'] as const;

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
  document: Buffer;
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
        const input = request.isMultipart() ? readMultipart(request, request.body as MultipartBody) : await readJson(request.body as JsonBody);
        input.request.requestId = String(request.id);
        input.request.documentName = input.filename;
        const to = request.query.to ?? 'pdf';
        const isPdf = detectFormat(input.document, SIGNABLE_FORMATS, { filename: input.filename, unsupportedAs: ErrorCode.INVALID_FILE_FORMAT }) === 'pdf';
        if (to === 'docx' && isPdf) throw invalidFile('to=docx signs DOCX documents; this is a PDF (use to=pdf).');
        if (to === 'docx' && input.request.certify) throw validationError('certify makes a PDF certification signature (to=pdf); a DOCX package signature cannot certify.', [{ field: 'certify', issue: 'PDF only' }]);

        const { pdf, outputFilename: wantedName } = pdfOptionsFrom(request.query);
        if (pdf && (isPdf || to === 'docx')) throw validationError('The PDF options apply when a DOCX is rendered to PDF before signing (to=pdf); this request renders nothing.', [{ field: 'querystring', issue: 'PDF options given' }]);
        const level = request.query.level;
        if (level && to === 'docx') throw validationError('level applies to PDF signatures (to=pdf); a DOCX package signature has no PAdES level.', [{ field: 'level', issue: 'PDF only' }]);
        const setup = await services.signing();
        const { portable } = setup;
        const task: SignTaskInput = {
          document: input.document,
          request: input.request,
          identity: portable,
          p12: input.p12,
          tsa: tsaFor(level),
          level,
          ltv: level === 'B-LT' || level === 'B-LTA' ? ltvFor(setup) : undefined,
        };
        let name: string;
        if (to === 'docx') {
          name = 'signDocxTask';
        } else {
          name = 'signPdfTask';
          if (!isPdf) {
            task.receivedSha256 = createHash('sha256').update(input.document).digest('hex');
            task.document = await services.renderPdf(input.document, { trackedChanges: 'markup', pdf, job: request.job });
          }
        }
        const result = await services.workers.run<SignTaskInput, SignTaskOutput>(name, task, request.job);
        return sendDocument(request, reply, toBuffer(result.document), to, outputFilename(wantedName ?? input.filename, to, 'signed'), result.warnings);
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
      async () => describeCertificate((await services.signing()).identity),
    );
  };

  /** The TSA, required by the levels that time-stamp. */
  function tsaFor(level: SignatureLevel | undefined) {
    const url = services.config.signing.tsaUrl;
    if (!url && (level === 'B-T' || level === 'B-LTA')) {
      throw new DomainError(ErrorCode.SIGNING_ERROR, `${level} needs a time-stamp authority, and this service has none (TSA_URL is not set).`);
    }
    return url ? { url, allowPrivateAddresses: services.config.outboundAllowPrivateAddresses } : undefined;
  }

  /** B-LT's trust anchors, and how to fetch revocation data (only with REVOCATION_FETCH on). */
  function ltvFor({ trustRoots, anchors }: { trustRoots: string[]; anchors: PortableAnchor[] }) {
    const { fetch: enabled, ...fetch } = services.config.revocation;
    return { trustRoots, anchors, fetch: enabled ? fetch : undefined };
  }

  async function extendSignedPdf(request: FastifyRequest, reply: FastifyReply, level: 'B-LT' | 'B-LTA') {
    const body = request.body as JsonBody;
    const document = await loadDocumentSource(body.document as DocumentSource, services.config.urlInputs);
    detectFormat(document, ['pdf'], { unsupportedAs: ErrorCode.INVALID_FILE_FORMAT });
    const task: ExtendTaskInput = { document, level, ltv: ltvFor(await services.signing()), tsa: tsaFor(level) };
    const result = await services.workers.run<ExtendTaskInput, SignTaskOutput>('extendPdfTask', task, request.job);
    return sendDocument(request, reply, toBuffer(result.document), 'pdf', outputFilename(undefined, 'pdf', level.toLowerCase()), result.warnings);
  }

  async function readJson(body: JsonBody): Promise<SignInput> {
    // Optional in the schema only so that `extend` can go without them (generated clients keep a plain object type).
    const missing = (['signer', 'auditTrail'] as const).filter((name) => body[name] === undefined || body[name] === null);
    if (missing.length) {
      throw validationError(`The request is invalid: body must have required ${missing.map((m) => `property '${m}'`).join(' and ')} (only an "extend" request goes without them).`,
        missing.map((field) => ({ field: `body.${field}`, issue: 'required' })));
    }
    const document = await loadDocumentSource(body.document as DocumentSource, services.config.urlInputs);
    // SuperDoc clients send absent optional objects as null.
    const present = Object.fromEntries(Object.entries(body).filter(([, value]) => value !== null)) as JsonBody;
    const { document: _doc, p12, ...request } = present;
    const signRequest = { ...request, appearance: withImageBytes(request.appearance ?? undefined) } as SignRequest;
    return {
      document,
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
