import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CORPUS_DIR } from '../../support/corpus.js';
import { buildTestApp } from '../../support/test-app.js';
import { createTestPki, pdfsig, qpdfCheck, type TestPki } from './pki.js';
import { ecdsaP12, signRoutesFor, trustInNss, type SignRoutes } from './route-signing.js';
import { QpdfReader } from '../../support/pdf-attacks.js';
import { expectSoundSignedUpdate } from '../../support/signed-output.js';
import { Pyhanko } from '../../support/pyhanko.js';
import { signPdfReport } from '../../../src/documents/sign/sign-pdf.js';
import type { SignRequest } from '../../../src/documents/sign/types.js';
import { verifyPdf } from '../../../src/documents/verify/verify-pdf.js';
import { PdfView } from '../../../src/documents/pdf/document.js';
import { walkPageTree } from '../../../src/documents/pdf/structure.js';

/**
 * Countersigning: sign → sign → sign through POST /v1/sign (service identity, then a caller's
 * PKCS#12, then the service again) and on a third-party signed PDF. Every earlier signature must keep
 * passing our verify and poppler's pdfsig, and every audit record must stay retrievable under its own
 * name (pdfdetach). LibreOffice's verdict on the same chain is in libreoffice-pdf.test.ts.
 */
const corpus = (p: string) => readFileSync(path.join(CORPUS_DIR, p));

let pki: TestPki;
let app: FastifyInstance;
let routes: SignRoutes;
let pyhanko: Pyhanko;
const chain: Buffer[] = [];
const warnings: string[][] = [];

function attachments(pdf: Buffer): string[] {
  const file = path.join(pki.dir, `detach-${process.hrtime.bigint()}.pdf`);
  writeFileSync(file, pdf);
  try {
    const out = execFileSync('pdfdetach', ['-list', file], { encoding: 'utf8' });
    return out.split('\n').slice(1).map((line) => line.replace(/^\s*\d+:\s*/, '').trim()).filter(Boolean);
  } finally {
    rmSync(file, { force: true });
  }
}

function attachment(pdf: Buffer, index: number): unknown {
  const file = path.join(pki.dir, `save-${process.hrtime.bigint()}.pdf`);
  const out = `${file}.json`;
  writeFileSync(file, pdf);
  try {
    execFileSync('pdfdetach', ['-save', String(index), '-o', out, file]);
    return JSON.parse(readFileSync(out, 'utf8'));
  } finally {
    rmSync(file, { force: true });
    rmSync(out, { force: true });
  }
}

/**
 * pyHanko's verdict per signature: VALID when intact, cryptographically valid and every change after
 * it allowed by pyHanko's reference-tracking analysis (trust is ours to check: test roots).
 */
async function pyhankoVerdicts(pdf: Buffer): Promise<string[]> {
  const file = path.join(pki.dir, `pyhanko-${process.hrtime.bigint()}.pdf`);
  writeFileSync(file, pdf);
  try {
    const { signatures, error } = await pyhanko.validate(file);
    if (!signatures) return [`unreadable: ${error}`];
    return signatures.map((s) => `${s.field}: ${s.intact && s.valid && s.docmdp_ok !== false && s.level !== 'OTHER' && !s.error ? 'VALID' : `INVALID (${s.level} ${s.why ?? s.error ?? ''})`}`);
  } finally {
    rmSync(file, { force: true });
  }
}

beforeAll(async () => {
  pki = createTestPki();
  pyhanko = new Pyhanko();
  ({ app } = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: 'countersign-pepper-0123456789abcdef', RATE_LIMIT_MAX: '1000', DATA_DIR: path.join(pki.dir, 'data'), TRUST_ROOTS: path.join(pki.dir, 'root.pem') }));
  routes = await signRoutesFor(app, 'countersign@example.com');
  trustInNss(pki, await routes.serviceChain());
  const p12 = { data: ecdsaP12(pki, 'ec-secret'), passphrase: 'ec-secret' };
  chain.push(await routes.sign(corpus('pdf-unsigned/signpdf-formexample.pdf'), { signer: 'First Signer' }));
  warnings.push(routes.lastWarnings);
  chain.push(await routes.sign(chain[0]!, { signer: 'Second Signer', p12 }));
  warnings.push(routes.lastWarnings);
  chain.push(await routes.sign(chain[1]!, { signer: 'Third Signer' }));
  warnings.push(routes.lastWarnings);
}, 120_000);

afterAll(async () => {
  pyhanko?.close();
  await app?.close();
  pki?.cleanup();
});

