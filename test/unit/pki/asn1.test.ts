import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as asn1js from 'asn1js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBer, derEncoding, derEncodingAsSet, elementLimit, MAX_ASN1_ELEMENTS } from '../../../src/documents/pki/asn1.js';
import { parseCert } from '../../../src/documents/pki/certificates.js';
import { checkSignedData } from '../../../src/documents/pki/cms/signed-data.js';
import { readCrl } from '../../../src/documents/pki/revocation/evidence.js';
import { verifyPdf } from '../../../src/documents/verify/index.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { TestPdf } from '../verify/helpers/pdf.js';
import { makeTestPki } from '../verify/helpers/pki.js';

/**
 * Large and strict ASN.1 (issue 22): CRLs and CMS beyond asn1js's default 10 000 elements decode,
 * made by openssl (not our code); signed attributes are checked over their DER encoding.
 */
const openssl = (args: string[], cwd: string) => execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });

let dir: string;
const REVOKED = 3_000;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'pki-asn1-'));
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', '/CN=Big CRL CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  openssl(['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-subj', '/CN=Big CRL leaf', '-out', 'leaf.csr'], dir);
  writeFileSync(path.join(dir, 'leaf.ext'), 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n');
  openssl(['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', '0x0bb8', '-days', '30', '-extfile', 'leaf.ext', '-out', 'leaf.pem'], dir);
  // An `openssl ca` database listing REVOKED certificates (serials 0x0001.., the leaf's among them).
  const lines = Array.from({ length: REVOKED }, (_, i) => `R\t301231235959Z\t250101000000Z,keyCompromise\t${(i + 1).toString(16).toUpperCase().padStart(4, '0')}\tunknown\t/CN=revoked ${i}\n`);
  writeFileSync(path.join(dir, 'index.txt'), lines.join(''));
  writeFileSync(path.join(dir, 'crlnumber'), '01\n');
  writeFileSync(path.join(dir, 'ca.cnf'), `[ca]\ndefault_ca=d\n[d]\ndatabase=${dir}/index.txt\ncrlnumber=${dir}/crlnumber\ncertificate=${dir}/ca.pem\nprivate_key=${dir}/ca.key\ndefault_md=sha256\ndefault_crl_days=7\n`);
  openssl(['ca', '-config', 'ca.cnf', '-gencrl', '-out', 'big.crl.pem'], dir);
  openssl(['crl', '-in', 'big.crl.pem', '-outform', 'DER', '-out', 'big.crl'], dir);
  writeFileSync(path.join(dir, 'data.txt'), 'signed with a CRL inside');
  openssl(['cms', '-sign', '-binary', '-in', 'data.txt', '-signer', 'leaf.pem', '-inkey', 'leaf.key', '-certfile', 'ca.pem', '-outform', 'DER', '-out', 'signed.cms'], dir);
  writeFileSync(path.join(dir, 'big.cms'), withCrl(readFileSync(path.join(dir, 'signed.cms')), readFileSync(path.join(dir, 'big.crl'))));
}, 120_000);

/** openssl 3.0 cannot put a CRL into what `cms -sign` makes: add it to the (unsigned) SignedData crls [1] field. */
function withCrl(cms: Buffer, crl: Buffer): Buffer {
  const contentInfo = asn1js.fromBER(cms).result as asn1js.Sequence;
  const signedData = (contentInfo.valueBlock.value[1] as asn1js.Constructed).valueBlock.value[0] as asn1js.Sequence;
  const certificates = signedData.valueBlock.value.findIndex((el) => el.idBlock.tagClass === 3 && el.idBlock.tagNumber === 0);
  const crls = new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 1 }, value: [asn1js.fromBER(crl, { maxNodes: 1e6 }).result] });
  signedData.valueBlock.value.splice(certificates + 1, 0, crls);
  return Buffer.from(contentInfo.toBER());
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const certFile = (name: string) => parseCert(new Uint8Array(Buffer.from(readFileSync(path.join(dir, name), 'utf8').replace(/-----[^-]+-----|\s/g, ''), 'base64')))!;

