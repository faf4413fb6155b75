import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkerPool } from '../../../src/compute/worker-pool.js';
import type { DocxVerifyReport, VerifyReport } from '../../../src/documents/verify/index.js';
import { DomainError } from '../../../src/errors/domain-error.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { answering } from '../../support/domain-error.js';

const pool = new WorkerPool({ threads: 1, maxQueue: 10 });
afterAll(() => pool.close());

describe('verifyPdf worker task', () => {
  it('returns the report from a Piscina worker and carries DomainErrors across', async () => {
    const pdf = new Uint8Array(readFileSync(`${CORPUS_DIR}/pdf-signed/verifypdf-25-certificado-firmado.pdf`));
    const report = await pool.run<unknown, VerifyReport>('verifyPdf', { pdf, trustRoots: [] });
    expect(report.signatures[0]).toMatchObject({ intact: true, cryptoValid: true, subIndication: 'NO_CERTIFICATE_CHAIN_FOUND' });
    await expect(pool.run('verifyPdf', { pdf: new Uint8Array([1, 2, 3]), trustRoots: [] })).rejects.toMatchObject(answering(400, 'INVALID_FILE_FORMAT'));
    await expect(pool.run('verifyPdf', { pdf: new Uint8Array([1, 2, 3]), trustRoots: [] })).rejects.toBeInstanceOf(DomainError);
  });
});

describe('verifyDocx worker task', () => {
  it('returns the DOCX report from a Piscina worker and carries DomainErrors across', async () => {
    const docx = new Uint8Array(readFileSync(`${CORPUS_DIR}/docx-signed/eid-hello-world-signed-twice.docx`));
    const report = await pool.run<unknown, DocxVerifyReport>('verifyDocx', { docx, trustRoots: [] });
    expect(report.document).toMatchObject({ format: 'docx', signatureCount: 2 });
    expect(report.signatures.map((s) => [s.intact, s.cryptoValid, s.subIndication])).toEqual([
      [true, true, 'NO_CERTIFICATE_CHAIN_FOUND'],
      [true, true, 'NO_CERTIFICATE_CHAIN_FOUND'],
    ]);
    await expect(pool.run('verifyDocx', { docx: new Uint8Array([0x50, 0x4b, 3, 4]), trustRoots: [] })).rejects.toMatchObject(answering(400, 'INVALID_FILE_FORMAT'));
    await expect(pool.run('verifyDocx', { docx, trustRoots: [], maxBytes: 1024 })).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
  });
});
