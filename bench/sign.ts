/**
 * Sign benchmark: a 1-page PDF and a ~1 MB / 50-page PDF (built here with pdf-lib), p50/p95 and
 * signatures/s at concurrency 1 and 4:
 *   - a baseline in the same run: SHA-256 of the 1 MB file + one signature with the same key
 *     (the work no signer can avoid), and the engine in-process (c=1) with and without the audit
 *     page, as a ratio to it, with the p50 of every signing stage (options.stages);
 *   - through the Piscina pool (task signPdfTask, c=1 and c=4);
 *   - a bare @signpdf sign of the same file (plain placeholder + P12Signer) for comparison.
 *   npx tsx bench/sign.ts [--iterations 100] [--engine-only] [--audit-page] [--compare <checkout>] [--url http://localhost:3000 --key <api key>] [--docx file.docx]
 * --engine-only stops after the in-process part (baseline, engine, stages).
 * --compare <checkout> (with --engine-only) also runs the engine of another checkout of this repository
 *   (a directory with src/ and node_modules), call by call alternating with this one and the baseline,
 *   and prints its CPU time p50 and the ratio after/before (this checkout / the other).
 * Every in-process call gets a fresh copy of the file, made before the clock starts: the service reads
 * each request into a new buffer, and the PDF reader caches per buffer.
 * --audit-page signs with the audit-trail page (embedded DejaVu subset fonts) instead of without.
 * --docx also measures OOXML package signing of that DOCX (to=docx; task signDocxTask).
 * With --url/--key it POSTs the same PDFs to /v1/sign (JSON) instead of using the pool, and
 * runs bare @signpdf in this process at the same concurrencies for comparison.
 */
