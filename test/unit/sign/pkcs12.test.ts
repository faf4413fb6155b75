import { execFileSync } from 'node:child_process';
import { createPrivateKey, randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePkcs12 } from '../../../src/documents/sign/identity.js';
import { PKCS12_BUDGET, Pkcs12Error, readPkcs12 } from '../../../src/documents/pki/pkcs12/read.js';
import { decryptBlock, encryptBlock, expandKey, rc2CbcDecrypt, rc2CbcEncrypt } from '../../../src/documents/pki/pkcs12/rc2.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { answering } from '../../support/domain-error.js';

/**
 * The PKCS#12 reader (pkijs/asn1js + node:crypto + RC2) against OpenSSL, the independent reader:
 * for every encryption/MAC scheme OpenSSL 3 writes, our reader must return the key and the
 * certificates `openssl pkcs12 -nodes` prints, and refuse a wrong password as a password problem.
 */
let dir: string;
const openssl = (args: string[], input?: Buffer) => execFileSync('openssl', args, { cwd: dir, input, stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'docproc-pkcs12-unit-'));
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'root.key', '-out', 'root.pem', '-days', '3', '-subj', '/CN=p12 root']);
  openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=p12 leaf']);
  openssl(['x509', '-req', '-in', 'leaf.csr', '-CA', 'root.pem', '-CAkey', 'root.key', '-CAcreateserial', '-days', '3', '-out', 'leaf.pem']);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
function makeP12(password: string, options: string[]): Buffer {
  const out = `f${counter++}.p12`;
  openssl(['pkcs12', '-export', '-in', 'leaf.pem', '-inkey', 'leaf.key', '-certfile', 'root.pem', '-passout', `pass:${password}`, ...options, '-out', out]);
  return readFileSync(path.join(dir, out));
}

/** What OpenSSL reads from the file: the key (PKCS#8 DER) and the certificates (DER, sorted). */
function opensslReads(p12: Buffer, password: string, legacy: boolean): { key: string; certs: string[] } {
  writeFileSync(path.join(dir, 'in.p12'), p12);
  const pem = openssl(['pkcs12', '-in', 'in.p12', '-passin', `pass:${password}`, '-nodes', ...(legacy ? ['-legacy'] : [])]).toString();
  const key = createPrivateKey(/-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/.exec(pem)![0]);
  const certs = [...pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)].map((m) => new X509Certificate(m[0]).raw.toString('hex'));
  return { key: key.export({ type: 'pkcs8', format: 'der' }).toString('hex'), certs: certs.sort() };
}

function oursReads(p12: Buffer, password: string): { key: string; certs: string[] } {
  const contents = readPkcs12(p12, password);
  expect(contents.keys).toHaveLength(1);
  const key = createPrivateKey({ key: contents.keys[0], format: 'der', type: 'pkcs8' });
  return { key: key.export({ type: 'pkcs8', format: 'der' }).toString('hex'), certs: contents.certificates.map((c) => c.toString('hex')).sort() };
}

describe('RC2 (RFC 2268)', () => {
  it('matches the RFC test vectors', () => {
    const vector = (key: string, bits: number, plain: string) =>
      Buffer.from(encryptBlock(expandKey(Buffer.from(key, 'hex'), bits), Buffer.from(plain, 'hex'))).toString('hex');
    expect(vector('0000000000000000', 63, '0000000000000000')).toBe('ebb773f993278eff');
    expect(vector('ffffffffffffffff', 64, 'ffffffffffffffff')).toBe('278b27e42e2f0d49');
    expect(vector('3000000000000000', 64, '1000000000000001')).toBe('30649edf9be7d2c2');
    expect(vector('88', 64, '0000000000000000')).toBe('61a8a244adacccf0');
    const K = expandKey(Buffer.from('0123456789', 'hex'));
    const block = Buffer.from('0011223344556677', 'hex');
    expect(Buffer.from(decryptBlock(K, encryptBlock(K, block)))).toEqual(block);
  });

  it('agrees with openssl enc (legacy provider) on CBC encryption and decryption', () => {
    for (const [cipher, keyBytes] of [['rc2-40-cbc', 5], ['rc2-64-cbc', 8], ['rc2-cbc', 16]] as const) {
      for (const length of [0, 1, 7, 8, 9, 100]) {
        const key = randomBytes(keyBytes);
        const iv = randomBytes(8);
        const data = randomBytes(length);
        const theirs = openssl(['enc', `-${cipher}`, '-provider', 'legacy', '-provider', 'default', '-K', key.toString('hex'), '-iv', iv.toString('hex')], data);
        expect(rc2CbcEncrypt(key, iv, data).toString('hex'), `${cipher} ${length}`).toBe(theirs.toString('hex'));
        expect(rc2CbcDecrypt(key, iv, theirs)).toEqual(data);
      }
    }
  });
});

