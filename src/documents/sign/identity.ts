import { createPrivateKey, generateKeyPairSync, KeyObject, X509Certificate, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createCertificate, subjectKeyIdentifier } from './dev-certificate.js';
import { readPkcs12, Pkcs12Error, type Pkcs12Contents } from '../pki/pkcs12/read.js';
import { DomainError, ErrorCode } from '../../errors/domain-error.js';

/**
 * Who signs: the operator's PKCS#12 (SIGNING_P12 + SIGNING_P12_PASSWORD), a caller's own
 * PKCS#12 for one request, or, with nothing configured, a development CA + signing
 * certificate created once and kept in DATA_DIR.
 */
export interface SigningIdentity {
  privateKey: KeyObject;
  certificate: X509Certificate;
  /** Issuer certificates (intermediates, root), leaf excluded. */
  chain: X509Certificate[];
  isDevelopment: boolean;
}

/** Structured-clonable form, to hand an identity to a worker thread. */
export interface PortableIdentity {
  privateKeyPem: string;
  certificatePem: string;
  chainPem: string[];
  isDevelopment: boolean;
}

export interface IdentityConfig {
  /** SIGNING_P12: a file path or the base64 of the PKCS#12. */
  signingP12?: string;
  signingP12Password?: string;
  /** DATA_DIR: where the development identity is kept. */
  dataDir: string;
}

const invalidCertificate = (message: string) => new DomainError(ErrorCode.INVALID_CERTIFICATE, message);

export function toPortable(identity: SigningIdentity): PortableIdentity {
  return {
    privateKeyPem: identity.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    certificatePem: identity.certificate.toString(),
    chainPem: identity.chain.map((c) => c.toString()),
    isDevelopment: identity.isDevelopment,
  };
}

const portableCache = new Map<string, SigningIdentity>();

export function fromPortable(portable: PortableIdentity): SigningIdentity {
  const key = portable.certificatePem + portable.privateKeyPem.length;
  const cached = portableCache.get(key);
  if (cached && cached.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() === portable.privateKeyPem) return cached;
  const identity: SigningIdentity = {
    privateKey: createPrivateKey(portable.privateKeyPem),
    certificate: new X509Certificate(portable.certificatePem),
    chain: portable.chainPem.map((pem) => new X509Certificate(pem)),
    isDevelopment: portable.isDevelopment,
  };
  if (portableCache.size > 16) portableCache.clear();
  portableCache.set(key, identity);
  return identity;
}

function checkUsable(privateKey: KeyObject, certificate: X509Certificate): void {
  if (privateKey.asymmetricKeyType !== 'rsa' && privateKey.asymmetricKeyType !== 'ec') {
    throw invalidCertificate(`The PKCS#12 key type ${privateKey.asymmetricKeyType} is not supported; use an RSA or ECDSA key.`);
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw invalidCertificate('The PKCS#12 holds no certificate matching its private key.');
  }
}

/**
 * Refuses a signing certificate outside its validity period at `at`: a signature made with it could
 * never validate, so the caller gets 422 CERTIFICATE_EXPIRED instead of a useless document.
 */
export function assertCertificateCurrent(certificate: X509Certificate, at: Date): void {
  const from = new Date(certificate.validFrom);
  const to = new Date(certificate.validTo);
  if (at < from) {
    throw new DomainError(ErrorCode.CERTIFICATE_EXPIRED, `The signing certificate is not valid yet (valid from ${from.toISOString()}); sign with a current certificate.`);
  }
  if (at > to) {
    throw new DomainError(ErrorCode.CERTIFICATE_EXPIRED, `The signing certificate expired on ${to.toISOString()}; sign with a current certificate.`);
  }
}

/** Parses a PKCS#12 (legacy RC2/3DES or PBES2/AES); throws 422 INVALID_CERTIFICATE when unreadable or the passphrase is wrong. */
export function parsePkcs12(p12: Uint8Array, passphrase: string, isDevelopment = false): SigningIdentity {
  let contents: Pkcs12Contents;
  try {
    contents = readPkcs12(p12, passphrase);
  } catch (err) {
    if (err instanceof Pkcs12Error && err.problem === 'password') {
      throw invalidCertificate('The PKCS#12 could not be opened with this passphrase; check the passphrase.');
    }
    if (err instanceof Pkcs12Error && err.problem === 'unsupported') throw invalidCertificate(`The PKCS#12 cannot be used: ${err.message}.`);
    if (err instanceof Pkcs12Error && err.problem === 'budget') {
      throw new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX, `Opening this PKCS#12 would take more key-derivation work than one request may use: ${err.message}. Export it again with fewer iterations (OpenSSL's default is 2048).`, {
        extensions: { limit: { name: 'sign.p12KdfRounds', max: err.work!.max } },
      });
    }
    throw invalidCertificate('The certificate file is not a readable PKCS#12 (.p12/.pfx) archive.');
  }
  if (contents.keys.length === 0) throw invalidCertificate('The PKCS#12 holds no private key.');
  if (contents.certificates.length === 0) throw invalidCertificate('The PKCS#12 holds no certificate.');
  let keys: KeyObject[];
  let certificates: X509Certificate[];
  try {
    keys = contents.keys.map((der) => createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
    certificates = contents.certificates.map((der) => new X509Certificate(der));
  } catch {
    throw invalidCertificate('The PKCS#12 key or certificates could not be decoded.');
  }
  // The first key that has its certificate in the archive signs.
  const pair = keys.map((key) => ({ key, leaf: certificates.find((c) => c.checkPrivateKey(key)) })).find((p) => p.leaf);
  if (!pair?.leaf) throw invalidCertificate('The PKCS#12 holds no certificate matching its private key.');
  const { key: privateKey, leaf } = pair;
  checkUsable(privateKey, leaf);
  return { privateKey, certificate: leaf, chain: orderChain(leaf, certificates.filter((c) => c !== leaf)), isDevelopment };
}

