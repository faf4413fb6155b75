import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import type { SigningIdentity } from '../documents/sign/identity.js';

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
