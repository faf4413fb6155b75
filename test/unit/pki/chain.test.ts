import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCert, type Cert } from '../../../src/documents/pki/certificates.js';
import { buildChain, type ChainPurpose } from '../../../src/documents/pki/chain.js';
import { TrustStore } from '../../../src/documents/pki/trust.js';

/**
 * The chain builder's RFC 5280 checks, on certificates openssl makes with the extensions under test
 * (openssl does not judge them: `x509 -req` signs whatever extensions it is given).
 */
let dir: string;
const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
let serial = 0x100;

const CA = 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n';
const SIGNER = 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\n';

/** A certificate named `name` with `extensions`, issued by `issuer` (self-signed without one). */
function issue(name: string, extensions: string, issuer?: string, subject = `/CN=${name}/O=chain tests`): Cert {
  openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-subj', subject, '-out', `${name}.csr`]);
  writeFileSync(path.join(dir, `${name}.ext`), extensions);
  const signer = issuer ? ['-CA', `${issuer}.pem`, '-CAkey', `${issuer}.key`] : ['-signkey', `${name}.key`];
  openssl(['x509', '-req', '-in', `${name}.csr`, ...signer, '-set_serial', String(serial++), '-days', '30', '-extfile', `${name}.ext`, '-out', `${name}.pem`]);
  return parseCert(new Uint8Array(Buffer.from(readFileSync(path.join(dir, `${name}.pem`), 'utf8').replace(/-----[^-]+-----|\s/g, ''), 'base64')))!;
}

