import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerPool } from '../../../src/compute/worker-pool.js';
import { toPortable } from '../../../src/documents/sign/identity.js';
import type { SignTaskInput, SignTaskOutput } from '../../../workers/sign.js';
import { createTestPki, currentCallerP12, pdfsig, type TestPki } from './pki.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { answering } from '../../support/domain-error.js';

let pki: TestPki;
let pool: WorkerPool;
beforeAll(() => {
  pki = createTestPki();
  pool = new WorkerPool({ threads: 1, maxQueue: 10 });
});
afterAll(async () => {
  await pool?.close();
  pki?.cleanup();
});

const request = {
  signer: { name: 'Pool Signer', email: 'pool@example.com' },
  auditTrail: [{ type: 'submit' as const, timestamp: '2025-01-01T00:00:00Z' }],
};

describe('signPdfTask through the Piscina pool', () => {
  it('signs with the service identity, and with a caller PKCS#12 for one request', async () => {
    const document = readFileSync(`${CORPUS_DIR}/pdf-unsigned/signpdf-w3dummy.pdf`);
    const out = await pool.run<SignTaskInput, SignTaskOutput>('signPdfTask', { document, request, identity: toPortable(pki.rsa) });
    expect(pdfsig(pki, Buffer.from(out.document))[0]).toMatchObject({ valid: true, total: true, certificateTrusted: true });

    const p12 = currentCallerP12('node-signpdf');
    const own = await pool.run<SignTaskInput, SignTaskOutput>('signPdfTask', {
      document, request, identity: toPortable(pki.rsa), p12: { data: p12, passphrase: 'node-signpdf' },
    });
    const sig = pdfsig(pki, Buffer.from(own.document))[0];
    expect(sig).toMatchObject({ valid: true, total: true });
    expect(sig.raw).toContain('SignPdf');
  });

  it('carries typed errors back (wrong passphrase → 422 INVALID_CERTIFICATE)', async () => {
    const document = readFileSync(`${CORPUS_DIR}/pdf-unsigned/signpdf-w3dummy.pdf`);
    await expect(pool.run('signPdfTask', {
      document, request, identity: toPortable(pki.rsa), p12: { data: readFileSync(`${CORPUS_DIR}/certs/signpdf-withpass.p12`), passphrase: 'nope' },
    })).rejects.toMatchObject(answering(422, 'INVALID_CERTIFICATE'));
  });
});
