import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../../src/accounts/api-keys.js';
import { signDocx, signPdf } from '../../../src/documents/sign/index.js';
import { verifyDocx, verifyPdf } from '../../../src/documents/verify/index.js';
import { reportWarnings } from '../../../src/documents/warnings.js';
import { VerifyResponseSchema } from '../../../src/routes/v1/schemas/verify.js';
import type { Services } from '../../../src/services.js';
import { TestPdf } from '../../unit/verify/helpers/pdf.js';
import { replacePart } from '../../unit/verify/helpers/ooxml.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';
import { CORPUS_DIR } from '../../support/corpus.js';

const PDF_SIGNED = `${CORPUS_DIR}/pdf-signed`;
const corpus = (p: string) => readFileSync(path.join(`${CORPUS_DIR}`, p));

/**
 * Verdicts of the corpus signers (none chains to our roots), per signed signature: indication/subIndication.
 * node-signpdf (node-forge) signs its signed attributes out of DER order: HASH_FAILURE, as EU DSS says
 * (test/integration/verify/corpus.test.ts explains).
 */
const EXPECTED: Record<string, string[]> = {
  'signpdf-issue-209-reason-includes-trailer-word.pdf': ['INDETERMINATE/NO_CERTIFICATE_CHAIN_FOUND'],
  'signpdf-signed-once.pdf': ['TOTAL_FAILED/HASH_FAILURE'],
  'signpdf-signed-twice.pdf': ['TOTAL_FAILED/HASH_FAILURE', 'TOTAL_FAILED/HASH_FAILURE'],
  'signpdf-signed.pdf': ['TOTAL_FAILED/HASH_FAILURE'],
  'signpdf-with-placeholder.pdf': [],
  'verifypdf-25-certificado-firmado.pdf': ['INDETERMINATE/NO_CERTIFICATE_CHAIN_FOUND'],
  'verifypdf-bytes-added.pdf': ['TOTAL_FAILED/HASH_FAILURE'],
  'verifypdf-pdf_digital_signature_timestamp.pdf': ['INDETERMINATE/NO_CERTIFICATE_CHAIN_FOUND'],
  'verifypdf-sample06-three-sigs-x509-rsa-sha1.pdf': Array(3).fill('INDETERMINATE/NO_CERTIFICATE_CHAIN_FOUND'),
  'verifypdf-samplecertifiedpdf.pdf': ['INDETERMINATE/NO_CERTIFICATE_CHAIN_FOUND'],
};

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
const validateResponse = ajv.compile(VerifyResponseSchema);

let dir: string;
let testApp: TestApp;
let app: FastifyInstance;
let services: Services;
let key: string;
let tsaRootPem: string;

function openssl(args: string[], cwd: string) {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A TSA (root CA + time-stamping certificate) for `openssl ts -reply`, in `tsaDir`. */
function makeTsa(tsaDir: string): string {
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'root.key', '-out', 'root.pem', '-subj', '/CN=Verify Route TSA Root', '-days', '3650',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], tsaDir);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'tsa.key', '-out', 'tsa.csr', '-subj', '/CN=Verify Route TSA'], tsaDir);
  writeFileSync(path.join(tsaDir, 'tsa.ext'), 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\nextendedKeyUsage=critical,timeStamping\n');
  openssl(['x509', '-req', '-in', 'tsa.csr', '-CA', 'root.pem', '-CAkey', 'root.key', '-set_serial', '0x51', '-days', '3650', '-extfile', 'tsa.ext', '-sha256', '-out', 'tsa.pem'], tsaDir);
  writeFileSync(path.join(tsaDir, 'serial'), '01\n');
  writeFileSync(
    path.join(tsaDir, 'ts.cnf'),
    '[tsa]\ndefault_tsa=t\n[t]\nserial=./serial\ncrypto_device=builtin\nsigner_cert=./tsa.pem\nsigner_key=./tsa.key\nsigner_digest=sha256\n' +
      'default_policy=1.2.3.4.1\ndigests=sha256,sha384,sha512\naccuracy=secs:1\nordering=yes\ntsa_name=yes\ness_cert_id_chain=no\ness_cert_id_alg=sha256\n',
  );
  return readFileSync(path.join(tsaDir, 'root.pem'), 'utf8');
}