import { textPdf } from './support/text-pdf.js';
import { measure as measureLatency } from './lib/measure.js';
import { execFileSync } from 'node:child_process';
import { createHash, sign as cryptoSign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { plainAddPlaceholder } from '@signpdf/placeholder-plain';
import { P12Signer } from '@signpdf/signer-p12';
import { SignPdf } from '@signpdf/signpdf';
import { WorkerPool } from '../src/compute/worker-pool.js';
import { parsePkcs12, toPortable } from '../src/documents/sign/identity.js';
import { signPdfReport } from '../src/documents/sign/sign-pdf.js';
import { signDocx } from '../src/documents/sign/docx/sign-docx.js';
import type { SignRequest } from '../src/documents/sign/types.js';
import type { SignTaskInput, SignTaskOutput } from '../workers/sign.js';

const { values } = parseArgs({ options: { url: { type: 'string' }, key: { type: 'string' }, iterations: { type: 'string', default: '100' }, 'audit-page': { type: 'boolean', default: false }, 'engine-only': { type: 'boolean', default: false }, compare: { type: 'string' }, docx: { type: 'string' } } });
const docx = values.docx ? readFileSync(values.docx) : undefined;
const iterations = Number(values.iterations);


const dir = mkdtempSync(path.join(tmpdir(), 'docproc-bench-sign-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${dir}/k.pem`, '-out', `${dir}/c.pem`, '-days', '2', '-subj', '/CN=bench'], { stdio: 'ignore' });
execFileSync('openssl', ['pkcs12', '-export', '-inkey', `${dir}/k.pem`, '-in', `${dir}/c.pem`, '-passout', 'pass:bench', '-out', `${dir}/b.p12`], { stdio: 'ignore' });
const p12 = readFileSync(`${dir}/b.p12`);
rmSync(dir, { recursive: true, force: true });
const identity = parsePkcs12(p12, 'bench');

const small = await textPdf(1, 20);
const large = await textPdf(50, 940);
const request: SignRequest = {
  signer: { name: 'Bench Signer', email: 'bench@example.com' },
  auditTrail: [{ type: 'submit', timestamp: new Date().toISOString() }],
  certificate: { enabled: values['audit-page'] },
};

const measure = (label: string, concurrency: number, run: () => Promise<unknown> | unknown) =>
  measureLatency(label, concurrency, run, { iterations, unit: 'sig' });

const files = [[`1 page (${(small.length / 1024).toFixed(0)} KB)`, small], [`50 pages (${(large.length / 1048576).toFixed(2)} MB)`, large]] as const;

async function bareSignpdf(pdf: Buffer) {
  const withPlaceholder = plainAddPlaceholder({ pdfBuffer: pdf, reason: 'bench', contactInfo: 'bench@example.com', name: 'Bench Signer', location: 'here' });
  return new SignPdf().sign(withPlaceholder, new P12Signer(p12, { passphrase: 'bench' }));
}

if (values.url) {
  if (!values.key) throw new Error('--url needs --key');
  for (const [label, pdf] of files) {
    const body = JSON.stringify({ ...request, document: { base64: pdf.toString('base64') } });
    for (const c of [1, 4]) {
      await measure(`POST /v1/sign ${label}`, c, async () => {
        const res = await fetch(`${values.url}/v1/sign`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${values.key}` }, body });
        if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      });
    }
    for (const c of [1, 4]) await measure(`bare @signpdf ${label}`, c, () => bareSignpdf(pdf));
  }
  if (docx) {
    const body = JSON.stringify({ ...request, document: { base64: docx.toString('base64') } });
    for (const c of [1, 4]) {
      await measure(`POST /v1/sign?to=docx (${(docx.length / 1024).toFixed(0)} KB)`, c, async () => {
        const res = await fetch(`${values.url}/v1/sign?to=docx`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${values.key}` }, body });
        if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      });
    }
  }
} else {
  // In-process first (the pool's worker threads would compete for the cores while they start),
  // alternating with the baseline call by call, so that load from elsewhere hits both alike.
  const baselineCall = (input: Buffer) => {
    createHash('sha256').update(input).digest();
    cryptoSign('sha256', Buffer.alloc(64, 1), identity.privateKey);
  };
  const medianOf = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  const other = values.compare
    ? ((await import(path.resolve(values.compare, 'src/documents/sign/sign-pdf.ts'))) as { signPdfReport: typeof signPdfReport }).signPdfReport
    : undefined;
  for (const [label, pdf] of files) {
    for (const auditPage of [false, true]) {
      const signRequest = { ...request, certificate: { enabled: auditPage } };
      for (let i = 0; i < 20; i++) {
        await signPdfReport(Buffer.from(pdf), signRequest, identity);
        if (other) await other(Buffer.from(pdf), signRequest, identity);
      }
      const stages: Record<string, number[]> = {};
      const engine: number[] = [];
      const base: number[] = [];
      const engineCpu: number[] = [];
      const baseCpu: number[] = [];
      const otherCpu: number[] = [];
      const cpuMs = (since: NodeJS.CpuUsage) => {
        const used = process.cpuUsage(since);
        return (used.user + used.system) / 1000;
      };
      for (let i = 0; i < iterations; i++) {
        // The baseline always hashes (a fresh copy of) the 1 MB file, whichever file is signed.
        let input = Buffer.from(large);
        let cpu = process.cpuUsage();
        let t = performance.now();
        baselineCall(input);
        base.push(performance.now() - t);
        baseCpu.push(cpuMs(cpu));
        const times: Record<string, number> = {};
        const runThis = async () => {
          input = Buffer.from(pdf);
          cpu = process.cpuUsage();
          t = performance.now();
          await signPdfReport(input, signRequest, identity, { stages: times });
          engine.push(performance.now() - t);
          engineCpu.push(cpuMs(cpu));
        };
        const runOther = async () => {
          if (!other) return;
          input = Buffer.from(pdf);
          cpu = process.cpuUsage();
          await other(input, signRequest, identity);
          otherCpu.push(cpuMs(cpu));
        };
        // This checkout and the other take turns at going first.
        for (const run of i % 2 === 0 ? [runThis, runOther] : [runOther, runThis]) await run();
        for (const [stage, ms] of Object.entries(times)) (stages[stage] ??= []).push(ms);
      }
      const [p50, baseP50] = [medianOf(engine), medianOf(base)];
      console.log(`engine in-process ${label} ${auditPage ? 'with' : 'without'} audit page: p50 ${p50.toFixed(2)} ms, baseline (SHA-256 of 1 MB + 1 signature) p50 ${baseP50.toFixed(2)} ms = ${(p50 / baseP50).toFixed(2)}× baseline`);
      // CPU time of this process per call: what the call costs without waiting for a core on a loaded machine.
      console.log(`  CPU time p50 ${medianOf(engineCpu).toFixed(2)} ms, baseline ${medianOf(baseCpu).toFixed(2)} ms = ${(medianOf(engineCpu) / medianOf(baseCpu)).toFixed(2)}× baseline`);
      if (other) {
        console.log(`  --compare ${values.compare}: CPU time p50 ${medianOf(otherCpu).toFixed(2)} ms = ${(medianOf(otherCpu) / medianOf(baseCpu)).toFixed(2)}× baseline; this / other = ${(medianOf(engineCpu) / medianOf(otherCpu)).toFixed(3)}`);
      }
      console.log(`  stage p50s: ${Object.entries(stages).map(([stage, ms]) => `${stage} ${medianOf(ms).toFixed(2)}`).join(', ')} ms`);
    }
  }
  if (values['engine-only']) process.exit(0);
  const pool = new WorkerPool({ threads: 4, maxQueue: 1000 });
  const portable = toPortable(identity);
  try {
    for (const [label, pdf] of files) {
      for (const c of [1, 4]) {
        await measure(`engine via pool ${label}`, c, () => pool.run<SignTaskInput, SignTaskOutput>('signPdfTask', { document: pdf, request, identity: portable }));
      }
      await measure(`bare @signpdf ${label}`, 1, () => bareSignpdf(pdf));
    }
    if (docx) {
      const label = `DOCX (${(docx.length / 1024).toFixed(0)} KB)`;
      await measure(`engine in-process ${label}`, 1, () => signDocx(docx, request, identity));
      for (const c of [1, 4]) {
        await measure(`engine via pool ${label}`, c, () => pool.run<SignTaskInput, SignTaskOutput>('signDocxTask', { document: docx, request, identity: portable }));
      }
    }
  } finally {
    await pool.close();
  }
}
