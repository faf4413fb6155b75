import { X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

/** A certificate kept in both shapes: Node's (fast signature checks) and pkijs' (names, extensions). */
export interface Cert {
  der: Buffer;
  x509: X509Certificate;
  parsed: pkijs.Certificate;
}

export interface CertSummary {
  commonName: string | null;
  email: string | null;
  organization: string | null;
  serialNumber: string;
  subject: string;
  issuer: string;
  notBefore: string;
  notAfter: string;
}

/** Parses a DER certificate; pass `parsed` when pkijs already decoded it (saves a second decode). */
export function parseCert(der: Uint8Array, parsed?: pkijs.Certificate): Cert | undefined {
  try {
    const buffer = Buffer.from(der);
    const x509 = new X509Certificate(buffer);
    // OpenSSL parses a certificate whose key it cannot decode and throws only when the key is read:
    // such a certificate can verify nothing, so it is no certificate at all here.
    void x509.publicKey;
    if (parsed) return { der: buffer, x509, parsed };
    const asn1 = asn1js.fromBER(buffer);
    if (asn1.offset === -1) return undefined;
    return { der: buffer, x509, parsed: new pkijs.Certificate({ schema: asn1.result }) };
  } catch {
    return undefined;
  }
}

const first = (value: unknown): string | null => {
  if (Array.isArray(value)) return value.length ? String(value[0]) : null;
  return typeof value === 'string' ? value : null;
};

/** A distinguished name as Node prints it (one attribute a line), on one line. */
export const oneLine = (dn: string) => dn.split('\n').filter(Boolean).join(', ');

export function summarizeCert(cert: Cert): CertSummary {
  const legacy = cert.x509.toLegacyObject() as unknown as { subject?: Record<string, unknown> };
  const subject = legacy.subject ?? {};
  const sanEmail = /email:([^,\s]+)/.exec(cert.x509.subjectAltName ?? '')?.[1] ?? null;
  return {
    commonName: first(subject.CN),
    email: first(subject.emailAddress) ?? sanEmail,
    organization: first(subject.O),
    serialNumber: cert.x509.serialNumber.toLowerCase(),
    subject: oneLine(cert.x509.subject),
    issuer: oneLine(cert.x509.issuer),
    notBefore: new Date(cert.x509.validFrom).toISOString(),
    notAfter: new Date(cert.x509.validTo).toISOString(),
  };
}

export function validAt(cert: Cert, when: Date): boolean {
  const t = when.getTime();
  return t >= new Date(cert.x509.validFrom).getTime() && t <= new Date(cert.x509.validTo).getTime();
}

/** Parsed trust anchors, cached per PEM bundle so repeated verifications do not re-parse them. */
export class TrustStore {
  private static readonly cache = new Map<string, TrustStore>();
  readonly anchors: Cert[];
  private readonly fingerprints: Set<string>;

  private constructor(pems: string[]) {
    this.anchors = [];
    for (const pem of pems) {
      for (const block of pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []) {
        const body = block.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, '');
        const cert = parseCert(Buffer.from(body, 'base64'));
        if (cert) this.anchors.push(cert);
      }
    }
    this.fingerprints = new Set(this.anchors.map((c) => c.x509.fingerprint256));
  }

  static from(pems: string[]): TrustStore {
    const key = pems.join('\n');
    let store = TrustStore.cache.get(key);
    if (!store) {
      store = new TrustStore(pems);
      if (TrustStore.cache.size > 16) TrustStore.cache.clear();
      TrustStore.cache.set(key, store);
    }
    return store;
  }

  isAnchor(cert: Cert): boolean {
    return this.fingerprints.has(cert.x509.fingerprint256);
  }
}

export interface ChainResult {
  /** Leaf first; ends at the anchor when trusted. */
  chain: Cert[];
  trusted: boolean;
  problem?: string;
}

const MAX_CHAIN = 12;

/** `issuer` names and signed `child`. */
export function issuedBy(child: Cert, issuer: Cert): boolean {
  try {
    return child.x509.checkIssued(issuer.x509) && child.x509.verify(issuer.x509.publicKey);
  } catch {
    return false;
  }
}

/**
 * Builds the chain from the signer upwards using the certificates carried in the CMS and the
 * trust anchors, checking every signature on the way. Intermediates must be CA certificates.
 */
export function buildChain(leaf: Cert, pool: Cert[], trust: TrustStore): ChainResult {
  const chain: Cert[] = [leaf];
  let current = leaf;
  for (let depth = 0; depth < MAX_CHAIN; depth++) {
    if (trust.isAnchor(current)) return { chain, trusted: true };
    const anchor = trust.anchors.find((a) => issuedBy(current, a));
    if (anchor) {
      chain.push(anchor);
      return { chain, trusted: true };
    }
    const next = pool.find((c) => !chain.includes(c) && c.x509.fingerprint256 !== current.x509.fingerprint256 && issuedBy(current, c));
    if (!next) {
      const selfSigned = issuedBy(current, current);
      return {
        chain,
        trusted: false,
        problem: selfSigned
          ? `the chain ends at the self-signed certificate "${oneLine(current.x509.subject)}", which is not a trusted root`
          : `no issuer certificate found for "${oneLine(current.x509.subject)}" among the embedded certificates and trusted roots`,
      };
    }
    if (!next.x509.ca) return { chain, trusted: false, problem: `issuer "${oneLine(next.x509.subject)}" is not a CA certificate` };
    chain.push(next);
    current = next;
  }
  return { chain, trusted: false, problem: 'certificate chain is too long' };
}