let root: Cert;
let trust: TrustStore;
const chainOf = (leaf: Cert, pool: Cert[], purpose: ChainPurpose = 'signature') => buildChain(leaf, pool, trust, { purpose });

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'pki-chain-'));
  root = issue('root', CA);
  trust = TrustStore.from([readFileSync(path.join(dir, 'root.pem'), 'utf8')], 'TRUST_ROOTS');
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('chain building with RFC 5280 checks', () => {
  it('root → intermediate → signer is trusted, and names its anchor and its source', () => {
    const intermediate = issue('int', CA, 'root');
    const leaf = issue('leaf', SIGNER, 'int');
    const chain = chainOf(leaf, [intermediate]);
    expect(chain).toMatchObject({ trusted: true, anchor: { source: 'TRUST_ROOTS' } });
    expect(chain.chain.map((c) => c.x509.subject)).toEqual([leaf, intermediate, root].map((c) => c.x509.subject));
  });

  it('an intermediate that is not a CA (basicConstraints) cannot issue', () => {
    const notCa = issue('not-ca', 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyCertSign\n', 'root');
    const chain = chainOf(issue('under-not-ca', SIGNER, 'not-ca'), [notCa]);
    expect(chain.trusted).toBe(false);
    expect(chain.problem).toMatch(/not a CA certificate/);
  });

  it('an intermediate without basicConstraints at all cannot issue', () => {
    const bare = issue('bare', 'keyUsage=critical,keyCertSign\n', 'root');
    expect(chainOf(issue('under-bare', SIGNER, 'bare'), [bare]).problem).toMatch(/not a CA certificate/);
  });

  it('a CA whose key usage lacks keyCertSign cannot issue', () => {
    const crlOnly = issue('crl-only', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,cRLSign\n', 'root');
    expect(chainOf(issue('under-crl-only', SIGNER, 'crl-only'), [crlOnly]).problem).toMatch(/keyCertSign/);
  });

  it('pathLenConstraint bounds the intermediates below a CA', () => {
    const zero = issue('pathlen0', 'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign\n', 'root');
    const below = issue('below-pathlen0', CA, 'pathlen0');
    const tooDeep = chainOf(issue('deep-leaf', SIGNER, 'below-pathlen0'), [zero, below]);
    expect(tooDeep.trusted).toBe(false);
    expect(tooDeep.problem).toMatch(/pathLenConstraint/);
    // The leaf directly under the pathlen:0 CA is fine.
    expect(chainOf(issue('direct-leaf', SIGNER, 'pathlen0'), [zero]).trusted).toBe(true);
    const one = issue('pathlen1', 'basicConstraints=critical,CA:TRUE,pathlen:1\nkeyUsage=critical,keyCertSign\n', 'root');
    const belowOne = issue('below-pathlen1', CA, 'pathlen1');
    expect(chainOf(issue('deep-leaf-1', SIGNER, 'below-pathlen1'), [one, belowOne]).trusted).toBe(true);
  });

  it('a signer whose key usage allows no signatures is not fit for signing', () => {
    const chain = chainOf(issue('encipher-only', 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,keyEncipherment\n', 'root'), []);
    expect(chain.trusted).toBe(false);
    expect(chain.problem).toMatch(/allows no signatures/);
  });

  it('a time-stamp needs id-kp-timeStamping, an OCSP responder id-kp-OCSPSigning', () => {
    const signer = issue('plain-signer', SIGNER, 'root');
    expect(chainOf(signer, [], 'timeStamping').problem).toMatch(/not a time-stamping certificate/);
    expect(chainOf(signer, [], 'ocspSigning').problem).toMatch(/OCSP signing/);
    const tsa = issue('tsa', 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=critical,timeStamping\n', 'root');
    expect(chainOf(tsa, [], 'timeStamping').trusted).toBe(true);
  });

  it('an unprocessed critical extension is refused', () => {
    const odd = issue('odd-critical', `${SIGNER}1.3.6.1.4.1.99999.1=critical,ASN1:NULL\n`, 'root');
    expect(chainOf(odd, []).problem).toMatch(/critical extension .*1\.3\.6\.1\.4\.1\.99999\.1/);
  });

  it('name constraints of a CA bind the names below it (directory names, e-mail, DNS)', () => {
    const constrained = issue('constrained', `${CA}nameConstraints=critical,permitted;dirName:allowed_dn,permitted;email:.example.com\n[allowed_dn]\nO=chain tests\nCN=inside\n`, 'root');
    const inside = issue('inside-leaf', `${SIGNER}subjectAltName=email:signer@mail.example.com\n`, 'constrained', '/O=chain tests/CN=inside/CN=leaf');
    expect(chainOf(inside, [constrained]).trusted).toBe(true);
    const outside = issue('outside-leaf', SIGNER, 'constrained', '/O=chain tests/CN=elsewhere');
    expect(chainOf(outside, [constrained]).problem).toMatch(/outside the names/);
    const badMail = issue('bad-mail', `${SIGNER}subjectAltName=email:signer@example.org\n`, 'constrained', '/O=chain tests/CN=inside/CN=mail');
    expect(chainOf(badMail, [constrained]).problem).toMatch(/outside the names/);
    const excluding = issue('excluding', `${CA}nameConstraints=critical,excluded;DNS:bad.example\n`, 'root');
    const badDns = issue('bad-dns', `${SIGNER}subjectAltName=DNS:www.bad.example\n`, 'excluding');
    expect(chainOf(badDns, [excluding]).problem).toMatch(/excluded subtrees/);
    const goodDns = issue('good-dns', `${SIGNER}subjectAltName=DNS:www.good.example\n`, 'excluding');
    expect(chainOf(goodDns, [excluding]).trusted).toBe(true);
  });

  it('searches past an issuer that fails a check: a same-named non-CA first, the real CA second', () => {
    const real = issue('twin', CA, 'root', '/CN=twin issuer/O=chain tests');
    const leaf = issue('twin-leaf', SIGNER, 'twin');
    // The impostor has the same subject and key (the same .key file), but is no CA.
    writeFileSync(path.join(dir, 'impostor.ext'), 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n');
    openssl(['x509', '-req', '-in', 'twin.csr', '-CA', 'root.pem', '-CAkey', 'root.key', '-set_serial', String(serial++), '-days', '30', '-extfile', 'impostor.ext', '-out', 'impostor.pem']);
    const impostor = parseCert(new Uint8Array(Buffer.from(readFileSync(path.join(dir, 'impostor.pem'), 'utf8').replace(/-----[^-]+-----|\s/g, ''), 'base64')))!;
    const chain = chainOf(leaf, [impostor, real]);
    expect(chain.trusted).toBe(true);
    expect(chain.chain[1]!.x509.fingerprint256).toBe(real.x509.fingerprint256);
    expect(chainOf(leaf, [impostor]).problem).toMatch(/not a CA certificate/);
  });

  it('an anchor trusted for a period vouches only for chains inside it', () => {
    const leaf = issue('period-leaf', SIGNER, 'root');
    const store = new TrustStore([{ cert: root, source: 'EU trusted list XX: test service', from: new Date('2020-01-01'), until: new Date('2021-01-01') }]);
    expect(buildChain(leaf, [], store, { purpose: 'signature', at: new Date('2020-06-01') })).toMatchObject({ trusted: true, anchor: { source: 'EU trusted list XX: test service' } });
    const after = buildChain(leaf, [], store, { purpose: 'signature', at: new Date('2022-06-01') });
    expect(after.trusted).toBe(false);
    expect(after.problem).toMatch(/trusted from 2020-01-01.* to 2021-01-01.*not at 2022-06-01/);
  });
});
