import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyPdf, type VerifyReport } from '../../../src/documents/verify/index.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { ALL_ATTACKS, ATTACKS, PREPARED_ATTACKS, QpdfReader, type Attack } from '../../support/pdf-attacks.js';
import { expectAgreementWithQpdf } from '../../support/qpdf-agreement.js';
import { buildTestApp } from '../../support/test-app.js';
import { signRoutesFor } from '../sign/route-signing.js';
import { makeTestPki } from '../../unit/verify/helpers/pki.js';
import { TestPdf } from '../../unit/verify/helpers/pdf.js';

/**
 * Every published attack class against PDF signature validators, generated (test/support/pdf-attacks.ts)
 * and applied to PDFs that POST /v1/sign produced, to PDFs signed in the test with its own PKI, and to
 * third-party signed PDFs from the corpus. No forged file may verify: the report is not valid, no
 * original signature stays TOTAL_PASSED after a change to what is shown, and a forged signature
 * never passes.
 */

interface Target {
  name: string;
  pdf: Buffer;
}

const THIRD_PARTY = [
  'signpdf-signed.pdf',
  'signpdf-signed-twice.pdf',
  'verifypdf-samplecertifiedpdf.pdf',
  'verifypdf-25-certificado-firmado.pdf',
  'verifypdf-pdf_digital_signature_timestamp.pdf',
];

let app: FastifyInstance;
let reader: QpdfReader;
let trustRoots: string[];
let routes: Awaited<ReturnType<typeof signRoutesFor>>;
const targets: Target[] = [];

beforeAll(async () => {
  reader = new QpdfReader();
  const pki = makeTestPki();
  ({ app } = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: 'attacks-pepper-0123456789abcdef', RATE_LIMIT_MAX: '1000' }));
  routes = await signRoutesFor(app, 'attacks@example.com');
  const chain = await routes.serviceChain();
  trustRoots = [pki.root.pem, chain[chain.length - 1]!];
  for (const name of ['signpdf-w3dummy.pdf', 'signpdf-formexample.pdf']) {
    targets.push({ name: `POST /v1/sign of ${name}`, pdf: await routes.sign(readFileSync(path.join(CORPUS_DIR, 'pdf-unsigned', name))) });
  }
  targets.push({ name: 'test PKI, approval signature', pdf: TestPdf.base().sign({ cms: { signer: pki.signer } }).bytes });
  targets.push({ name: 'test PKI, certification P2', pdf: TestPdf.base().sign({ cms: { signer: pki.ecSigner }, docMdp: 2 }).bytes });
  targets.push({ name: 'test PKI, Word-style hybrid file, approval signature', pdf: TestPdf.hybridBase().sign({ cms: { signer: pki.signer } }).bytes });
  for (const name of THIRD_PARTY) targets.push({ name, pdf: readFileSync(path.join(CORPUS_DIR, 'pdf-signed', name)) });
}, 120_000);

afterAll(async () => {
  await app?.close();
  reader?.cleanup();
});

const verify = (pdf: Buffer): VerifyReport => verifyPdf(pdf, { trustRoots });

function expectForgeryCaught(attack: Attack, before: VerifyReport, after: VerifyReport): void {
  if (attack.family === 'universal signature forgery') {
    const forged = after.signatures.find((s) => s.field.startsWith('Forged'));
    if (forged) {
      // A signature dictionary that claims a signature and fails makes the document not valid.
      expect(forged.indication).not.toBe('TOTAL_PASSED');
      expect(after.valid, after.reason).toBe(false);
    } else {
      // An all-zero /Contents is an unfilled placeholder: listed as an empty field, claiming nothing.
      expect(after.unsignedFields.some((f) => f.startsWith('Forged'))).toBe(true);
      expect(after.signers).toEqual(before.signers);
    }
    return;
  }
  expect(after.valid, after.reason).toBe(false);
  for (const signature of after.signatures) expect(signature.indication, `${signature.field}: ${signature.errors.join('; ')}`).not.toBe('TOTAL_PASSED');
  if (attack.family === 'signature wrapping') return;
  // The change reached what is shown after the last signature, and that signature says so.
  const last = after.signatures.findLast((s) => before.signatures.some((b) => b.field === s.field));
  if (!last) return; // the attack hid the signatures themselves: nothing passes (checked above)
  const failedOutright = last.subIndication === 'HASH_FAILURE' || last.subIndication === 'FORMAT_FAILURE';
  expect(last.modificationsAfter === 'other' || failedOutright, `${last.field}: ${last.modificationsAfter} ${last.errors.join('; ')}`).toBe(true);
}

