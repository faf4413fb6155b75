import { isIP } from 'node:net';
import os from 'node:os';
import { DEFAULT_BACKGROUND_NICE } from './compute/background-priority.js';

/**
 * Every setting comes from the environment, is parsed and checked once here, and start-up
 * stops with a message naming the variable when one is wrong. The README's table lists them.
 */
export interface RevocationFetchConfig {
  fetch: boolean;
  timeoutMs: number;
  maxBytes: number;
  allowPrivateAddresses: boolean;
}

export interface Config {
  /** NODE_ENV=production: no development fallback is accepted (see assertProductionReady). */
  production: boolean;
  port: number;
  host: string;
  logLevel: string;
  publicUrl?: string;
  redisUrl?: string;
  smtpUrl?: string;
  mailFrom: string;
  /** Secret mixed into the hashes of verification codes and API keys. */
  pepper: string;
  pepperIsDefault: boolean;
  /** Fastify's trustProxy: false, a hop count, or the proxies' addresses/CIDRs. Never `true` (that trusts the client). */
  trustProxy: false | number | string[];
  /** TRUST_REQUEST_ID: keep a well-formed X-Request-Id from the request (a trusted proxy sets it); otherwise make one. */
  trustRequestId: boolean;
  dataDir: string;
  auth: {
    codeTtlSeconds: number;
    codeMaxAttempts: number;
    registerPerEmailPerHour: number;
    registerPerIpPerHour: number;
    verifyPerIpPerHour: number;
    keyRotationGraceSeconds: number;
    keyRotationsPerHour: number;
  };
  limits: {
    rateLimitPerWindow: number;
    rateLimitWindowSeconds: number;
    concurrencyPerKey: number;
    maxFileBytes: number;
    maxJsonBytes: number;
    /** Largest multipart text field (JSON options, signer, fields…); files have maxFileBytes. */
    maxFieldBytes: number;
    requestTimeoutMs: number;
    /** MAX_INFLIGHT_BODY_MB: request bodies one replica holds at once (503 + Retry-After past it). */
    maxInflightBodyBytes: number;
  };
  /** memoryMb: heap ceiling of each worker thread (WORKER_MEMORY_MB); see the README's memory budget. */
  /** `nice`: BACKGROUND_NICE, how far below the event loop worker threads (and office processes) run. */
  workers: { threads: number; maxQueue: number; taskTimeoutMs: number; queueWaitMs: number; memoryMb: number; nice: number };
  office: {
    enabled: boolean;
    /** Run LibreOffice without its bubblewrap jail where the jail cannot be set up (default false: refuse to start). */
    allowUnjailed: boolean;
    poolSize: number;
    maxQueue: number;
    /** QUEUE_WAIT_MS: how long a conversion may wait for a process (503 + Retry-After past it). */
    queueWaitMs: number;
    convertTimeoutMs: number;
    maxJobsPerProcess: number;
    maxRssBytes: number;
    /** BACKGROUND_NICE: the office processes run this many nice steps below the service. */
    nice: number;
  };
  /** allowPrivateAddresses mirrors OUTBOUND_ALLOW_PRIVATE_ADDRESSES, which governs every outbound request. */
  urlInputs: { allowed: boolean; allowHttp: boolean; maxBytes: number; timeoutMs: number; allowPrivateAddresses: boolean };
  /** OUTBOUND_ALLOW_PRIVATE_ADDRESSES: the outbound guard may reach private and loopback addresses (on-premise TSA/OCSP). */
  outboundAllowPrivateAddresses: boolean;
  /** METRICS_TOKEN: the bearer token /metrics needs; unset switches /metrics off. */
  metricsToken?: string;
  /** Hosts whose images Markdown/HTML conversions may fetch (exact or *.example.com); empty = none. */
  remoteImageHosts: string[];
  /**
   * allowDevelopment: ALLOW_DEVELOPMENT_SIGNING, which lets production sign with the development CA
   * when SIGNING_P12 is unset (a demo deployment; logged at every start).
   */
  signing: { p12?: string; p12Password: string; tsaUrl?: string; trustRootsFile?: string; allowDevelopment: boolean };
  /**
   * More trust anchors: TRUST_SYSTEM (Debian's ca-certificates bundle), TRUST_LISTS (EU trusted-list
   * XML files, comma-separated: the LOTL and national lists) with TRUST_LIST_SIGNERS (a PEM file of
   * the certificates allowed to sign them).
   */
  trust: { system: boolean; lists: string[]; listSignersFile?: string };
  /** REVOCATION_FETCH: verify asks OCSP responders / CRL distribution points the PDF carries no evidence for. */
  revocation: RevocationFetchConfig;
  shutdownGraceMs: number;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const DEV_PEPPER = 'docproc-development-pepper-change-me';
/** Peppers that appear in docproc's own examples and code: never a secret. */
const PLACEHOLDER_PEPPERS = new Set([DEV_PEPPER, 'replace-with-a-long-random-secret', 'change-me-to-a-long-random-secret']);

function readInt(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${env[name]}"`);
}

/**
 * TRUST_PROXY: "false" (default), a number of proxy hops in front of the service (the client is the
 * address that many entries from the right of X-Forwarded-For), or a comma list of the proxies'
 * addresses/CIDRs. "true" is refused: it takes the left-most entry, which the client writes itself.
 */
function readTrustProxy(env: Env): false | number | string[] {
  const raw = env.TRUST_PROXY?.trim() ?? '';
  if (raw === '' || /^(false|no|off)$/i.test(raw)) return false;
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops < 1 || hops > 10) throw new ConfigError('TRUST_PROXY', `a hop count must be between 1 and 10, got ${raw}`);
    return hops;
  }
  if (/^(true|yes|on)$/i.test(raw)) {
    throw new ConfigError('TRUST_PROXY', 'true would trust the left-most X-Forwarded-For entry, which any client can forge; give the number of proxies in front of the service (e.g. 1) or their addresses/CIDRs');
  }
  const entries = raw.split(',').map((e) => e.trim()).filter(Boolean);
  for (const entry of entries) {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    if (!family || !prefixOk || extra !== undefined) throw new ConfigError('TRUST_PROXY', `"${entry}" is neither a hop count nor an IP address or CIDR`);
  }
  return entries;
}

