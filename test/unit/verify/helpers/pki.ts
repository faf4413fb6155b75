import { execFileSync } from 'node:child_process';
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A certificate + private key made with the openssl CLI in a private temp dir (removed at once). */
export interface TestIdentity {
  der: Buffer;
  pem: string;
  key: KeyObject;
  keyPem: string;
  cert: X509Certificate;
}

export interface CertOptions {
  subject?: string;
  ec?: boolean;
  /** Named EC curve (default prime256v1 when `ec`), e.g. brainpoolP256r1. */
  curve?: string;
  /** An EdDSA key instead of RSA/EC. */
  eddsa?: 'ED25519' | 'ED448';
  rsaBits?: number;
  /** openssl -not_before/-not_after style dates are not in openssl 3.0: use days offsets instead. */
  days?: number;
  ca?: boolean;
  /** Sign with this issuer; self-signed when absent. */
  issuer?: TestIdentity;
  /** Make an already-expired certificate (valid in the past only). */
  expired?: boolean;
  /** Make a certificate whose validity starts in the future. */
  notYetValid?: boolean;
  /** Leave out the SubjectKeyIdentifier extension. */
  noSubjectKeyId?: boolean;
}

let serial = 0x1000;

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
}

export function makeIdentity(options: CertOptions = {}): TestIdentity {
  const dir = mkdtempSync(path.join(tmpdir(), 'verify-pki-'));
  try {
    if (options.eddsa) openssl(['genpkey', '-algorithm', options.eddsa, '-out', 'key.pem'], dir);
    else if (options.ec || options.curve) openssl(['ecparam', '-name', options.curve ?? 'prime256v1', '-genkey', '-noout', '-out', 'key.pem'], dir);
    else openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', `rsa_keygen_bits:${options.rsaBits ?? 2048}`, '-out', 'key.pem'], dir);
    const ext = options.ca
      ? 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\n'
      : 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\nsubjectKeyIdentifier=hash\n';
    writeFileSync(path.join(dir, 'ext.cnf'), options.noSubjectKeyId ? ext.replace('subjectKeyIdentifier=hash', 'subjectKeyIdentifier=none\nauthorityKeyIdentifier=none') : ext);
    const subject = options.subject ?? '/CN=Test Signer/O=Docproc Tests/emailAddress=signer@example.com';
    openssl(['req', '-new', '-key', 'key.pem', '-subj', subject, '-out', 'req.csr'], dir);
    const sn = `0x${(serial++).toString(16)}`;
    if (options.issuer) {
      writeFileSync(path.join(dir, 'issuer.pem'), options.issuer.pem);
      writeFileSync(path.join(dir, 'issuer.key'), options.issuer.keyPem);
    }
    const signArgs = options.issuer ? ['-CA', 'issuer.pem', '-CAkey', 'issuer.key'] : ['-signkey', 'key.pem'];
    openssl(['x509', '-req', '-in', 'req.csr', ...signArgs, '-set_serial', sn, '-days', String(options.days ?? 3650), '-extfile', 'ext.cnf', '-sha256', '-out', 'cert.pem'], dir);
    if (options.expired || options.notYetValid) {
      // openssl 3.0 x509 cannot set dates; "openssl ca" can (valid 2001-2002, or 2090-2091).
      writeFileSync(path.join(dir, 'index.txt'), '');
      writeFileSync(
        path.join(dir, 'ca.cnf'),
        `[ca]\ndefault_ca=d\n[d]\ndatabase=index.txt\nnew_certs_dir=.\nserial=serial\ndefault_md=sha256\npolicy=p\ncopy_extensions=none\nunique_subject=no\n[p]\ncommonName=supplied\norganizationName=optional\nemailAddress=optional\n`,
      );
      writeFileSync(path.join(dir, 'serial'), (serial++).toString(16).padStart(4, '0') + '\n');
      const caArgs = options.issuer ? ['-cert', 'issuer.pem', '-keyfile', 'issuer.key'] : ['-selfsign', '-keyfile', 'key.pem'];
      openssl(['ca', '-batch', '-config', 'ca.cnf', '-in', 'req.csr', ...caArgs, ...(options.expired ? ['-startdate', '20010101000000Z', '-enddate', '20020101000000Z'] : ['-startdate', '20900101000000Z', '-enddate', '20910101000000Z']), '-extfile', 'ext.cnf', '-out', 'cert.pem', '-notext'], dir);
    }
    const pem = readFileSync(path.join(dir, 'cert.pem'), 'utf8');
    const keyPem = readFileSync(path.join(dir, 'key.pem'), 'utf8');
    const cert = new X509Certificate(pem);
    return { der: cert.raw, pem, key: createPrivateKey(keyPem), keyPem, cert };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function makeRoot(subject = '/CN=Docproc Test Root/O=Docproc Tests'): TestIdentity {
  return makeIdentity({ subject, ca: true, days: 7300 });
}

export function makeLeaf(issuer: TestIdentity, options: Omit<CertOptions, 'issuer'> = {}): TestIdentity {
  return makeIdentity({ ...options, issuer });
}

/** The PKI both verify suites sign with: a root, an RSA leaf and an ECDSA leaf under it. */
export function makeTestPki(): { root: TestIdentity; signer: TestIdentity; ecSigner: TestIdentity } {
  const root = makeRoot();
  return { root, signer: makeLeaf(root), ecSigner: makeLeaf(root, { ec: true, subject: '/CN=EC Signer/O=Docproc Tests' }) };
}