describe('attack generators × signed PDFs: no forged file verifies', () => {
  it('the untouched targets read as signed (so every verdict below is about the attack)', () => {
    for (const target of targets) expect(verify(target.pdf).document.signatureCount, target.name).toBeGreaterThan(0);
    const own = targets.filter((t) => !THIRD_PARTY.includes(t.name) && !t.name.includes('P2'));
    for (const target of own) expect(verify(target.pdf).valid, target.name).toBe(true);
  });

  for (const attack of ALL_ATTACKS) {
    it(`${attack.family}: ${attack.name}`, () => {
      for (const target of targets) {
        const before = verify(target.pdf);
        const forged = attack.apply(target.pdf, reader);
        let after: VerifyReport;
        try {
          after = verify(forged);
        } catch (err) {
          // An unreadable forgery is refused outright, which is also not a pass.
          expect((err as { status?: number }).status, `${target.name}: ${String(err)}`).toBeGreaterThanOrEqual(400);
          continue;
        }
        try {
          expectForgeryCaught(attack, before, after);
        } catch (err) {
          throw new Error(`${target.name}: ${(err as Error).message}`);
        }
      }
    });
  }

  for (const attack of PREPARED_ATTACKS) {
    it(`${attack.family}: ${attack.name} (document prepared before POST /v1/sign)`, async () => {
      for (const name of ['signpdf-w3dummy.pdf', 'signpdf-formexample.pdf']) {
        const prepared = attack.prepare(readFileSync(path.join(CORPUS_DIR, 'pdf-unsigned', name)), reader);
        const signed = await routes.sign(prepared);
        const before = verify(signed);
        expect(before.valid, `${name}: the prepared document signs and verifies (${before.reason})`).toBe(true);
        const forged = attack.apply(signed, reader);
        expectAgreementWithQpdf(reader, `${name} + ${attack.name}`, forged);
        const after = verify(forged);
        expect(after.valid, name).toBe(false);
        expect(after.signatures[0], name).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
        expect(after.signatures[0]!.errors.join(' '), name).toMatch(attack.expectedError);
        expect(reader.firstPageClosure(forged), `${name}: qpdf shows a changed first page`).not.toBe(reader.firstPageClosure(signed));
      }
    });
  }

  it('every attack meant to change what is shown does so for qpdf (so every verdict above is about a real change)', () => {
    const shown = ATTACKS.filter((a) => a.changesFirstPageForQpdf !== false);
    // A file qpdf can no longer open (e.g. /Prev 0 hides the catalog from it) is changed too.
    const closure = (pdf: Buffer) => {
      try {
        return reader.firstPageClosure(pdf);
      } catch {
        return '(qpdf cannot open it)';
      }
    };
    for (const target of targets) {
      const original = reader.firstPageClosure(target.pdf);
      for (const attack of shown) expect(closure(attack.apply(target.pdf, reader)), `${target.name} + ${attack.name}`).not.toBe(original);
    }
  }, 300_000);

  it('our reader and qpdf read every forged file made from POST /v1/sign output alike', () => {
    for (const target of targets.filter((t) => t.name.startsWith('POST'))) {
      for (const attack of ALL_ATTACKS) expectAgreementWithQpdf(reader, `${target.name} + ${attack.name}`, attack.apply(target.pdf, reader));
    }
  }, 300_000);

  it('the hybrid attack shows its new content to qpdf (so the verdict is about real, visible content)', () => {
    const hybrid = ALL_ATTACKS.find((a) => a.name.startsWith('hybrid section'))!;
    for (const target of targets.slice(0, 3)) {
      const forged = hybrid.apply(target.pdf, reader);
      const contents = reader.facts(forged).contents[0]!;
      expect(reader.show(forged, contents), target.name).toMatch(/Length/);
      const stream = reader.json(forged).qpdf[1][`obj:${contents} 0 R`];
      expect(stream?.stream?.dict['/Length']).toBe('BT /F9 36 Tf 72 400 Td (CONTRACT VOID - PAY 1,000,000 EUR) Tj ET'.length);
    }
  });
});
