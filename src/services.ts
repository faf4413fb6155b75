import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { AccountService } from './accounts/account-service.js';
import { LogMailer, SmtpMailer, type Mailer } from './accounts/mailer.js';
import { WorkerPool } from './compute/worker-pool.js';
import { ConfigError, type Config } from './config.js';
import { DomainError, ErrorCode } from './errors/domain-error.js';
import { loadSigningIdentity, toPortable } from './documents/sign/identity.js';
import { Metrics } from './http/metrics.js';
import type { ConversionStages } from './office/stages.js';
import { OfficePool } from './office/index.js';
import { decideJail, probeJail } from './office/jail.js';
import { convertOfficeToPdf, type DocxPreparer, type MarginDrawer } from './documents/docx-pdf/index.js';
import { ANCHOR_SOURCES, identityRoot, portableAnchors, readPemBundle, SYSTEM_BUNDLE, type PortableAnchor } from './documents/pki/trust.js';
import { loadTrustedListAnchors } from './documents/pki/trusted-lists.js';
import { createOperations, documentWorkers, type Operations, type RenderOptions, type SigningSetup } from './operations/index.js';
import { projectRoot } from './project-root.js';
import { createStore, type Store } from './store/index.js';

const { version } = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string };

/** One dependency's state in the readiness report (GET /v1/health/ready). */
export type DependencyCheck = { status: 'up' | 'down'; shared?: boolean; detail?: string; stats?: Record<string, number | string | boolean> };

/**
 * Everything long-lived the routes call: built once at start-up, closed once at shutdown.
 * Routes depend on these, never on Redis, Piscina or LibreOffice directly.
 */
export interface Services {
  config: Config;
  version: string;
  startTime: Date;
  store: Store;
  mailer: Mailer;
  accounts: AccountService;
  metrics: Metrics;
  workers: WorkerPool;
  /** What the routes call: one operation per request (src/operations/). */
  operations: Operations;
  /** Warm LibreOffice processes; absent when OFFICE_ENABLED=false. */
  office?: OfficePool;
  /** The service's signing identity (loaded once) and the roots verify trusts. */
  signing(): Promise<SigningSetup>;
  /** Renders an office document (DOCX unless options.format says otherwise) to PDF on the office pool; 503 when this instance runs without one. */
  renderPdf(document: Buffer, options: RenderOptions): Promise<Buffer>;
  /** Throws the same 503 up front, before work whose result would only be rendered. */
  assertCanRenderPdf(): OfficePool;
  readiness(): Promise<Record<string, DependencyCheck>>;
  /** Shutdown's last resort: stops queued and running documents, whose requests then get 503. */
  abandonWork(): Promise<void>;
  close(): Promise<void>;
}

export type { RenderOptions, SigningSetup } from './operations/index.js';

export interface ServiceOverrides {
  store?: Store;
  mailer?: Mailer;
}

async function checkStore(store: Store): Promise<DependencyCheck> {
  const started = Date.now();
  try {
    await store.ping();
    return { status: 'up', shared: true, stats: { kind: store.kind, latencyMs: Date.now() - started } };
  } catch {
    return { status: 'down', shared: true, detail: 'the key store does not answer', stats: { kind: store.kind } };
  }
}

/** TRUST_SYSTEM and TRUST_LISTS, read once at start-up: a bundle or list that cannot be used stops it, naming the setting. */
function loadExtraAnchors(config: Config, log: FastifyBaseLogger): PortableAnchor[] {
  let system: PortableAnchor[] = [];
  try {
    system = config.trust.system ? portableAnchors(readPemBundle(SYSTEM_BUNDLE, 'TRUST_SYSTEM'), ANCHOR_SOURCES.system) : [];
  } catch (err) {
    throw new ConfigError('TRUST_SYSTEM', `cannot be used: ${(err as Error).message}`);
  }
  try {
    return [...system, ...loadTrustedListAnchors(config.trust, log)];
  } catch (err) {
    throw new ConfigError('TRUST_LISTS', `cannot be used: ${(err as Error).message}`);
  }
}

