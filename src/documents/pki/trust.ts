import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import type { SigningIdentity } from '../sign/identity.js';
import { parseCert, type Cert } from './certificates.js';

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Certificates of a PEM bundle file (TRUST_ROOTS); a bad file stops start-up with its path named. */
export function readPemBundle(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`TRUST_ROOTS could not be read (${file}): ${(err as Error).message}`);
  }
  const certs = text.match(PEM_BLOCK) ?? [];
  for (const pem of certs) new X509Certificate(pem);
  if (certs.length === 0) throw new Error(`TRUST_ROOTS (${file}) holds no PEM certificate`);
  return certs;
}

/** The root the service's own signatures chain to: the last certificate of its chain (or the leaf). */
export function identityRoot(identity: SigningIdentity): string {
  const last = identity.chain.at(-1) ?? identity.certificate;
  return last.toString();
}

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
    for (const block of pem.match(PEM_BLOCK) ?? []) {
      const cert = parseCert(Buffer.from(block.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, ''), 'base64'));
      if (cert) anchors.push({ cert, source });
    }
  }
  return anchors;
}

/** Trust anchors, indexed by fingerprint and subject; a certificate listed twice keeps its first source. */
export class TrustStore {
  private static readonly cache = new Map<string, TrustStore>();
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
    const key = `${source}\n${pems.join('\n')}`;
    let store = TrustStore.cache.get(key);
    if (!store) {
      store = new TrustStore(anchorsFromPem(pems, source));
      if (TrustStore.cache.size > 16) TrustStore.cache.clear();
      TrustStore.cache.set(key, store);
    }
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