describe('PKCS#12 reader vs openssl pkcs12', () => {
  const schemes: [string, string[], boolean][] = [
    ['PBES2 AES-256 + HMAC-SHA256 (OpenSSL 3 default)', [], false],
    ['PBES2 AES-128, certificates unencrypted', ['-keypbe', 'AES-128-CBC', '-certpbe', 'NONE'], false],
    ['PBES2 AES-192 / 3DES', ['-keypbe', 'AES-192-CBC', '-certpbe', 'DES-EDE3-CBC'], false],
    ['legacy (3DES key, RC2-40 certificates, SHA-1 MAC)', ['-legacy'], true],
    ['PKCS#12 PBE 3DES / 2-key 3DES', ['-keypbe', 'PBE-SHA1-3DES', '-certpbe', 'PBE-SHA1-2DES'], false],
    ['PKCS#12 PBE RC2-128', ['-legacy', '-keypbe', 'PBE-SHA1-RC2-128', '-certpbe', 'PBE-SHA1-RC2-128'], true],
    ['MAC with SHA-512, 5000 iterations', ['-macalg', 'sha512', '-iter', '5000'], false],
    ['MAC with SHA-1, legacy, 1 iteration', ['-legacy', '-macalg', 'sha1', '-iter', '1'], true],
    ['no MAC', ['-nomac'], false],
    ['no encryption at all', ['-keypbe', 'NONE', '-certpbe', 'NONE'], false],
  ];
  for (const password of ['pw', '', 'pässwörd ✓']) {
    for (const [label, options, legacy] of schemes) {
      it(`${label}, password ${JSON.stringify(password)}: same key and certificates; a wrong password is refused as such`, () => {
        const p12 = makeP12(password, options);
        expect(oursReads(p12, password)).toEqual(opensslReads(p12, password, legacy));
        // Every scheme here is protected (a MAC, an encryption or both), so a wrong password shows.
        expect(() => readPkcs12(p12, password + 'x')).toThrow(expect.objectContaining({ problem: 'password' }));
      });
    }
  }

  it('the corpus PKCS#12 files (node-signpdf) open with their passwords, and the chain comes out ordered', () => {
    const corpus = (name: string) => readFileSync(path.join(CORPUS_DIR, 'certs', name));
    expect(parsePkcs12(corpus('signpdf-certificate.p12'), '').chain).toHaveLength(0);
    expect(parsePkcs12(corpus('signpdf-withpass.p12'), 'node-signpdf').chain).toHaveLength(0);
    const bundle = parsePkcs12(corpus('signpdf-bundle.p12'), '');
    expect(bundle.chain).toHaveLength(4);
    expect(bundle.certificate.checkIssued(bundle.chain[0])).toBe(true);
  });

  it(`refuses a file needing more than ${PKCS12_BUDGET.maxKdfRounds} key-derivation rounds before doing the work (422 DOCUMENT_TOO_COMPLEX naming the limit)`, () => {
    // One PBES2 key at budget + 1 iterations (AES-256: one PBKDF2 block), no MAC.
    const p12 = makeP12('pw', ['-iter', String(PKCS12_BUDGET.maxKdfRounds + 1), '-nomac', '-certpbe', 'NONE']);
    const started = Date.now();
    let spent = -1;
    expect(() => readPkcs12(p12, 'pw', { onWork: (n) => (spent = n) })).toThrow(expect.objectContaining({ problem: 'budget' }));
    expect(spent).toBe(0);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(() => parsePkcs12(p12, 'pw')).toThrow(answering(422, 'DOCUMENT_TOO_COMPLEX', {
      extensions: { limit: { name: 'sign.p12KdfRounds', max: PKCS12_BUDGET.maxKdfRounds } },
    }));
  });

  it('the work of a file is summed over its derivations: bags that each fit refuse together', () => {
    // Legacy at 200 000 iterations: MAC (SHA-1, one block: 200 000 rounds), key (3DES: two key
    // blocks and one IV block: 600 000), certificates (RC2-40: one + one: 400 000); each fits, not all.
    const p12 = makeP12('pw', ['-iter', '200000', '-legacy']);
    expect(() => readPkcs12(p12, 'pw')).toThrow(expect.objectContaining({ problem: 'budget' }));
    let spent = 0;
    expect(readPkcs12(p12, 'pw', { maxKdfRounds: 2_000_000, onWork: (n) => (spent = n) }).keys).toHaveLength(1);
    expect(spent).toBe(200_000 * (1 + 3 + 2));
  });

  it('the empty password is tried in its second encoding only when the first fails', () => {
    for (const options of [['-legacy'], ['-legacy', '-nomac'], []]) {
      const p12 = makeP12('', options);
      let spentEmpty = 0;
      let spentWord = 0;
      readPkcs12(p12, '', { onWork: (n) => (spentEmpty = n) });
      readPkcs12(makeP12('pw', options), 'pw', { onWork: (n) => (spentWord = n) });
      expect(spentEmpty, options.join(' ')).toBe(spentWord);
    }
  });

  it('property: damaged archives give a Pkcs12Error (or a valid result), never another exception', () => {
    const seeds = [makeP12('pw', []), makeP12('pw', ['-legacy']), makeP12('', ['-nomac'])];
    fc.assert(fc.property(
      fc.constantFrom(...seeds),
      fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 6 }),
      fc.option(fc.nat(), { nil: undefined }),
      (seed, flips, cut) => {
        const damaged = Buffer.from(seed);
        for (const { at, value } of flips) damaged[at % damaged.length] = value;
        const input = cut === undefined ? damaged : damaged.subarray(0, cut % damaged.length);
        try {
          readPkcs12(input, 'pw');
        } catch (err) {
          if (!(err instanceof Pkcs12Error)) throw err;
        }
      },
    ), { numRuns: 300, seed: 11 });
  });
});
