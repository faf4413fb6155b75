import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import type { SigningIdentity } from '../sign/identity.js';
import { parseCert, type Cert } from './certificates.js';

const PEM_BEGIN = '-----BEGIN CERTIFICATE-----';
const PEM_END = '-----END CERTIFICATE-----';

/**
 * Each `-----BEGIN CERTIFICATE-----` … `-----END CERTIFICATE-----` block of a text (at least one
 * character between), in one scan: the regex `BEGIN[\s\S]+?END` looked for an END to the end of the
 * text from every BEGIN (a request's 256 KB of BEGINs took ~2 s).
 */
export function pemBlocks(text: string): string[] {
  const blocks: string[] = [];
  for (let begin = text.indexOf(PEM_BEGIN); begin >= 0; ) {
    const end = text.indexOf(PEM_END, begin + PEM_BEGIN.length + 1);
    if (end < 0) break; // no later BEGIN has an END after it either
    blocks.push(text.slice(begin, end + PEM_END.length));
    begin = text.indexOf(PEM_BEGIN, end + PEM_END.length);
  }
  return blocks;
}

/** Certificates of a PEM bundle file (TRUST_ROOTS, …); a bad file stops start-up with its setting and path named. */
export function readPemBundle(file: string, setting = 'TRUST_ROOTS'): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`${setting} could not be read (${file}): ${(err as Error).message}`);
  }
  const certs = pemBlocks(text);
  for (const pem of certs) new X509Certificate(pem);
  if (certs.length === 0) throw new Error(`${setting} (${file}) holds no PEM certificate`);
  return certs;
}

/** Debian's ca-certificates bundle (TRUST_SYSTEM=true). */
export const SYSTEM_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/** Request trust roots: at most this many certificates. */
export const MAX_REQUEST_TRUST_ROOTS = 20;

/**
 * A request's `trustRoots` (one or more PEM certificates) as anchors for that request only; a text
 * without a readable certificate, or with more than MAX_REQUEST_TRUST_ROOTS, is the caller's mistake.
 */
export function requestAnchors(text: string): PortableAnchor[] | string {
  const blocks = pemBlocks(text);
  if (blocks.length === 0) return 'holds no PEM certificate (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----)';
  if (blocks.length > MAX_REQUEST_TRUST_ROOTS) return `holds ${blocks.length} certificates; at most ${MAX_REQUEST_TRUST_ROOTS} are accepted`;
  for (const [i, block] of blocks.entries()) {
    if (!parseCert(Buffer.from(block.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, ''), 'base64'))) return `certificate ${i + 1} cannot be read`;
  }
  return portableAnchors(blocks, ANCHOR_SOURCES.request);
}

/** The root the service's own signatures chain to: the last certificate of its chain (or the leaf). */
export function identityRoot(identity: SigningIdentity): string {
  const last = identity.chain.at(-1) ?? identity.certificate;
  return last.toString();
}

/** Where anchors come from, as reports name them. */
export const ANCHOR_SOURCES = {
  operator: 'TRUST_ROOTS',
  service: "the service's signing root",
  development: "docproc's development CA (NOT FOR PRODUCTION)",
  request: "the request's trustRoots",
  system: 'system store (ca-certificates)',
} as const;

/** An anchor as it crosses to a worker thread (structured-clonable). */
export interface PortableAnchor {
  pem: string;
  source: string;
  /** ISO times: trusted-list services are trusted for a period. */
  from?: string;
  until?: string;
}

/** The certificates of PEM texts as portable anchors of one source. */
export function portableAnchors(pems: string[], source: string): PortableAnchor[] {
  return pems.flatMap((pem) => pemBlocks(pem).map((block) => ({ pem: block, source })));
}

/** How a report names the anchor a chain ends at. */
export interface TrustAnchorReport {
  subject: string;
  source: string;
}

export const anchorReport = (anchor: TrustAnchor | undefined): TrustAnchorReport | null =>
  anchor ? { subject: anchor.cert.x509.subject.split('\n').join(', '), source: anchor.source } : null;

/** The warning a chain ending at the development CA carries, or undefined. */
export const developmentAnchorWarning = (anchor: TrustAnchor | undefined): string | undefined =>
  anchor?.source === ANCHOR_SOURCES.development
    ? "signed under docproc's development CA (NOT FOR PRODUCTION): it is trusted here only because this service signs with it when SIGNING_P12 is unset; no one else trusts it"
    : undefined;

/** A certificate trusted as the end of chains, with where that trust comes from. */
export interface TrustAnchor {
  cert: Cert;
  /** Named in reports: "TRUST_ROOTS", "request trustRoots", "EU trusted list BE: <service>", … */
  source: string;
  /** Trusted-list services are trusted for a period (their status history), not whenever. */
  from?: Date;
  until?: Date;
}

