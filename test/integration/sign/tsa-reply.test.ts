import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPdf } from '../../../src/documents/sign/sign-pdf.js';
import type { SignRequest } from '../../../src/documents/sign/types.js';
import { verifyPdf } from '../../../src/documents/verify/index.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { createTestPki, type TestPki } from './pki.js';
import { startTsa } from './tsa-server.js';
import { answering } from '../../support/domain-error.js';

/**
 * Signing reads the TSA's reply with the token reader verification uses, and refuses a reply that
 * is not the answer to its request. A proxy in front of the loopback openssl TSA changes the request
 * or the reply the way a faulty or hostile TSA (or a machine in the middle of plain http) would.
 */
type Mode = 'honest' | 'strip-nonce' | 'replay' | 'damage-signature' | 'resign-without-eku';

const PDF = readFileSync(path.join(CORPUS_DIR, 'pdf-unsigned/signpdf-w3dummy.pdf'));
const request: SignRequest = { signer: { name: 'Stamped', email: 'stamped@example.com' }, auditTrail: [{ type: 'submit', timestamp: '2025-03-01T09:01:00Z' }] };

let pki: TestPki;
let tsa: Awaited<ReturnType<typeof startTsa>>;
let proxy: http.Server;
let proxyUrl: string;
let mode: Mode = 'honest';
let lastReply: Buffer | undefined;

async function forward(query: Buffer): Promise<Buffer> {
  const res = await fetch(tsa.url, { method: 'POST', body: query, headers: { 'content-type': 'application/timestamp-query' } });
  return Buffer.from(await res.arrayBuffer());
}

function withoutNonce(query: Buffer): Buffer {
  const req = new pkijs.TimeStampReq({ schema: asn1js.fromBER(query).result });
  delete req.nonce;
  return Buffer.from(req.toSchema().toBER());
}

/** The token re-signed by openssl cms with the plain RSA signing certificate (no id-kp-timeStamping). */
function resignedWithoutEku(reply: Buffer): Buffer {
  const response = new pkijs.TimeStampResp({ schema: asn1js.fromBER(reply).result });
  const signed = new pkijs.SignedData({ schema: response.timeStampToken!.content });
  const tstInfo = Buffer.from(signed.encapContentInfo.eContent!.getValue());
  const tst = path.join(pki.dir, `tst-${process.hrtime.bigint()}`);
  writeFileSync(tst, tstInfo);
  try {
    const token = execFileSync('openssl', ['cms', '-sign', '-binary', '-nodetach', '-econtent_type', '1.2.840.113549.1.9.16.1.4', '-in', tst,
      '-signer', path.join(pki.dir, 'rsa.pem'), '-inkey', path.join(pki.dir, 'rsa.key'), '-md', 'sha256', '-outform', 'DER']);
    const status = new asn1js.Sequence({ value: [new asn1js.Integer({ value: 0 })] });
    return Buffer.concat([Buffer.from(new asn1js.Sequence({ value: [status, asn1js.fromBER(token).result] }).toBER())]);
  } finally {
    rmSync(tst, { force: true });
  }
}

beforeAll(async () => {
  pki = createTestPki();
  tsa = await startTsa(pki);
  proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const query = Buffer.concat(chunks);
      let reply = await forward(mode === 'strip-nonce' ? withoutNonce(query) : query);
      const previous = lastReply;
      lastReply = reply;
      if (mode === 'replay' && previous) reply = previous;
      if (mode === 'damage-signature') {
        reply = Buffer.from(reply);
        reply[reply.length - 20]! ^= 0xff; // inside the token's signature value, the last field of the reply
      }
      if (mode === 'resign-without-eku') reply = resignedWithoutEku(reply);
      res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(reply);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/tsa`;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await tsa?.close();
  pki?.cleanup();
});

const sign = (m: Mode) => {
  mode = m;
  return signPdf(PDF, request, pki.rsa, { tsa: { url: proxyUrl, allowPrivateAddresses: true } });
};

describe('signing checks the TSA reply with the verifier\'s token reader', () => {
  it('an honest reply is taken, and the verifier finds the time-stamp valid and trusted', async () => {
    const signed = await sign('honest');
    const report = verifyPdf(signed, { trustRoots: [pki.rootPem] });
    expect(report.signatures[0]!.timestamp).toMatchObject({ intact: true, valid: true, trusted: true });
  });

  it.each([
    ['strip-nonce', /does not echo the nonce/],
    ['replay', /does not cover the signature sent|does not echo the nonce/],
    ['damage-signature', /signature does not verify|unreadable reply/],
    ['resign-without-eku', /not a time-stamping certificate/],
  ] as const)('%s: refused with 502 SIGNING_ERROR naming why', async (m, why) => {
    await sign('honest'); // a reply to replay, and the placeholder size measured honestly
    const error = await sign(m).then(() => undefined, (e: unknown) => e as { status: number; code: string; message: string });
    expect(error).toMatchObject(answering(502, 'SIGNING_ERROR'));
    expect(error!.message).toMatch(why);
  });
});
