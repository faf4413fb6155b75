import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors/domain-error.js';
import { verifyPdf } from '../../../src/documents/verify/index.js';
import { firstId, openStandardSecurity, rc4 } from '../../../src/documents/pdf/encryption.js';
import { PdfView } from '../../../src/documents/pdf/document.js';
import { PdfRef } from '../../../src/documents/pdf/objects.js';
import { QpdfReader, appendRevision, withKey } from '../../support/pdf-attacks.js';
import { expectAgreementWithQpdf } from '../../support/qpdf-agreement.js';
import { buildCms } from '../../unit/verify/helpers/cms.js';
import { makeTestPki, type TestIdentity } from '../../unit/verify/helpers/pki.js';
import { TestPdf } from '../../unit/verify/helpers/pdf.js';
import { answering } from '../../support/domain-error.js';

/**
 * Encrypted signed PDFs, made the way signing tools make them: a document with a signature
 * placeholder is encrypted by qpdf (an independent implementation of the standard security
 * handler), then the placeholder is filled. Verify must decrypt what it reads and pass them; qpdf
 * and pdfsig are the independent checks. A PDF that needs a user password gets 422.
 */
const HEX_LENGTH = 16384;
let dir: string;
let reader: QpdfReader;
let root: TestIdentity;
let signer: TestIdentity;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'docproc-encrypted-'));
  reader = new QpdfReader();
  ({ root, signer } = makeTestPki());
});
afterAll(() => {
  reader?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** TestPdf's document with field Signature1 pointing at an unfilled signature dictionary (object 10). */
function prepared(): Buffer {
  const pdf = TestPdf.base();
  pdf.update({
    10: `<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /adbe.pkcs7.detached /ByteRange [0 9999999999 9999999999 9999999999] /Contents <${'0'.repeat(HEX_LENGTH)}> /Reason (Approval under encryption) /M (D:20240101120000Z) >>`,
    7: '<< /FT /Sig /T (Signature1) /Type /Annot /Subtype /Widget /Rect [0 0 0 0] /P 3 0 R /F 132 /V 10 0 R >>',
    5: '<< /Fields [7 0 R 8 0 R 9 0 R] /SigFlags 3 >>',
  });
  return pdf.bytes;
}

function encrypt(pdf: Buffer, userPassword: string, args: string[]): Buffer {
  const input = path.join(dir, `in-${process.hrtime.bigint()}.pdf`);
  const output = `${input}.enc.pdf`;
  writeFileSync(input, pdf);
  try {
    const objectStreams = args.includes('objstm') ? 'generate' : 'disable';
    const options = args.filter((a) => a !== 'objstm');
    execFileSync('qpdf', ['--allow-weak-crypto', `--object-streams=${objectStreams}`, '--encrypt', userPassword, 'owner-secret', ...options, '--', input, output], { stdio: ['ignore', 'pipe', 'pipe'] });
    return readFileSync(output);
  } finally {
    rmSync(input, { force: true });
    rmSync(output, { force: true });
  }
}

/** Fills the placeholder of an encrypted file in place: /ByteRange around /Contents, then the CMS. */
function fill(pdf: Buffer): Buffer {
  const out = Buffer.from(pdf);
  const text = out.toString('latin1');
  const br = /\/ByteRange\s*\[\s*0\s+9999999999\s+9999999999\s+9999999999\s*\]/.exec(text);
  const contents = new RegExp(`/Contents\\s*<(0{${HEX_LENGTH}})>`).exec(text);
  if (!br || !contents) throw new Error('placeholder not found in the encrypted file (encrypted /Contents?)');
  const start = contents.index + contents[0].indexOf('<');
  const end = start + HEX_LENGTH + 2;
  out.write(`/ByteRange [0 ${start} ${end} ${out.length - end}]`.padEnd(br[0].length, ' '), br.index, 'latin1');
  const signed = Buffer.concat([out.subarray(0, start), out.subarray(end)]);
  out.write(buildCms(signed, { signer }).toString('hex'), start + 1, 'latin1');
  return out;
}

function pdfsigValid(pdf: Buffer): boolean[] {
  const file = path.join(dir, `sig-${process.hrtime.bigint()}.pdf`);
  writeFileSync(file, pdf);
  try {
    let out: string;
    try {
      out = execFileSync('pdfsig', [file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      out = String((err as { stdout?: string }).stdout ?? '');
    }
    return out.split(/^Signature #\d+:$/m).slice(1).map((b) => b.includes('Signature is Valid.'));
  } finally {
    rmSync(file, { force: true });
  }
}

const VARIANTS: Array<[string, string[]]> = [
  ['RC4 40-bit (V1 R2)', ['40']],
  ['RC4 128-bit (V2 R3)', ['128', '--use-aes=n']],
  ['AES-128 (V4 R4, AESV2)', ['128', '--use-aes=y']],
  ['AES-256 (V5 R6, AESV3)', ['256']],
  ['AES-256 (V5 R5, the deprecated Extension Level 3 form)', ['256', '--force-R5']],
  ['AES-128 with the objects in encrypted object streams', ['128', '--use-aes=y', 'objstm']],
  ['RC4 40-bit with the objects in encrypted object streams', ['40', 'objstm']],
];

describe('verify: encrypted PDFs with the empty user password', () => {
  it.each(VARIANTS)('%s: decrypted, signature intact and passing; qpdf reads the same objects; pdfsig agrees', (_label, args) => {
    const pdf = fill(encrypt(prepared(), '', args));
    expect(pdf.toString('latin1')).not.toContain('Approval under encryption');
    const report = verifyPdf(pdf, { trustRoots: [root.pem] });
    expect(report.signatures).toHaveLength(1);
    expect(report.signatures[0]).toMatchObject({ field: 'Signature1', reason: 'Approval under encryption', intact: true, cryptoValid: true, indication: 'TOTAL_PASSED' });
    expect(report.document.pages).toBe(1);
    expect(pdfsigValid(pdf)[0]).toBe(true); // pdfsig also lists the empty field Signature2, as not signed
    expectAgreementWithQpdf(reader, `encrypted ${args.join(' ')}`, pdf);
  });

  it('a tampered encrypted file fails', () => {
    const pdf = fill(encrypt(prepared(), '', ['256']));
    const at = pdf.indexOf('stream', 0, 'latin1') + 10;
    pdf[at] ^= 0x01;
    expect(verifyPdf(pdf, { trustRoots: [root.pem] }).signatures[0]).toMatchObject({ intact: false, indication: 'TOTAL_FAILED' });
  });

  it.each(VARIANTS)('%s with a user password: 422 ENCRYPTED_DOCUMENT saying a password is needed', (_label, args) => {
    const pdf = fill(encrypt(prepared(), 'user-secret', args));
    try {
      verifyPdf(pdf, { trustRoots: [root.pem] });
      throw new Error('expected a refusal');
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toMatchObject(answering(422, 'ENCRYPTED_DOCUMENT'));
      expect((err as Error).message).toMatch(/needs a password/);
    }
  });
});

/**
 * An incremental update written into an RC4-encrypted file the way a PDF editor writes one: its
 * strings and streams encrypted with the object's key. RC4 is its own inverse, so the file's own
 * decryptor (the empty user password opens it) also encrypts.
 */
function encryptedUpdate(pdf: Buffer, build: (seal: { string(text: string, num: number): string; stream(text: string, num: number): string }, page: string) => Map<number, string>): Buffer {
  const view = new PdfView(pdf, pdf.length);
  const encryptRef = view.trailer.get('Encrypt');
  if (!(encryptRef instanceof PdfRef)) throw new Error('not an encrypted file with an indirect /Encrypt');
  const cipher = openStandardSecurity(view.encryption!, firstId(view.trailer, (v) => view.resolve(v)), (v) => view.resolve(v));
  const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString('latin1');
  const seal = {
    string: (text: string, num: number) => `<${Buffer.from(cipher.decryptString(Buffer.from(text, 'latin1'), num, 0)).toString('hex')}>`,
    stream: (text: string, num: number) => {
      const data = latin1(cipher.decryptStream(Buffer.from(text, 'latin1'), num, 0));
      return `<< /Length ${data.length} >>\nstream\n${data}\nendstream`;
    },
  };
  const page = reader.show(pdf, reader.facts(pdf).firstPage);
  return appendRevision(pdf, reader, { objects: build(seal, page), trailerExtra: `/Encrypt ${encryptRef.num} 0 R` });
}

describe('verify: updates written into encrypted files are analysed on what they decrypt to', () => {
  const RC4 = VARIANTS.filter(([label]) => label.startsWith('RC4') && !label.includes('object streams'));

  it.each(RC4)('%s: an annotation added after signing (encrypted text) is an annotation change and still passes', (_label, args) => {
    const signed = fill(encrypt(prepared(), '', args));
    const facts = reader.facts(signed);
    const note = facts.size;
    const pdf = encryptedUpdate(signed, (seal, page) => new Map([
      [note, `<< /Type /Annot /Subtype /Text /Rect [10 10 30 30] /Contents ${seal.string('Reviewed, approved', note)} /P ${facts.firstPage} 0 R >>`],
      [facts.firstPage, withKey(page, 'Annots', `[${/\/Annots\s*\[([^\]]*)\]/.exec(page)?.[1] ?? ''} ${note} 0 R]`)],
    ]));
    expect(reader.show(pdf, note)).toContain('Reviewed, approved'); // qpdf decrypts the new string
    expectAgreementWithQpdf(reader, `encrypted update ${args.join(' ')}`, pdf);
    const report = verifyPdf(pdf, { trustRoots: [root.pem] });
    expect(report.signatures[0]).toMatchObject({ intact: true, modificationsAfter: 'annotations', indication: 'TOTAL_PASSED' });
    expect(report.valid).toBe(true);
  });

  it.each(RC4)('%s: page content replaced after signing (encrypted stream) is a forbidden change', (_label, args) => {
    const signed = fill(encrypt(prepared(), '', args));
    const facts = reader.facts(signed);
    const text = 'BT /F1 36 Tf 72 400 Td (CONTRACT VOID) Tj ET';
    const pdf = encryptedUpdate(signed, (seal) => new Map([[facts.contents[0]!, seal.stream(text, facts.contents[0]!)]]));
    expect(reader.streamData(pdf, facts.contents[0]!)).toBe(text); // qpdf decrypts the new content
    expectAgreementWithQpdf(reader, `encrypted content update ${args.join(' ')}`, pdf);
    const report = verifyPdf(pdf, { trustRoots: [root.pem] });
    expect(report.valid).toBe(false);
    expect(report.signatures[0]).toMatchObject({ intact: true, modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
  });
});

describe('decryption never crashes the verifier', () => {
  it('mutated encrypted files (every variant): a report or an DomainError, never anything else', () => {
    const files = VARIANTS.map(([, args]) => fill(encrypt(prepared(), '', args)));
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: files.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 30 }),
        (which, flips) => {
          const bytes = Buffer.from(files[which]!);
          for (const [at, value] of flips) bytes[at % bytes.length] = value;
          try {
            expect(typeof verifyPdf(bytes, { trustRoots: [root.pem] }).valid).toBe('boolean');
          } catch (err) {
            expect(err).toBeInstanceOf(DomainError);
          }
        },
      ),
      { seed: 1124, numRuns: 120 },
    );
  });

  it('RC4 is its own inverse and matches a known vector', () => {
    expect(Buffer.from(rc4(Buffer.from('Key'), Buffer.from('Plaintext'))).toString('hex')).toBe('bbf316e8d940af0ad3');
    fc.assert(fc.property(fc.uint8Array({ minLength: 1, maxLength: 32 }), fc.uint8Array({ maxLength: 512 }), (key, data) => {
      expect(Buffer.from(rc4(key, rc4(key, data)))).toEqual(Buffer.from(data));
    }), { seed: 7 });
  });
});