export function createServices(config: Config, log: FastifyBaseLogger, overrides: ServiceOverrides = {}): Services {
  const store = overrides.store ?? createStore(config);
  const mailer = overrides.mailer ?? (config.smtpUrl ? new SmtpMailer(config.smtpUrl, config.mailFrom) : new LogMailer(log));
  const accounts = new AccountService(store, mailer, { pepper: config.pepper, ...config.auth });
  const workers = new WorkerPool(config.workers);
  const metrics = new Metrics();
  const office = config.office.enabled
    ? new OfficePool({
        jail: decideJail(probeJail(), config.office.allowUnjailed, (message) => log.warn(message)),
        size: config.office.poolSize,
        timeoutMs: config.office.convertTimeoutMs,
        maxJobsPerProcess: config.office.maxJobsPerProcess,
        maxRssBytes: config.office.maxRssBytes,
        nice: config.office.nice,
        maxQueue: config.office.maxQueue,
        queueWaitMs: config.office.queueWaitMs,
        handleSignals: false,
      })
    : undefined;
  if (office) metrics.observeOffice(office);
  const extraAnchors = loadExtraAnchors(config, log);
  let signingSetup: Promise<SigningSetup> | undefined;
  const loadSigning = async (): Promise<SigningSetup> => {
    const identity = await loadSigningIdentity({ signingP12: config.signing.p12, signingP12Password: config.signing.p12Password, dataDir: config.dataDir });
    if (identity.isDevelopment && config.production) {
      log.error(`ALLOW_DEVELOPMENT_SIGNING=true in production: documents are signed by the development CA kept in ${config.dataDir}, which no one trusts; set SIGNING_P12 to the operator's PKCS#12 before real use`);
    } else if (identity.isDevelopment) {
      log.warn(`SIGNING_P12 not set: signing with a development CA kept in ${config.dataDir}; signatures are for development only`);
    }
    const configured = config.signing.trustRootsFile ? readPemBundle(config.signing.trustRootsFile) : [];
    const anchors = [
      ...portableAnchors(configured, ANCHOR_SOURCES.operator),
      ...portableAnchors([identityRoot(identity)], identity.isDevelopment ? ANCHOR_SOURCES.development : ANCHOR_SOURCES.service),
      ...extraAnchors,
    ];
    return { identity, portable: toPortable(identity), trustRoots: [...configured, identityRoot(identity)], anchors };
  };
  const tasks = documentWorkers(workers);
  const prepareOnWorker: DocxPreparer = (docx, mode, job, format) => tasks.prepareDocx({ docx, mode, format }, job);
  const drawMarginOnWorker: MarginDrawer = async (pdf, keepAnnotations, job) => {
    const out = await tasks.commentsInMargin({ pdf, keepAnnotations }, job);
    return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  };
  const assertCanRenderPdf = () => {
    if (!office) throw new DomainError(ErrorCode.SERVICE_BUSY, 'PDF rendering is disabled on this instance (OFFICE_ENABLED=false).');
    return office;
  };

  const signing = (): Promise<SigningSetup> => {
    signingSetup ??= loadSigning().catch((err) => {
      signingSetup = undefined;
      throw err;
    });
    return signingSetup;
  };
  const renderPdf = async (document: Buffer, options: RenderOptions): Promise<Buffer> => {
    const stages: ConversionStages = { ...options.stages };
    const pdf = await convertOfficeToPdf(assertCanRenderPdf(), document, options.format ?? 'docx', {
      trackedChanges: options.trackedChanges,
      pdf: options.pdf,
      stages,
      prepare: prepareOnWorker,
      drawMargin: drawMarginOnWorker,
      job: options.job,
    });
    metrics.observeConversion(stages);
    return pdf;
  };
  const operations = createOperations({ config, workers: tasks, signing, renderPdf, assertCanRenderPdf });

  return {
    config,
    version,
    startTime: new Date(),
    store,
    mailer,
    accounts,
    metrics,
    workers,
    signing,
    office,
    operations,
    assertCanRenderPdf,
    renderPdf,
    async readiness() {
      const stats = workers.stats;
      const checks: Record<string, DependencyCheck> = {
        store: await checkStore(store),
        workers: { status: stats.threads > 0 ? 'up' : 'down', stats: { threads: stats.threads, queued: stats.queued } },
      };
      if (office) {
        const pool = office.stats();
        checks.office = { status: office.ready ? 'up' : 'down', ...(office.ready ? {} : { detail: 'no LibreOffice process is up yet' }), stats: { ...pool } };
      }
      return checks;
    },
    async abandonWork() {
      await Promise.allSettled([office?.close(), workers.close()]);
    },
    async close() {
      await Promise.allSettled([office?.close(), workers.close(), store.close(), mailer.close()]);
    },
  };
}

export function describeSetup(services: Services, log: FastifyBaseLogger) {
  const { config } = services;
  if (services.store.kind === 'memory') log.warn('REDIS_URL not set: keys and codes live in this process only (one instance, lost on restart)');
  if (services.mailer.kind === 'log') log.warn('SMTP_URL not set: verification mails are written to this log (dev outbox)');
  if (config.pepperIsDefault) log.warn('API_KEY_PEPPER not set: using the development pepper; set a secret in production');
  if (config.outboundAllowPrivateAddresses) log.warn('OUTBOUND_ALLOW_PRIVATE_ADDRESSES=true: URL inputs, remote images and the TSA may reach private and loopback addresses');
  for (const message of remoteInputNotices(config)) log.warn(message);
}

/**
 * ALLOW_URL_INPUTS and REMOTE_IMAGE_HOSTS are inputs to one remote-input policy (src/inputs/remote-inputs.ts)
 * since issue 23; each now reaches the operation it did not before, which start-up says (nothing silent).
 */
export function remoteInputNotices(config: Config): string[] {
  const notices: string[] = [];
  if (config.urlInputs.allowed) {
    notices.push('ALLOW_URL_INPUTS=true: caller-given URLs are fetched from any public host — documents, annotate images and (one remote-input policy) Markdown/HTML images too');
  }
  if (config.remoteImageHosts.length > 0) {
    notices.push(`REMOTE_IMAGE_HOSTS=${config.remoteImageHosts.join(',')}: images from these hosts are fetched for Markdown/HTML conversions and (one remote-input policy) annotate image fields too`);
  }
  return notices;
}