describe('decoding grows with the input, bounded', () => {
  it('an openssl CRL of 3 000 entries (~90 KB) is read, where asn1js alone stops at 10 000 elements', () => {
    const crl = readFileSync(path.join(dir, 'big.crl'));
    expect(crl.length).toBeGreaterThan(80_000);
    expect(asn1js.fromBER(crl).offset).toBe(-1);
    expect(readCrl(crl, certFile('leaf.pem'), certFile('ca.pem'))).toMatchObject({ status: 'revoked', reason: 'keyCompromise', method: 'crl' });
  });

  it('an openssl CMS carrying that CRL verifies (intact, signature valid, the CRL archived)', () => {
    const cms = readFileSync(path.join(dir, 'big.cms'));
    expect(asn1js.fromBER(cms).offset).toBe(-1);
    const check = checkSignedData(cms, (hash) => createHash(hash).update(readFileSync(path.join(dir, 'data.txt'))).digest());
    expect(check.formatError).toBeUndefined();
    expect(check).toMatchObject({ intact: true, cryptoValid: true });
    expect(check.archivedRevocation?.crls).toHaveLength(1);
  });

  it('the 148 KB CMS with an embedded CRL of the DSS suite (dss-adbe_crl_signed.pdf) is no longer a format failure', () => {
    const report = verifyPdf(readFileSync(path.join(CORPUS_DIR, 'pdf-signed-suites/dss-adbe_crl_signed.pdf')), { trustRoots: [] });
    expect(report.signatures[0]).toMatchObject({ field: 'Signature2', intact: true, cryptoValid: true, subIndication: 'NO_CERTIFICATE_CHAIN_FOUND' });
  });

  it('the limit is proportional to the size and bounded; past it decoding fails cleanly', () => {
    expect(elementLimit(100)).toBe(asn1js.DEFAULT_MAX_NODES);
    expect(elementLimit(300_000)).toBe(150_000);
    expect(elementLimit(50_000_000)).toBe(MAX_ASN1_ELEMENTS);
    // A SEQUENCE of NULLs: two bytes per element, more elements than the bound allows.
    const count = MAX_ASN1_ELEMENTS + 10;
    const body = Buffer.alloc(count * 2, 0);
    for (let i = 0; i < count; i++) body[2 * i] = 0x05;
    const bomb = Buffer.concat([Buffer.from([0x30, 0x83, (body.length >> 16) & 0xff, (body.length >> 8) & 0xff, body.length & 0xff]), body]);
    expect(decodeBer(bomb).offset).toBe(-1);
    expect(checkSignedData(bomb, () => Buffer.alloc(0)).formatError).toBeDefined();
  }, 120_000);
});

/** A tree of SETs and SEQUENCEs over small primitives, encoded by asn1js (DER: definite, shortest lengths). */
const node: fc.Memo<asn1js.BaseBlock> = fc.memo((depth) =>
  depth <= 1
    ? fc.oneof(
      fc.integer({ min: -1000, max: 1000 }).map((value): asn1js.BaseBlock => new asn1js.Integer({ value })),
      fc.uint8Array({ maxLength: 140 }).map((bytes): asn1js.BaseBlock => new asn1js.OctetString({ valueHex: bytes })),
    )
    : fc.oneof(
      fc.array(node(depth - 1), { maxLength: 5 }).map((value): asn1js.BaseBlock => new asn1js.Sequence({ value })),
      fc.array(node(depth - 1), { maxLength: 5 }).map((value): asn1js.BaseBlock => new asn1js.Set({ value })),
    ));

/** Re-encodes `block` as BER: indefinite or needlessly long lengths, SET elements in another order. */
function berOf(block: asn1js.AsnType, choices: number[]): Buffer {
  const next = () => choices.length ? choices.shift()! : 0;
  const view = Buffer.from(block.valueBeforeDecodeView);
  const id = view.subarray(0, block.idBlock.blockLength);
  if (!block.idBlock.isConstructed) {
    const content = view.subarray(block.idBlock.blockLength + block.lenBlock.blockLength);
    return next() % 2 ? Buffer.concat([id, Buffer.from([0x82, content.length >> 8, content.length & 0xff]), content]) : view;
  }
  const children = (block as asn1js.Constructed).valueBlock.value.map((child) => berOf(child, choices));
  if (block.idBlock.tagNumber === 17 && children.length > 1 && next() % 2) children.reverse();
  const content = Buffer.concat(children);
  return next() % 2
    ? Buffer.concat([id, Buffer.from([0x80]), content, Buffer.from([0, 0])])
    : Buffer.concat([id, Buffer.from([0x84, 0, 0, content.length >> 8, content.length & 0xff]), content]);
}

