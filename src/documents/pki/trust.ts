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

/** Parsed trust anchors, cached per PEM bundle so repeated verifications do not re-parse them. */
export class TrustStore {
  private static readonly cache = new Map<string, TrustStore>();
  readonly anchors: Cert[];
  private readonly fingerprints: Set<string>;

  private constructor(pems: string[]) {
    this.anchors = [];
    for (const pem of pems) {
      for (const block of pem.match(PEM_BLOCK) ?? []) {
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