/** The certificates of PEM texts (each may hold several) as anchors of one source; unreadable blocks are skipped. */
export function anchorsFromPem(pems: string[], source: string): TrustAnchor[] {
  const anchors: TrustAnchor[] = [];
  for (const pem of pems) {
    for (const block of pemBlocks(pem)) {
      const cert = parseCert(Buffer.from(block.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, ''), 'base64'));
      if (cert) anchors.push({ cert, source });
    }
  }
  return anchors;
}

function sourcedAnchors(portable: PortableAnchor[]): TrustAnchor[] {
  return portable.flatMap((a) => anchorsFromPem([a.pem], a.source).map((anchor) => ({
    ...anchor,
    ...(a.from ? { from: new Date(a.from) } : {}),
    ...(a.until ? { until: new Date(a.until) } : {}),
  })));
}

const sameList = <T>(a: readonly T[], b: readonly T[], same: (x: T, y: T) => boolean = (x, y) => x === y) =>
  a.length === b.length && a.every((x, i) => same(x, b[i]!));
/** The cache's source for forVerification's sets (no PEM source is named so). */
const VERIFICATION_SET = '\0verification';
const samePortable = (a: PortableAnchor, b: PortableAnchor) => a.pem === b.pem && a.source === b.source && a.from === b.from && a.until === b.until;

/** Trust anchors, indexed by fingerprint and subject; a certificate listed twice keeps its first source. */
export class TrustStore {
  private static readonly cache: Array<{ source: string; anchors: PortableAnchor[]; pems: string[]; store: TrustStore }> = [];
  readonly anchors: TrustAnchor[];
  private readonly byFingerprint = new Map<string, TrustAnchor>();
  private readonly bySubject = new Map<string, TrustAnchor[]>();

  constructor(anchors: TrustAnchor[]) {
    this.anchors = [];
    for (const anchor of anchors) {
      const key = anchor.cert.x509.fingerprint256;
      if (this.byFingerprint.has(key)) continue;
      this.byFingerprint.set(key, anchor);
      this.anchors.push(anchor);
      const subject = anchor.cert.x509.subject;
      this.bySubject.set(subject, [...(this.bySubject.get(subject) ?? []), anchor]);
    }
  }

  /** Anchors from PEM bundles, cached per bundle so repeated verifications do not parse them again. */
  static from(pems: string[], source = 'trust roots'): TrustStore {
    return TrustStore.cached(source, [], pems, () => new TrustStore(anchorsFromPem(pems, source)));
  }

  /**
   * The store a verification uses: sourced anchors first (a certificate listed twice keeps its first
   * source), then plain PEM roots; cached per set, so repeated verifications parse nothing again.
   */
  static forVerification(trustRoots: string[], anchors: PortableAnchor[] = []): TrustStore {
    if (anchors.length === 0) return TrustStore.from(trustRoots);
    // The operator's anchors are the same for every request: cached once; a request's own roots are added on top.
    const own = anchors.filter((a) => a.source === ANCHOR_SOURCES.request);
    const operator = own.length ? anchors.filter((a) => a.source !== ANCHOR_SOURCES.request) : anchors;
    const store = TrustStore.cached(VERIFICATION_SET, operator, trustRoots, () => new TrustStore([...sourcedAnchors(operator), ...anchorsFromPem(trustRoots, 'trust roots')]));
    return store.with(sourcedAnchors(own));
  }

  /**
   * The cached store for these anchors and roots. Found by comparing the lists entry by entry, not by
   * a key string: joining a 144-certificate bundle (220 KB) and hashing it cost 0.33 ms per
   * verification, and each worker task receives fresh copies of the lists, so identity cannot match.
   */
  private static cached(source: string, anchors: PortableAnchor[], pems: string[], build: () => TrustStore): TrustStore {
    const hit = TrustStore.cache.find((entry) => entry.source === source && sameList(entry.pems, pems) && sameList(entry.anchors, anchors, samePortable));
    if (hit) return hit.store;
    const store = build();
    if (TrustStore.cache.length > 16) TrustStore.cache.length = 0;
    TrustStore.cache.push({ source, anchors: [...anchors], pems: [...pems], store });
    return store;
  }

  /** This store and `more` (a request's own roots): a new store, this one unchanged. */
  with(more: TrustAnchor[]): TrustStore {
    return more.length ? new TrustStore([...this.anchors, ...more]) : this;
  }

  anchorOf(cert: Cert): TrustAnchor | undefined {
    return this.byFingerprint.get(cert.x509.fingerprint256);
  }

  /** Anchors whose name is the issuer name of `cert` (signatures not checked). */
  issuersOf(cert: Cert): TrustAnchor[] {
    return this.bySubject.get(cert.x509.issuer) ?? [];
  }

  isAnchor(cert: Cert): boolean {
    return this.byFingerprint.has(cert.x509.fingerprint256);
  }
}
