/**
 * Verify benchmark: p50/p95 for a 1-signature and a 5-signature PDF and a 1-signature DOCX (all
 * built here with the test helpers), through the engine in a Piscina pool at concurrency 1 and 4.
 *   npx tsx bench/verify.ts [--iterations 200] [--url http://localhost:3000 --key <api key>]
 * With --url/--key it POSTs the same PDFs to /v1/verify instead.
 */
import { measure as measureLatency } from './lib/measure.js';
import { parseArgs } from 'node:util';
import { WorkerPool } from '../src/compute/worker-pool.js';
import { readFileSync } from 'node:fs';
import type { DocxVerifyReport, VerifyReport } from '../src/documents/verify/index.js';
import { signDocxForTest } from '../test/unit/verify/helpers/ooxml.js';
import { makeLeaf, makeRoot } from '../test/unit/verify/helpers/pki.js';
import { TestPdf } from '../test/unit/verify/helpers/pdf.js';
import { CORPUS_DIR } from '../test/support/corpus.js';

const { values } = parseArgs({ options: { url: { type: 'string' }, key: { type: 'string' }, iterations: { type: 'string', default: '200' } } });
const iterations = Number(values.iterations);

const root = makeRoot();
const signer = makeLeaf(root);
const one = TestPdf.base().sign({ cms: { signer } }).bytes;
const five = TestPdf.base();
for (let i = 0; i < 5; i++) {
  const fieldNum = five.addSignatureField(`Extra${i}`);
  five.sign({ fieldNum, fieldName: `Extra${i}`, cms: { signer } });
}
const fiveBytes = five.bytes;
const docx = signDocxForTest(readFileSync(`${CORPUS_DIR}/docx-signed/eid-hello-world-unsigned.docx`), { signer });

const measure = (label: string, concurrency: number, run: () => Promise<unknown> | unknown) =>
  measureLatency(label, concurrency, run, { iterations, unit: 'req' });

async function viaPool() {
  const pool = new WorkerPool({ threads: 4, maxQueue: 1000 });
  try {
    for (const [label, pdf, count] of [['1 signature', one, 1], ['5 signatures', fiveBytes, 5]] as const) {
      const report = await pool.run<unknown, VerifyReport>('verifyPdf', { pdf, trustRoots: [root.pem] });
      if (!report.valid || report.document.signatureCount !== count) throw new Error(`${label}: unexpected report: ${report.reason}`);
      for (const concurrency of [1, 4]) await measure(`engine ${label}`, concurrency, () => pool.run('verifyPdf', { pdf, trustRoots: [root.pem] }));
    }
    const report = await pool.run<unknown, DocxVerifyReport>('verifyDocx', { docx, trustRoots: [root.pem] });
    if (!report.valid) throw new Error(`DOCX: unexpected report: ${report.reason}`);
    for (const concurrency of [1, 4]) await measure('engine DOCX 1 signature', concurrency, () => pool.run('verifyDocx', { docx, trustRoots: [root.pem] }));
  } finally {
    await pool.close();
  }
}

async function viaHttp(url: string, key: string) {
  // The server does not trust this run's test root: the verdict is NO_CERTIFICATE_CHAIN_FOUND, the work is the same.
  for (const [label, data, count] of [['1 signature', one, 1], ['5 signatures', fiveBytes, 5], ['DOCX 1 signature', docx, 1]] as const) {
    const body = JSON.stringify({ document: { base64: Buffer.from(data).toString('base64') } });
    const run = async () => {
      const res = await fetch(new URL('/v1/verify', url), { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body });
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
      const report = (await res.json()) as { document: { signatureCount: number }; signatures: Array<{ signed?: boolean; intact: boolean; cryptoValid: boolean }> };
      if (report.document.signatureCount !== count || !report.signatures.filter((s) => s.signed !== false).every((s) => s.intact && s.cryptoValid)) throw new Error(`${label}: unexpected report`);
    };
    for (const concurrency of [1, 4]) await measure(`http ${label}`, concurrency, run);
  }
}

if (values.url && values.key) await viaHttp(values.url, values.key);
else await viaPool();
