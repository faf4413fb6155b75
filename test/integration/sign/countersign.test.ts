import { execFileSync } from 'node:child_process';
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

beforeAll(async () => {
  pki = createTestPki();
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

  it('earlier signatures see only annotations and signatures added after them', async () => {
    const report = await routes.verify(chain[2]!);
    expect(report.signatures.map((s: { modificationsAfter: string }) => s.modificationsAfter)).toEqual(['annotations', 'annotations', 'none']);
  });

  it('pdfsig: every signature valid at every step; only the last covers the whole file', () => {
    for (const [i, pdf] of chain.entries()) {
      const sigs = pdfsig(pki, pdf);
      expect(sigs, `step ${i + 1}`).toHaveLength(i + 1);
      expect(sigs.map((s) => s.valid)).toEqual(Array(i + 1).fill(true));
      expect(sigs.at(-1)!.total).toBe(true);
    }
  });

  it('each signing adds its own audit file; all stay retrievable under unique names', () => {
    expect(attachments(chain[2]!).sort()).toEqual(['audit-trail-2.json', 'audit-trail-3.json', 'audit-trail.json']);
    const names = attachments(chain[2]!);
    const signers = names.map((_n, i) => JSON.stringify(attachment(chain[2]!, i + 1)));
    for (const who of ['First Signer', 'Second Signer', 'Third Signer']) expect(signers.some((s) => s.includes(who)), who).toBe(true);
    expect(qpdfCheck(pki, chain[2]!)).toContain('No syntax or stream encoding errors');
  });

  it('the warning header says what was done and claims nothing it did not check', () => {
    expect(warnings[0]).toEqual([]);
    for (const [step, name] of [[1, 'audit-trail-2.json'], [2, 'audit-trail-3.json']] as const) {
      const text = warnings[step]!.join(' | ');
      expect(text).toContain('no audit page was added');
      expect(text).toContain(`attached as ${name} in a file-attachment annotation`);
      expect(text).toContain('does not invalidate the earlier signatures');
      expect(text).not.toMatch(/signatures stay valid/);
    }
  });

  it('the audit record of a countersignature never goes through the catalog', () => {
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
    expect(chain[1]!.subarray(chain[0]!.length).toString('latin1')).toMatch(/\/Subtype \/FileAttachment/);
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
});