/** Issuer order from the leaf up; certificates that are not on the path are kept at the end. */
function orderChain(leaf: X509Certificate, others: X509Certificate[]): X509Certificate[] {
  const ordered: X509Certificate[] = [];
  const rest = [...others];
  let current = leaf;
  for (;;) {
    const index = rest.findIndex((c) => current.checkIssued(c) && c.fingerprint256 !== current.fingerprint256);
    if (index < 0) break;
    current = rest.splice(index, 1)[0];
    ordered.push(current);
  }
  return [...ordered, ...rest];
}

function readP12Source(source: string): Buffer {
  const trimmed = source.trim();
  if (existsSync(trimmed)) return readFileSync(trimmed);
  if (/^[A-Za-z0-9+/=\s]+$/.test(trimmed)) return Buffer.from(trimmed, 'base64');
  throw new Error('SIGNING_P12 is neither a readable file nor base64 data');
}

interface StoredDevelopmentIdentity {
  caCertificatePem: string;
  certificatePem: string;
  privateKeyPem: string;
}

const DEV_FILE = 'dev-signing-identity.json';

/** Keys from node's crypto; the two certificates written by ./dev-certificate (pkijs). */
function createDevelopmentIdentity(): StoredDevelopmentIdentity {
  const caKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const leafKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const caName = { commonName: 'docproc Development CA (NOT FOR PRODUCTION)', organization: 'docproc' };
  const leafName = { commonName: 'docproc development signing (NOT FOR PRODUCTION)', organization: 'docproc' };
  const ca = createCertificate({ subject: caName, issuer: caName, publicKey: caKey.publicKey, signingKey: caKey.privateKey, years: 10, ca: true });
  const leaf = createCertificate({
    subject: leafName, issuer: caName, publicKey: leafKey.publicKey, signingKey: caKey.privateKey, years: 5, ca: false,
    issuerKeyId: subjectKeyIdentifier(caKey.publicKey),
  });
  return {
    caCertificatePem: new X509Certificate(ca).toString(),
    certificatePem: new X509Certificate(leaf).toString(),
    privateKeyPem: leafKey.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** Creates the development identity once; concurrent first starts agree on one file (link() is atomic). */
async function developmentIdentity(dataDir: string): Promise<SigningIdentity> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
  const file = path.join(dataDir, DEV_FILE);
  if (!existsSync(file)) {
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(temp, JSON.stringify(createDevelopmentIdentity()), { mode: 0o600 });
    try {
      await link(temp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      await unlink(temp);
    }
  }
  const stored = JSON.parse(await readFile(file, 'utf8')) as StoredDevelopmentIdentity;
  const privateKey = createPrivateKey(stored.privateKeyPem);
  const certificate = new X509Certificate(stored.certificatePem);
  checkUsable(privateKey, certificate);
  return { privateKey, certificate, chain: [new X509Certificate(stored.caCertificatePem)], isDevelopment: true };
}

/** The service identity. With SIGNING_P12 unset, a development identity (log a warning: development only). */
export async function loadSigningIdentity(config: IdentityConfig): Promise<SigningIdentity> {
  if (config.signingP12) {
    let p12: Buffer;
    try {
      p12 = readP12Source(config.signingP12);
    } catch (err) {
      throw new Error(`SIGNING_P12 could not be read: ${(err as Error).message}`);
    }
    return parsePkcs12(p12, config.signingP12Password ?? '', false);
  }
  return developmentIdentity(config.dataDir);
}

export interface CertificateDescription {
  version: string;
  algorithm: string;
  publicKey: string;
  fingerprint: string;
  /** Dates (YYYY-MM-DD, UTC) as SuperDoc publishes them; the exact instants are in validFromTime/validToTime. */
  validFrom: string;
  validTo: string;
  validFromTime: string;
  validToTime: string;
  issuer: string;
  subject: string;
  chain: string[];
  isDevelopment: boolean;
}

/** For GET /v1/verify/key. `version` identifies the key (first 16 hex digits of its certificate's SHA-256). */
export function describeCertificate(identity: SigningIdentity): CertificateDescription {
  const cert = identity.certificate;
  const keyType = identity.privateKey.asymmetricKeyType === 'ec' ? 'ECDSA' : 'RSA';
  return {
    version: cert.fingerprint256.replace(/:/g, '').slice(0, 16).toLowerCase(),
    algorithm: `${keyType}-SHA256`,
    publicKey: cert.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    fingerprint: cert.fingerprint256,
    validFrom: new Date(cert.validFrom).toISOString().slice(0, 10),
    validTo: new Date(cert.validTo).toISOString().slice(0, 10),
    validFromTime: new Date(cert.validFrom).toISOString(),
    validToTime: new Date(cert.validTo).toISOString(),
    issuer: cert.issuer.split('\n').join(', '),
    subject: cert.subject.split('\n').join(', '),
    chain: [cert, ...identity.chain].map((c) => c.toString()),
    isDevelopment: identity.isDevelopment,
  };
}