/** An RFC 3161 token over `data`, made by the openssl TSA. */
function timestampToken(data: Buffer, tsaDir: string): Buffer {
  writeFileSync(path.join(tsaDir, 'content.bin'), data);
  openssl(['ts', '-query', '-data', 'content.bin', '-sha256', '-cert', '-out', 'req.tsq'], tsaDir);
  openssl(['ts', '-reply', '-config', 'ts.cnf', '-queryfile', 'req.tsq', '-token_out', '-out', 'token.der'], tsaDir);
  return readFileSync(path.join(tsaDir, 'token.der'));
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'docproc-verify-route-'));
  const tsaDir = path.join(dir, 'tsa');
  execFileSync('mkdir', [tsaDir]);
  tsaRootPem = makeTsa(tsaDir);
  writeFileSync(path.join(dir, 'trust.pem'), tsaRootPem);
  const pepper = 'verify-route-pepper-0123456789abcdef';
  testApp = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: pepper, RATE_LIMIT_MAX: '1000', DATA_DIR: path.join(dir, 'data'), TRUST_ROOTS: path.join(dir, 'trust.pem') });
  app = testApp.app;
  services = (app as unknown as { services: Services }).services;
  key = generateApiKey();
  await services.store.putApiKey(hashApiKey(key, pepper), { email: 'verify-route@example.com', createdAt: new Date().toISOString() });
});

