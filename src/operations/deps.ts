import type { JobContext } from '../compute/fair-queue.js';
import type { Config } from '../config.js';
import type { PdfExportOptions } from '../documents/docx-pdf/index.js';
import type { PortableAnchor } from '../documents/pki/trust.js';
import type { PortableIdentity, SigningIdentity } from '../documents/sign/identity.js';
import { loadDocumentSource, type DocumentSource } from '../inputs/document-source.js';
import type { DocumentFormat } from '../inputs/formats.js';
import { RemoteInputs } from '../inputs/remote-inputs.js';
import type { TrackedChangesMode } from '../office/index.js';
import type { ConversionStages } from '../office/stages.js';
import type { DocumentWorkers } from './document-workers.js';

export interface RenderOptions {
  trackedChanges: TrackedChangesMode;
  /** The document's format, as detected (default docx). */
  format?: DocumentFormat;
  /** What the caller asks of the PDF; absent: LibreOffice's defaults. */
  pdf?: PdfExportOptions;
  /** Stages measured before rendering (e.g. receive); the rest are added and all are recorded as metrics. */
  stages?: ConversionStages;
  /** The request's caller and abort signal (request.job). */
  job?: JobContext;
}

export interface SigningSetup {
  identity: SigningIdentity;
  portable: PortableIdentity;
  trustRoots: string[];
  /** Every operator anchor with its source: TRUST_ROOTS, the signing root, TRUST_SYSTEM, TRUST_LISTS. */
  anchors: PortableAnchor[];
}

/** What operations are built from (src/services.ts provides it once at start-up). */
export interface OperationDeps {
  config: Config;
  workers: DocumentWorkers;
  /** The service's signing identity (loaded once) and the anchors verify trusts. */
  signing(): Promise<SigningSetup>;
  /** Renders an office document to PDF on the office pool (SERVICE_BUSY when this instance has none). */
  renderPdf(document: Buffer, options: RenderOptions): Promise<Buffer>;
  /** The same SERVICE_BUSY up front, before work whose result would only be rendered. */
  assertCanRenderPdf(): void;
}

/** A document as a request carries it: its bytes (multipart), or base64 / a URL (JSON). */
export type DocumentInput = Buffer | DocumentSource;

export const documentBytes = (input: DocumentInput, deps: OperationDeps): Promise<Buffer> | Buffer =>
  Buffer.isBuffer(input) ? input : loadDocumentSource(input, deps.config.urlInputs);

export const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** The one remote-input policy (src/inputs/remote-inputs.ts) from the configuration: ALLOW_URL_INPUTS, ALLOW_HTTP_URL_INPUTS, REMOTE_IMAGE_HOSTS, URL_INPUT_*, OUTBOUND_ALLOW_PRIVATE_ADDRESSES. */
export const remoteInputsOf = (config: Config): RemoteInputs =>
  new RemoteInputs({
    anyHost: config.urlInputs.allowed,
    allowHttp: config.urlInputs.allowHttp,
    imageHosts: config.remoteImageHosts,
    allowPrivateAddresses: config.outboundAllowPrivateAddresses,
    maxBytes: config.urlInputs.maxBytes,
    timeoutMs: config.urlInputs.timeoutMs,
  });