describe('DER encoding of a decoded value', () => {
  it('gives back the DER of any BER re-encoding (lengths, indefinite forms, SET order)', () => {
    fc.assert(fc.property(node(4), fc.array(fc.nat(), { maxLength: 200 }), (tree, choices) => {
      // DER as X.690 sorts SET elements: asn1js writes them in the given order, so sort first.
      const der = derEncoding(decodeBer(tree.toBER()).result)!;
      const ber = berOf(decodeBer(der).result, [...choices]);
      expect(Buffer.from(derEncoding(decodeBer(ber).result)!)).toEqual(Buffer.from(der));
      expect(Buffer.from(derEncoding(decodeBer(der).result)!)).toEqual(Buffer.from(der));
    }), { numRuns: 300, seed: Number(process.env.FUZZ_SEED ?? 22) });
  });

  it('gives the DER of an [0] IMPLICIT SET OF as the SET OF it stands for, as re-tagging and decoding again does (signed attributes)', () => {
    fc.assert(fc.property(node(4), fc.array(fc.nat(), { maxLength: 200 }), (tree, choices) => {
      const der = derEncoding(decodeBer(tree.toBER()).result)!;
      const ber = Buffer.from(berOf(decodeBer(der).result, [...choices]));
      if ((ber[0]! & 0x20) === 0 || (ber[0]! & 0x1f) === 0x1f) return; // a primitive or a multi-octet identifier
      const implicit = Buffer.from(ber);
      implicit[0] = 0xa0;
      const set = Buffer.from(ber);
      set[0] = 0x31;
      const expected = derEncoding(decodeBer(set).result);
      const got = derEncodingAsSet(decodeBer(implicit).result);
      expect(got && Buffer.from(got)).toEqual(expected && Buffer.from(expected));
    }), { numRuns: 300, seed: Number(process.env.FUZZ_SEED ?? 22) });
  });

  it('has no DER form for a constructed OCTET STRING or a non-canonical BOOLEAN', () => {
    expect(derEncoding(decodeBer(Buffer.from('24800401aa0000', 'hex')).result)).toBeUndefined();
    expect(derEncoding(decodeBer(Buffer.from('010101', 'hex')).result)).toBeUndefined();
    expect(Buffer.from(derEncoding(decodeBer(Buffer.from('0101ff', 'hex')).result)!).toString('hex')).toBe('0101ff');
  });
});

describe('signed attributes are checked over their DER encoding (RFC 5652 §5.4)', () => {
  /**
   * Suite files whose signers signed attributes in a non-DER order. DSS's DSS818 tests expect
   * HASH_FAILURE for the first three (they state the first signature of SK-1); pyHanko accepts them.
   * The other signatures of SK-1 and the PBAD.PAdES signature of AD-RB are signed the same way; DSS's
   * tests state no verdict for them, and BouncyCastle (under DSS) also verifies over the DER encoding.
   */
  it.each([
    ['dss-818-Signature-P-DE_CRY-2_HASH_FAILURE.pdf', [0]],
    ['dss-818-Signature-P-IT_ADO-1_HASH_FAILURE_ECDSA.pdf', [0]],
    ['dss-818-Signature-P-SK-1_HASH_FAILURE.pdf', [0, 1, 2, 3, 4]],
    ['dss-AD-RB.pdf', [1]],
  ] as const)('%s: signatures %j are TOTAL_FAILED/HASH_FAILURE', (name, failing) => {
    const report = verifyPdf(readFileSync(path.join(CORPUS_DIR, 'pdf-signed-suites', name)), { trustRoots: [] });
    const notDer = report.signatures.flatMap((s, i) => (/not DER-encoded/.test(s.errors.join(' ')) ? [i] : []));
    expect(notDer).toEqual(failing);
    for (const i of failing) {
      const signature = report.signatures[i]!;
      expect(signature.indication).toBe('TOTAL_FAILED');
      // SK-1's time-stamp dictionary repeats /Type with another value: the reader refuses the file as
      // ambiguous (FORMAT_FAILURE) before the hash verdict, and still names the non-DER attributes.
      const ambiguous = report.signatures.some((s) => /can be read in more than one way/.test(s.errors.join(' ')));
      expect(signature.subIndication).toBe(ambiguous ? 'FORMAT_FAILURE' : 'HASH_FAILURE');
    }
  });

  const { root, signer } = makeTestPki();
  const verdict = (attributesOutOfOrder?: 'signed-as-sent' | 'signed-in-der') =>
    verifyPdf(TestPdf.base().sign({ cms: { signer, attributesOutOfOrder } }).bytes, { trustRoots: [root.pem] }).signatures[0]!;

  it('attributes sent out of DER order and signed as sent: TOTAL_FAILED/HASH_FAILURE, saying why', () => {
    const sig = verdict('signed-as-sent');
    expect(sig).toMatchObject({ indication: 'TOTAL_FAILED', subIndication: 'HASH_FAILURE', intact: true, cryptoValid: false });
    expect(sig.errors.join(' ')).toMatch(/not DER-encoded/);
  });

  it('attributes sent out of order but signed in their DER encoding pass, as in DER order', () => {
    expect(verdict('signed-in-der')).toMatchObject({ indication: 'TOTAL_PASSED', intact: true, cryptoValid: true });
    expect(verdict()).toMatchObject({ indication: 'TOTAL_PASSED' });
  });
});