afterAll(async () => {
  await app?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const auth = () => ({ authorization: `Bearer ${key}` });

const postJson = (body: unknown, headers: Record<string, string> = auth()) =>
  app.inject({ method: 'POST', url: '/v1/verify', headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

async function postMultipart(file: Buffer, filename: string, type: string) {
  const form = new FormData();
  form.append('file', new Blob([file], { type }), filename);
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  const payload = Buffer.from(await request.arrayBuffer());
  return app.inject({ method: 'POST', url: '/v1/verify', headers: { ...auth(), 'content-type': request.headers.get('content-type')! }, payload });
}

function expectVerdicts(body: { valid: boolean; document: { signatureCount: number }; signatures: Array<{ indication: string; subIndication: string | null; signed?: boolean }> }, expected: string[]) {
  expect(validateResponse(body), JSON.stringify(validateResponse.errors)).toBe(true);
  expect(body.valid).toBe(false);
  expect(body.document.signatureCount).toBe(expected.length);
  expect(body.signatures.filter((s) => s.signed !== false).map((s) => `${s.indication}/${s.subIndication}`)).toEqual(expected);
}

describe('POST /v1/verify: the PDF corpus over HTTP', () => {
  it('covers every corpus file', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(readdirSync(PDF_SIGNED).sort());
  });

  it.each(Object.entries(EXPECTED))('%s as JSON base64 and as multipart: same verdicts as the engine', async (name, expected) => {
    const pdf = readFileSync(path.join(PDF_SIGNED, name));
    const { trustRoots, anchors } = await services.signing();
    // The route answers the engine's report plus `warnings`, the report's notes in one list.
    const engineReport = verifyPdf(pdf, { trustRoots, anchors });
    const engine = JSON.parse(JSON.stringify({ ...engineReport, warnings: reportWarnings(engineReport) }));

    const json = await postJson({ document: { base64: pdf.toString('base64') } });
    expect(json.statusCode).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expectVerdicts(json.json(), expected);
    expect(json.json()).toEqual(engine);

    const multipart = await postMultipart(pdf, name, 'application/pdf');
    expect(multipart.statusCode).toBe(200);
    expect(multipart.json()).toEqual(engine);
  });
});

describe('POST /v1/verify: documents signed by the service identity and by a trusted TSA', () => {
  it('a PDF signed with the service identity is valid (TOTAL_PASSED) with the service root trusted', async () => {
    const { identity } = await services.signing();
    const signed = await signPdf(
      corpus('pdf-unsigned/signpdf-w3dummy.pdf'),
      { signer: { name: 'Route Tester', email: 'route@example.com' }, auditTrail: [{ type: 'submit', timestamp: new Date().toISOString() }] },
      identity,
    );
    const res = await postJson({ document: { base64: signed.toString('base64') } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(validateResponse(body)).toBe(true);
    expect(body.valid).toBe(true);
    expect(body.signatures.at(-1)).toMatchObject({ signed: true, intact: true, cryptoValid: true, trusted: true, indication: 'TOTAL_PASSED', subIndication: null });
  });

  it('takes back exactly the document object POST /v1/sign returns, with a SuperDoc eventId; other properties are refused', async () => {
    const sign = await app.inject({
      method: 'POST',
      url: '/v1/sign',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: { document: { base64: corpus('pdf-unsigned/signpdf-w3dummy.pdf').toString('base64') }, signer: { name: 'Round Trip', email: 'round@example.com' }, auditTrail: [{ type: 'submit', timestamp: new Date().toISOString() }] },
    });
    expect(sign.statusCode, sign.body).toBe(200);
    const { document } = sign.json();
    expect(Object.keys(document).sort()).toEqual(['base64', 'contentType']);
    const res = await postJson({ document, eventId: 'evt-42' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().valid).toBe(true);
    // One rule on every route: what the operation does not declare is refused, naming it.
    const extra = await postJson({ document, eventId: 'evt-42', somethingElse: { nested: true } });
    expect(extra.statusCode).toBe(400);
    expect(extra.json().details).toContainEqual({ field: 'body.somethingElse', issue: expect.stringMatching(/^unknown property `somethingElse`; allowed: `document`/) });
    // Inside `document`, unknown properties are still refused: a typo there would lose the input.
    expect((await postJson({ document: { base64: document.base64, contenttype: 'application/pdf' } })).statusCode).toBe(400);
  });

  it('a document time-stamp (/Type /DocTimeStamp, ETSI.RFC3161) from a trusted TSA passes, in its own list: it signs for nobody', async () => {
    const tsaDir = path.join(dir, 'tsa');
    const pdf = TestPdf.base().sign({ subFilter: 'ETSI.RFC3161', type: 'DocTimeStamp', cms: (signedBytes) => timestampToken(signedBytes, tsaDir) }).bytes;
    expect(pdf.toString('latin1')).toContain('/Type /DocTimeStamp');
    const res = await postJson({ document: { base64: pdf.toString('base64') } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(validateResponse(body)).toBe(true);
    expect(body.signatures).toEqual([]);
    const stamp = body.timestamps[0];
    expect(stamp).toMatchObject({ kind: 'documentTimestamp', subFilter: 'ETSI.RFC3161', intact: true, cryptoValid: true, trusted: true, indication: 'TOTAL_PASSED' });
    expect(stamp.timestamp).toMatchObject({ tsa: expect.stringContaining('Verify Route TSA'), intact: true, valid: true, trusted: true });
    // A time-stamp proves when the document existed, not that anyone signed it (EU DSS: NO_SIGNATURE_FOUND).
    expect(body).toMatchObject({ valid: false, signer: null, signers: [], document: { signatureCount: 0, timestampCount: 1 } });
    expect(body.reason).toMatch(/no signatures, only a document time-stamp/);
  });

  it('a DOCX signed by the sign engine (signDocx) with the service identity is valid; one changed byte makes it invalid', async () => {
    const { identity, trustRoots, anchors } = await services.signing();
    const { document: signed } = await signDocx(
      corpus('docx-signed/eid-hello-world-unsigned.docx'),
      { signer: { name: 'Route Tester', email: 'route@example.com' }, auditTrail: [{ type: 'submit', timestamp: new Date().toISOString() }] },
      identity,
    );
    const res = await postJson({ document: { base64: signed.toString('base64') } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(validateResponse(body), JSON.stringify(validateResponse.errors)).toBe(true);
    expect(body).toMatchObject({ valid: true, document: { format: 'docx', signatureCount: 1 } });
    expect(body.signatures[0]).toMatchObject({ xades: true, intact: true, cryptoValid: true, trusted: true, indication: 'TOTAL_PASSED' });
    const engineReport = verifyDocx(signed, { trustRoots, anchors });
    expect(body).toEqual(JSON.parse(JSON.stringify({ ...engineReport, warnings: reportWarnings(engineReport) })));
    // The service signs with its development CA here: the report names it and warns.
    expect(body.signatures[0].signer.trustAnchor).toEqual({ subject: expect.any(String), source: "docproc's development CA (NOT FOR PRODUCTION)" });
    expect(JSON.stringify(body.signatures[0].warnings)).toMatch(/development CA \(NOT FOR PRODUCTION\)/);

    const tampered = replacePart(signed, 'word/document.xml', (t) => t.replace('Hello', 'Jello'));
    const bad = (await postMultipart(tampered, 'contract.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document')).json();
    expect(bad.valid).toBe(false);
    expect(bad.signatures[0]).toMatchObject({ intact: false, indication: 'TOTAL_FAILED', subIndication: 'HASH_FAILURE' });
    expect(bad.signatures[0].parts.find((p: { part: string }) => p.part === '/word/document.xml')).toMatchObject({ intact: false });
  });

  it('the DOCX corpus over HTTP: eID signatures intact but untrusted, the unsigned one has none', async () => {
    for (const [name, count] of [['eid-hello-world-signed', 1], ['eid-hello-world-signed-twice', 2], ['eid-ms-office-2010-signed', 1], ['eid-hello-world-unsigned', 0]] as const) {
      const res = await postMultipart(corpus(`docx-signed/${name}.docx`), `${name}.docx`, 'application/octet-stream');
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(validateResponse(body)).toBe(true);
      expect(body).toMatchObject({ valid: false, document: { format: 'docx', signatureCount: count } });
      for (const sig of body.signatures) expect(sig).toMatchObject({ intact: true, cryptoValid: true, subIndication: 'NO_CERTIFICATE_CHAIN_FOUND' });
    }
  });
});

describe('POST /v1/verify: refusals', () => {
  it('refuses {url} with 400 URL_NOT_ALLOWED by default', async () => {
    const res = await postJson({ document: { url: 'https://example.com/contract.pdf' } });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'URL_NOT_ALLOWED', status: 400 });
  });

  it('answers a file that is neither PDF nor DOCX with 400 problem+json naming the two (SuperDoc’s contract), a broken ZIP with 400', async () => {
    const res = await postJson({ document: { base64: Buffer.from('just some text, not a document').toString('base64') } });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'INVALID_FILE_FORMAT', status: 400, acceptedFormats: ['pdf', 'docx'] });
    const zip = await postMultipart(Buffer.from('PK\x03\x04 not really a zip'), 'x.docx', 'application/octet-stream');
    expect(zip.statusCode).toBe(400);
    expect(zip.json()).toMatchObject({ code: 'INVALID_FILE_FORMAT' });
  });

  it('a PDF that needs a user password gets 422 ENCRYPTED_DOCUMENT in the error format; one with an empty user password is verified', async () => {
    const plain = path.join(dir, 'plain.pdf');
    writeFileSync(plain, TestPdf.base().bytes);
    const encrypted = (user: string) => {
      const out = path.join(dir, `enc-${user.length}.pdf`);
      execFileSync('qpdf', ['--encrypt', user, 'owner-secret', '256', '--', plain, out], { stdio: ['ignore', 'pipe', 'pipe'] });
      try {
        return readFileSync(out);
      } finally {
        rmSync(out, { force: true });
      }
    };
    for (const send of [(pdf: Buffer) => postJson({ document: { base64: pdf.toString('base64') } }), (pdf: Buffer) => postMultipart(pdf, 'locked.pdf', 'application/pdf')]) {
      const res = await send(encrypted('user-secret'));
      expect(res.statusCode).toBe(422);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: 'ENCRYPTED_DOCUMENT', status: 422 });
      expect(res.json().detail ?? res.json().message ?? '').toMatch(/password/);
      expect(JSON.stringify(res.json())).not.toMatch(/\n\s+at /);
    }
    const open = await postJson({ document: { base64: encrypted('').toString('base64') } });
    expect(open.statusCode).toBe(200);
    expect(open.json()).toMatchObject({ valid: false, unsignedFields: ['Signature1', 'Signature2'], document: { pages: 1 } });
    rmSync(plain, { force: true });
  });

  it('requires an API key (401) and a well-formed body (400)', async () => {
    const res = await postJson({ document: { base64: 'JVBERi0=' } }, {});
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const invalid = await postJson({ document: { path: '/etc/passwd' } });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});
