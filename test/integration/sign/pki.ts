import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { SigningIdentity } from '../../../src/documents/sign/identity.js';

/**
 * A throw-away PKI made with openssl (not our code): a root CA, RSA and ECDSA signing
 * certificates, a TSA certificate, and an NSS database trusting the root for pdfsig.
 */
export interface TestPki {
  dir: string;
  nssDir: string;
  rootPem: string;
  rsa: SigningIdentity;
  ec: SigningIdentity;
  tsaCert: string;
  tsaKey: string;
  tsaConfig: string;
  cleanup(): void;
}

const run = (cmd: string, args: string[], cwd: string) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });

function issue(dir: string, name: string, keyArgs: string[], extensions: string): void {
  run('openssl', ['req', '-new', '-newkey', ...keyArgs, '-nodes', '-keyout', `${name}.key`, '-subj', `/CN=docproc test ${name}/O=docproc tests`, '-out', `${name}.csr`], dir);
  writeFileSync(path.join(dir, `${name}.ext`), extensions);
  run('openssl', ['x509', '-req', '-in', `${name}.csr`, '-CA', 'root.pem', '-CAkey', 'root.key', '-CAcreateserial', '-days', '30', '-sha256', '-extfile', `${name}.ext`, '-out', `${name}.pem`], dir);
}

function identity(dir: string, name: string, rootPem: string): SigningIdentity {
  return {
    privateKey: createPrivateKey(readFileSync(path.join(dir, `${name}.key`))),
    certificate: new X509Certificate(readFileSync(path.join(dir, `${name}.pem`))),
    chain: [new X509Certificate(rootPem)],
    isDevelopment: false,
  };
}

export function createTestPki(): TestPki {
  const dir = mkdtempSync(path.join(tmpdir(), 'docproc-sign-pki-'));
  run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'root.key', '-out', 'root.pem', '-days', '30', '-subj', '/CN=docproc test root/O=docproc tests',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  const signing = 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\n';
  issue(dir, 'rsa', ['rsa:2048'], signing);
  issue(dir, 'ec', ['ec', '-pkeyopt', 'ec_paramgen_curve:P-256'], signing);
  issue(dir, 'tsa', ['rsa:2048'], 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=critical,timeStamping\n');
  const rootPem = readFileSync(path.join(dir, 'root.pem'), 'utf8');
  const nssDir = path.join(dir, 'nss');
  run('mkdir', ['-p', nssDir], dir);
  run('certutil', ['-N', '-d', `sql:${nssDir}`, '--empty-password'], dir);
  run('certutil', ['-A', '-n', 'root', '-t', 'CT,C,C', '-i', 'root.pem', '-d', `sql:${nssDir}`], dir);
  const tsaConfig = path.join(dir, 'tsa.cnf');
  writeFileSync(tsaConfig, [
    '[ tsa ]', 'default_tsa = tsa_config', '[ tsa_config ]', `dir = ${dir}`, 'serial = $dir/tsaserial', 'crypto_device = builtin',
    'signer_cert = $dir/tsa.pem', 'certs = $dir/root.pem', 'signer_key = $dir/tsa.key', 'signer_digest = sha256',
    'default_policy = 1.2.3.4.1', 'digests = sha256', 'accuracy = secs:1', 'ordering = yes', 'tsa_name = no',
    'ess_cert_id_chain = no', 'ess_cert_id_alg = sha256', '',
  ].join('\n'));
  writeFileSync(path.join(dir, 'tsaserial'), '01\n');
  return {
    dir, nssDir, rootPem,
    rsa: identity(dir, 'rsa', rootPem),
    ec: identity(dir, 'ec', rootPem),
    tsaCert: path.join(dir, 'tsa.pem'),
    tsaKey: path.join(dir, 'tsa.key'),
    tsaConfig,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface PdfsigSignature {
  valid: boolean;
  total: boolean;
  certificateTrusted: boolean;
  subFilter?: string;
  raw: string;
}

/** Runs poppler's pdfsig with the test root trusted; one entry per signature. */
export function pdfsig(pki: TestPki, pdf: Buffer): PdfsigSignature[] {
  const file = path.join(pki.dir, `check-${process.hrtime.bigint()}.pdf`);
  writeFileSync(file, pdf);
  let out: string;
  try {
    out = execFileSync('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    out = String((err as { stdout?: string }).stdout ?? '');
  } finally {
    rmSync(file, { force: true });
  }
  return out.split(/^Signature #\d+:$/m).slice(1).map((block) => ({
    valid: block.includes('Signature Validation: Signature is Valid.'),
    total: block.includes('Total document signed'),
    certificateTrusted: block.includes('Certificate Validation: Certificate is Trusted.'),
    subFilter: /Signature Type: (\S+)/.exec(block)?.[1],
    raw: block,
  }));
}

/** qpdf --check output; throws if qpdf reports errors (exit code 2). */
export function qpdfCheck(pki: TestPki, pdf: Buffer): string {
  const file = path.join(pki.dir, `qpdf-${process.hrtime.bigint()}.pdf`);
  writeFileSync(file, pdf);
  try {
    return execFileSync('qpdf', ['--check', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { status?: number; stdout?: string; stderr?: string };
    if (e.status === 3) return String(e.stdout) + String(e.stderr); // warnings only
    throw new Error(`qpdf --check failed: ${e.stdout}${e.stderr}`);
  } finally {
    rmSync(file, { force: true });
  }
}

/**
 * A caller's PKCS#12 that is valid today (self-signed RSA, made by openssl): the corpus PKCS#12
 * files expired long ago, and signing with an expired certificate is refused (CERTIFICATE_EXPIRED).
 */
export function currentCallerP12(passphrase: string, subject = '/CN=SignPdf caller/O=docproc tests'): Buffer {
  const dir = mkdtempSync(path.join(tmpdir(), 'docproc-caller-p12-'));
  try {
    run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '30', '-subj', subject,
      '-addext', 'keyUsage=critical,digitalSignature,nonRepudiation'], dir);
    run('openssl', ['pkcs12', '-export', '-in', 'cert.pem', '-inkey', 'key.pem', '-passout', `pass:${passphrase}`, '-out', 'caller.p12'], dir);
    return readFileSync(path.join(dir, 'caller.p12'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