function readSecret(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  if (raw.length < 16) throw new ConfigError(name, 'must be at least 16 characters');
  return raw;
}

function readUrl(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw.replace(/\/\/[^@]*@/, '//***@')}"`);
  }
  if (!protocols.includes(url.protocol)) throw new ConfigError(name, `must use ${protocols.join(' or ')}`);
  return raw;
}

function readOneOf(env: Env, name: string, allowed: string[], fallback: string): string {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!allowed.includes(raw)) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw;
}

function readHostList(env: Env, name: string): string[] {
  const hosts = (env[name] ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
  for (const host of hosts) {
    if (!/^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(host)) throw new ConfigError(name, `must be a comma-separated list of host names (e.g. images.example.com,*.cdn.example.net), got "${host}"`);
  }
  return hosts;
}

/**
 * In production every development fallback is refused at start-up: verification codes written to
 * the log instead of mailed, keys in one process's memory, signatures by the development CA.
 * ALLOW_DEVELOPMENT_SIGNING=true lets a demo deployment keep the last one (it is logged loudly).
 */
function assertProductionReady(env: Env, signing: Config['signing']): void {
  if (!env.REDIS_URL?.trim()) {
    throw new ConfigError('REDIS_URL', 'must be set in production (e.g. redis://redis:6379): without it keys and codes live in one process and are lost on restart');
  }
  if (!env.SMTP_URL?.trim()) {
    throw new ConfigError('SMTP_URL', 'must be set in production (e.g. smtps://user:password@smtp.example.com:465): without it verification codes are written to the log instead of mailed');
  }
  if (!signing.p12 && !signing.allowDevelopment) {
    throw new ConfigError('SIGNING_P12', 'must be set in production (a PKCS#12 file path or its base64, with SIGNING_P12_PASSWORD); ALLOW_DEVELOPMENT_SIGNING=true signs with the development CA instead, for demos only');
  }
}

export function loadConfig(env: Env = process.env): Config {
  const production = env.NODE_ENV === 'production';
  const cpus = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
  const given = env.API_KEY_PEPPER ?? '';
  if (given && given.length < 16) throw new ConfigError('API_KEY_PEPPER', 'must be at least 16 characters');
  // A placeholder copied from an example is as public as no pepper at all.
  const pepper = PLACEHOLDER_PEPPERS.has(given) ? '' : given;
  if (!pepper && production) {
    throw new ConfigError('API_KEY_PEPPER', given ? 'is a published placeholder; set a long random secret (e.g. openssl rand -base64 32)' : 'must be set in production (a long random secret, e.g. openssl rand -base64 32)');
  }
  const mailFrom = env.MAIL_FROM?.trim() || 'docproc <no-reply@docproc.local>';
  if (!/@/.test(mailFrom)) throw new ConfigError('MAIL_FROM', 'must contain an e-mail address');

  const signing = {
    p12: env.SIGNING_P12?.trim() || undefined,
    p12Password: env.SIGNING_P12_PASSWORD ?? '',
    tsaUrl: readUrl(env, 'TSA_URL', ['http:', 'https:']),
    trustRootsFile: env.TRUST_ROOTS?.trim() || undefined,
    allowDevelopment: readBool(env, 'ALLOW_DEVELOPMENT_SIGNING', false),
  };
  const trust = {
    system: readBool(env, 'TRUST_SYSTEM', false),
    lists: (env.TRUST_LISTS ?? '').split(',').map((f) => f.trim()).filter(Boolean),
    listSignersFile: env.TRUST_LIST_SIGNERS?.trim() || undefined,
  };
  if (trust.lists.length && !trust.listSignersFile) throw new ConfigError('TRUST_LISTS', 'needs TRUST_LIST_SIGNERS: the PEM certificates allowed to sign the lists');
  const redisUrl = readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']);
  const smtpUrl = readUrl(env, 'SMTP_URL', ['smtp:', 'smtps:']);
  if (production) assertProductionReady(env, signing);

  return {
    production,
    port: readInt(env, 'PORT', 3000, 0, 65535),
    host: env.HOST?.trim() || '0.0.0.0',
    logLevel: readOneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    publicUrl: readUrl(env, 'PUBLIC_URL', ['http:', 'https:']),
    redisUrl,
    smtpUrl,
    mailFrom,
    pepper: pepper || DEV_PEPPER,
    pepperIsDefault: !pepper,
    trustProxy: readTrustProxy(env),
    trustRequestId: readBool(env, 'TRUST_REQUEST_ID', false),
    dataDir: env.DATA_DIR?.trim() || '.data',
    auth: {
      codeTtlSeconds: readInt(env, 'CODE_TTL_SECONDS', 15 * 60, 1, 24 * 3600),
      codeMaxAttempts: readInt(env, 'CODE_MAX_ATTEMPTS', 5, 1, 100),
      registerPerEmailPerHour: readInt(env, 'REGISTER_PER_EMAIL_PER_HOUR', 5, 1, 10_000),
      registerPerIpPerHour: readInt(env, 'REGISTER_PER_IP_PER_HOUR', 30, 1, 100_000),
      verifyPerIpPerHour: readInt(env, 'VERIFY_PER_IP_PER_HOUR', 60, 1, 100_000),
      keyRotationGraceSeconds: readInt(env, 'KEY_ROTATION_GRACE_SECONDS', 3600, 0, 7 * 24 * 3600),
      keyRotationsPerHour: readInt(env, 'KEY_ROTATIONS_PER_HOUR', 5, 1, 1000),
    },
    limits: {
      rateLimitPerWindow: readInt(env, 'RATE_LIMIT_MAX', 120, 1, 1_000_000),
      rateLimitWindowSeconds: readInt(env, 'RATE_LIMIT_WINDOW_SECONDS', 60, 1, 86_400),
      concurrencyPerKey: readInt(env, 'CONCURRENCY_PER_KEY', 10, 1, 10_000),
      maxFileBytes: readInt(env, 'MAX_FILE_BYTES', 25 * 1024 * 1024, 1024),
      maxJsonBytes: readInt(env, 'MAX_JSON_BYTES', 40 * 1024 * 1024, 1024),
      maxFieldBytes: readInt(env, 'MULTIPART_FIELD_MAX_BYTES', 4 * 1024 * 1024, 1024),
      requestTimeoutMs: readInt(env, 'REQUEST_TIMEOUT_MS', 120_000, 1000),
      maxInflightBodyBytes: readInt(env, 'MAX_INFLIGHT_BODY_MB', 128, 1, 1_000_000) * 1024 * 1024,
    },
    workers: {
      threads: readInt(env, 'WORKER_THREADS', cpus, 1, 256),
      maxQueue: readInt(env, 'WORKER_MAX_QUEUE', 64, 1, 100_000),
      taskTimeoutMs: readInt(env, 'WORKER_TASK_TIMEOUT_MS', 60_000, 100),
      queueWaitMs: readInt(env, 'QUEUE_WAIT_MS', 30_000, 100),
      memoryMb: readInt(env, 'WORKER_MEMORY_MB', 256, 32, 16_384),
      nice: readInt(env, 'BACKGROUND_NICE', DEFAULT_BACKGROUND_NICE, 0, 19),
    },
    office: {
      enabled: readBool(env, 'OFFICE_ENABLED', true),
      allowUnjailed: readBool(env, 'OFFICE_ALLOW_UNJAILED', false),
      poolSize: readInt(env, 'OFFICE_POOL_SIZE', cpus, 1, 64),
      maxQueue: readInt(env, 'OFFICE_MAX_QUEUE', 32, 0, 10_000),
      queueWaitMs: readInt(env, 'QUEUE_WAIT_MS', 30_000, 100),
      convertTimeoutMs: readInt(env, 'CONVERT_TIMEOUT_MS', 60_000, 100),
      maxJobsPerProcess: readInt(env, 'OFFICE_MAX_JOBS_PER_PROCESS', 1000, 1),
      maxRssBytes: readInt(env, 'OFFICE_MAX_RSS_MB', 1024, 256) * 1024 * 1024,
      nice: readInt(env, 'BACKGROUND_NICE', DEFAULT_BACKGROUND_NICE, 0, 19),
    },
    urlInputs: {
      allowed: readBool(env, 'ALLOW_URL_INPUTS', false),
      allowHttp: readBool(env, 'ALLOW_HTTP_URL_INPUTS', false),
      maxBytes: readInt(env, 'URL_INPUT_MAX_BYTES', 25 * 1024 * 1024, 1024),
      timeoutMs: readInt(env, 'URL_INPUT_TIMEOUT_MS', 10_000, 100),
      allowPrivateAddresses: readBool(env, 'OUTBOUND_ALLOW_PRIVATE_ADDRESSES', false),
    },
    outboundAllowPrivateAddresses: readBool(env, 'OUTBOUND_ALLOW_PRIVATE_ADDRESSES', false),
    metricsToken: readSecret(env, 'METRICS_TOKEN'),
    remoteImageHosts: readHostList(env, 'REMOTE_IMAGE_HOSTS'),
    signing,
    trust,
    revocation: {
      fetch: readBool(env, 'REVOCATION_FETCH', false),
      timeoutMs: readInt(env, 'REVOCATION_TIMEOUT_MS', 5_000, 100),
      maxBytes: readInt(env, 'REVOCATION_MAX_BYTES', 5 * 1024 * 1024, 1024),
      allowPrivateAddresses: readBool(env, 'OUTBOUND_ALLOW_PRIVATE_ADDRESSES', false),
    },
    shutdownGraceMs: readInt(env, 'SHUTDOWN_GRACE_MS', 30_000, 0),
  };
}