describe('sign → sign → sign', () => {
  it('each step is one sound update that the one reader and qpdf read alike', () => {
    const qpdf = new QpdfReader();
    try {
      const inputs = [corpus('pdf-unsigned/signpdf-formexample.pdf'), ...chain.slice(0, -1)];
      chain.forEach((pdf, i) => expectSoundSignedUpdate(inputs[i]!, pdf, qpdf));
    } finally {
      qpdf.cleanup();
    }
  });

  it('our verify: every signature TOTAL_PASSED at every step (service root and the caller root trusted)', async () => {
    for (const [i, pdf] of chain.entries()) {
      const report = await routes.verify(pdf);
      const summary = report.signatures.map((s: { indication: string; subIndication: string | null; modificationsAfter: string; errors: string[] }) => `${s.indication} ${s.modificationsAfter} ${s.errors.join('; ')}`);
      expect(report.signatures.map((s: { indication: string }) => s.indication), `step ${i + 1}: ${summary.join(' | ')}`).toEqual(Array(i + 1).fill('TOTAL_PASSED'));
      expect(report.valid).toBe(true);
    }
  });

  it('earlier signatures see only signatures added after them', async () => {
    const report = await routes.verify(chain[2]!);
    expect(report.signatures.map((s: { modificationsAfter: string }) => s.modificationsAfter)).toEqual(['signatures', 'signatures', 'none']);
  });

  it('pyHanko judges every signature VALID at every step (service, caller PKCS#12, service)', async () => {
    for (const [i, pdf] of chain.entries()) {
      expect(await pyhankoVerdicts(pdf), `step ${i + 1}`).toEqual(Array.from({ length: i + 1 }, (_, k) => `Signature${k + 1}: VALID`));
    }
  }, 180_000);

  it('pdfsig: every signature valid at every step; only the last covers the whole file', () => {
    for (const [i, pdf] of chain.entries()) {
      const sigs = pdfsig(pki, pdf);
      expect(sigs, `step ${i + 1}`).toHaveLength(i + 1);
      expect(sigs.map((s) => s.valid)).toEqual(Array(i + 1).fill(true));
      expect(sigs.at(-1)!.total).toBe(true);
    }
  });

  it('every record stays listed: verify reports each signature\'s own record, pdfdetach the first signature\'s audit-trail.json', async () => {
    const report = await routes.verify(chain[2]!);
    const records = report.signatures.map((s: { auditTrail: { signer: { name: string }; document: { sha256: string } } | null }) => s.auditTrail);
    expect(records.map((r: { signer: { name: string } }) => r.signer.name)).toEqual(['First Signer', 'Second Signer', 'Third Signer']);
    // Each record names the document as that signer received it.
    const inputs = [corpus('pdf-unsigned/signpdf-formexample.pdf'), chain[0]!, chain[1]!];
    expect(records.map((r: { document: { sha256: string } }) => r.document.sha256)).toEqual(inputs.map((pdf) => createHash('sha256').update(pdf).digest('hex')));
    expect(attachments(chain[2]!)).toEqual(['audit-trail.json']);
    expect(JSON.stringify(attachment(chain[2]!, 1))).toContain('First Signer');
    expect(qpdfCheck(pki, chain[2]!)).toContain('No syntax or stream encoding errors');
  });

  it('the warning header says where the record went and claims nothing it did not check', () => {
    expect(warnings[0]).toEqual([]);
    for (const step of [1, 2]) {
      const text = warnings[step]!.join(' | ');
      expect(text).toContain('no audit page was added');
      expect(text).toContain("the audit record is in this signature's dictionary (/DocprocAuditTrail");
      expect(text).not.toMatch(/signatures stay valid/);
    }
  });

  it('a countersignature changes nothing but the form: no catalog entry, no page, no annotation besides its widget', () => {
    const catalogEntries = (pdf: Buffer) => {
      const file = path.join(pki.dir, `catalog-${process.hrtime.bigint()}.pdf`);
      writeFileSync(file, pdf);
      const json = JSON.parse(execFileSync('qpdf', ['--json=2', '--json-key=qpdf', '--json-stream-data=none', file], { encoding: 'utf8' }));
      rmSync(file, { force: true });
      const objects = json.qpdf[1];
      const root = objects.trailer.value['/Root'] as string;
      const catalog = objects[`obj:${root}`].value;
      const resolve = (v: unknown) => (typeof v === 'string' && / R$/.test(v) ? objects[`obj:${v}`]?.value : v);
      const names = resolve(catalog['/Names']) as Record<string, unknown> | undefined;
      return JSON.stringify({ names: names && resolve(names['/EmbeddedFiles']), af: resolve(catalog['/AF']) });
    };
    expect(catalogEntries(chain[1]!)).toBe(catalogEntries(chain[0]!));
    expect(catalogEntries(chain[2]!)).toBe(catalogEntries(chain[0]!));
    for (const step of [1, 2]) {
      const update = chain[step]!.subarray(chain[step - 1]!.length).toString('latin1');
      expect(update).not.toMatch(/\/Subtype \/FileAttachment/);
      expect(update).toMatch(/\/DocprocAuditTrail \(/);
      const pages = (pdf: Buffer) => walkPageTree(new PdfView(pdf, pdf.length)).pages.length;
      expect(pages(chain[step]!)).toBe(pages(chain[step - 1]!));
    }
  });
});

describe('countersigning third-party signed PDFs', () => {
  it('signpdf-signed-twice.pdf: after our signature the two earlier signatures are as intact as before, and ours passes', async () => {
    const original = corpus('pdf-signed/signpdf-signed-twice.pdf');
    const before = await routes.verify(original);
    const signed = await routes.sign(original, { signer: 'Countersigner' });
    const after = await routes.verify(signed);
    expect(after.signatures).toHaveLength(before.signatures.length + 1);
    for (const [i, sig] of before.signatures.entries()) {
      expect(after.signatures[i]).toMatchObject({ intact: sig.intact, cryptoValid: sig.cryptoValid, indication: sig.indication });
    }
    expect(after.signatures.at(-1)).toMatchObject({ indication: 'TOTAL_PASSED' });
    expect(pdfsig(pki, signed).map((s) => s.valid)).toEqual(pdfsig(pki, original).map((s) => s.valid).concat(true));
  });

  it('pyHanko-signed, then countersigned by us: pyHanko judges both VALID, and both keep their place in our verify', async () => {
    const input = path.join(pki.dir, 'for-pyhanko.pdf');
    const output = path.join(pki.dir, 'by-pyhanko.pdf');
    writeFileSync(input, corpus('pdf-unsigned/signpdf-w3dummy.pdf'));
    await pyhanko.sign({ in: input, out: output, field: 'PyHankoSig', key: path.join(pki.dir, 'rsa.key'), cert: path.join(pki.dir, 'rsa.pem'), chain: [path.join(pki.dir, 'root.pem')] });
    const byPyhanko = readFileSync(output);
    expect(await pyhankoVerdicts(byPyhanko)).toEqual(['PyHankoSig: VALID']);
    const countersigned = await routes.sign(byPyhanko, { signer: 'Countersigner' });
    expectSoundSignedUpdate(byPyhanko, countersigned);
    expect(await pyhankoVerdicts(countersigned)).toEqual(['PyHankoSig: VALID', 'Signature1: VALID']);
    const report = await routes.verify(countersigned);
    expect(report.signatures.map((s: { indication: string }) => s.indication)).toEqual(['TOTAL_PASSED', 'TOTAL_PASSED']);
    expect(report.signatures.map((s: { auditTrail: { signer: { name: string } } | null }) => s.auditTrail?.signer.name ?? null)).toEqual([null, 'Countersigner']);
  }, 120_000);
});

describe('a record is never lost', () => {
  it('a one-page PDF signed twice without the audit page: both records are in their signatures, pyHanko and our verify accept both', async () => {
    const request = (name: string): SignRequest => ({
      signer: { name, email: 'one@example.com' },
      auditTrail: [{ type: 'submit', timestamp: '2025-03-01T09:01:00Z' }],
      certificate: { enabled: false },
    });
    const input = corpus('pdf-unsigned/signpdf-w3dummy.pdf');
    const once = (await signPdfReport(input, request('Only Page One'), pki.rsa)).document;
    const twice = await signPdfReport(once, request('Only Page Two'), pki.ec);
    expectSoundSignedUpdate(once, twice.document);
    const report = verifyPdf(twice.document, { trustRoots: [pki.rootPem] });
    expect(report.signatures.map((s) => [s.indication, (s.auditTrail as { signer: { name: string } } | null)?.signer.name])).toEqual([
      ['TOTAL_PASSED', 'Only Page One'],
      ['TOTAL_PASSED', 'Only Page Two'],
    ]);
    expect(attachments(twice.document)).toEqual(['audit-trail.json']);
    expect(await pyhankoVerdicts(twice.document)).toEqual(['Signature1: VALID', 'Signature2: VALID']);
  }, 120_000);
});
