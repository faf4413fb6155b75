import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SYSTEM_BUNDLE } from '../../../src/documents/pki/trust.js';
import { trustedListAnchors } from '../../../src/documents/pki/trusted-lists.js';
import { verifyPdf } from '../../../src/documents/verify/index.js';
import { issueTestKey, multipart } from '../../support/api-key.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { Pyhanko, pyhankoAvailable } from '../../support/pyhanko.js';
import { buildTestApp } from '../../support/test-app.js';
import { lotlXml, nationalListXml, signWithXmlsec, xmlsecVerifies, type ServiceEntry } from '../../support/trusted-list.js';

/**
 * Where verification trust comes from (issue 25 item 5): a request's own `trustRoots`, EU trusted
 * lists (TRUST_LISTS, checked against TRUST_LIST_SIGNERS and the LOTL's pointers) and the system
 * store (TRUST_SYSTEM). The third-party signature is made by pyHanko with a "qualified" CA made by
 * openssl; the lists are signed by xmlsec1. Every report names the source of the anchor.
 */
let dir: string;
let plain: { app: FastifyInstance; key: string };
let listed: { app: FastifyInstance; key: string };
let thirdParty: Buffer;
let caPem: string;
let beList: string;
let lotl: string;
const BE_SOURCE = 'EU trusted list BE: Example QTSP / Example Qualified CA';

const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
const file = (name: string) => path.join(dir, name);
const selfSigned = (name: string, subject: string) =>
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '30', '-subj', subject]);
const write = (name: string, text: string) => {
  writeFileSync(file(name), text);
  return file(name);
};

async function appWith(env: Record<string, string>, name: string) {
  const { app } = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: 'trust-sources-pepper-0123456789abc', RATE_LIMIT_MAX: '1000', DATA_DIR: file(`data-${name}`), ...env });
  if (!(await app.services.store.connected(30_000))) throw new Error('the key store (Redis) did not connect');
  return { app, key: await issueTestKey(app, `trust-${name}@example.com`) };
}

async function verify(target: { app: FastifyInstance; key: string }, pdf: Buffer, trustRoots?: string) {
  const res = await target.app.inject({
    method: 'POST', url: '/v1/verify', headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ document: { base64: pdf.toString('base64') }, ...(trustRoots === undefined ? {} : { trustRoots }) }),
  });
  return res;
}

const qualifiedCa = (statuses: ServiceEntry['statuses']): ServiceEntry => ({ provider: 'Example QTSP', name: 'Example Qualified CA', certPem: caPem, statuses });

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'docproc-trust-'));
  // A "qualified" CA and a signer it certified: a third party's PKI, unknown to the operator.
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', '/CN=Example Qualified CA/O=Example QTSP/C=BE',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  openssl(['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'signer.key', '-out', 'signer.csr', '-subj', '/CN=Anna Example/C=BE']);
  writeFileSync(file('signer.ext'), 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\n');
  openssl(['x509', '-req', '-in', 'signer.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '20', '-sha256', '-extfile', 'signer.ext', '-out', 'signer.pem']);
  caPem = readFileSync(file('ca.pem'), 'utf8');
  selfSigned('lotl-signer', '/CN=Test LOTL signer/O=European Commission (test)');
  selfSigned('be-signer', '/CN=Test BE trusted list signer/C=BE');
  selfSigned('rogue', '/CN=Rogue list signer');

  if (!pyhankoAvailable()) throw new Error('pyHanko (../shared/oracles/pyhanko) is needed to make the third-party signature');
  const pyhanko = new Pyhanko();
  try {
    await pyhanko.sign({ in: path.join(CORPUS_DIR, 'pdf-unsigned/signpdf-w3dummy.pdf'), out: file('third-party.pdf'), field: 'Signature1', key: file('signer.key'), cert: file('signer.pem'), chain: [file('ca.pem')] });
  } finally {
    pyhanko.close();
  }
  thirdParty = readFileSync(file('third-party.pdf'));

  beList = signWithXmlsec(dir, nationalListXml('BE', [qualifiedCa([{ status: 'granted', since: '2020-01-01T00:00:00Z' }])]), file('be-signer.key'), file('be-signer.pem'));
  lotl = signWithXmlsec(dir, lotlXml([{ territory: 'BE', signerPem: readFileSync(file('be-signer.pem'), 'utf8'), location: 'https://tsl.example.be/tsl-be.xml' }]), file('lotl-signer.key'), file('lotl-signer.pem'));
  plain = await appWith({}, 'plain');
  listed = await appWith({ TRUST_LISTS: `${write('eu-lotl.xml', lotl)},${write('tsl-be.xml', beList)}`, TRUST_LIST_SIGNERS: file('lotl-signer.pem') }, 'listed');
}, 180_000);

afterAll(async () => {
  await Promise.all([plain?.app.close(), listed?.app.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a request's own trustRoots", () => {
  it('a third-party signature is INDETERMINATE without them, TOTAL_PASSED with them (JSON and multipart), for that request only', async () => {
    const before = (await verify(plain, thirdParty)).json();
    expect(before.signatures[0]).toMatchObject({ intact: true, cryptoValid: true, trusted: false, indication: 'INDETERMINATE' });
    expect(before.signatures[0].signer.trustAnchor).toBeNull();

    const withRoots = (await verify(plain, thirdParty, caPem)).json();
    expect(withRoots.signatures[0]).toMatchObject({ trusted: true, indication: 'TOTAL_PASSED' });
    expect(withRoots.signatures[0].signer.trustAnchor).toEqual({ subject: expect.stringContaining('Example Qualified CA'), source: "the request's trustRoots" });

    const form = await multipart({ file: { data: thirdParty, filename: 'third-party.pdf' }, trustRoots: caPem });
    const viaForm = (await plain.app.inject({ method: 'POST', url: '/v1/verify', headers: { authorization: `Bearer ${plain.key}`, 'content-type': form.contentType }, payload: form.payload })).json();
    expect(viaForm.signatures[0]).toMatchObject({ trusted: true, indication: 'TOTAL_PASSED', signer: { trustAnchor: { source: "the request's trustRoots" } } });

    const after = (await verify(plain, thirdParty)).json();
    expect(after.signatures[0]).toMatchObject({ trusted: false, indication: 'INDETERMINATE' });
  });

  it('trustRoots without a readable certificate is a 400 naming the field', async () => {
    const res = await verify(plain, thirdParty, 'not a certificate');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(res.json().detail).toMatch(/trustRoots holds no PEM certificate/);
  });
});

describe('EU trusted lists (TRUST_LISTS, TRUST_LIST_SIGNERS)', () => {
  it('a third-party signature verifies as trusted through the national list the LOTL vouches for, naming the list and the service', async () => {
    const report = (await verify(listed, thirdParty)).json();
    expect(report.signatures[0]).toMatchObject({ trusted: true, indication: 'TOTAL_PASSED' });
    expect(report.signatures[0].signer.trustAnchor).toEqual({ subject: expect.stringContaining('Example Qualified CA'), source: BE_SOURCE });
    expect(report.valid).toBe(true);
  });

  it('the lists verify in xmlsec1 too (the independent implementation)', () => {
    expect(xmlsecVerifies(dir, beList, file('be-signer.pem'))).toBe(true);
    expect(xmlsecVerifies(dir, lotl, file('lotl-signer.pem'))).toBe(true);
  });

  it('a tampered list is refused, naming the file, and so does xmlsec1; the service does not start with it', async () => {
    const signers = [readFileSync(file('lotl-signer.pem'), 'utf8')];
    const tampered = [
      beList.replace('Example Qualified CA</Name>', 'Another CA</Name>'),
      beList.replace('Svcstatus/granted', 'Svcstatus/withdrawn'),
      beList.replace('<ds:SignatureValue>', '<ds:SignatureValue>AAAA'),
    ];
    for (const list of tampered) {
      expect(xmlsecVerifies(dir, list, file('be-signer.pem'))).toBe(false);
      expect(() => trustedListAnchors([{ name: 'eu-lotl.xml', xml: lotl }, { name: 'tsl-be.xml', xml: list }], signers)).toThrow(/the trusted list tsl-be\.xml \(BE\) is refused/);
    }
    const tamperedLotl = lotl.replace('https://tsl.example.be/tsl-be.xml', 'https://evil.example/tsl-be.xml');
    expect(() => trustedListAnchors([{ name: 'eu-lotl.xml', xml: tamperedLotl }, { name: 'tsl-be.xml', xml: beList }], signers)).toThrow(/eu-lotl\.xml \(EU\) is refused/);

    // A list that fails its check stops start-up, naming the setting and the file.
    await expect(buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: 'trust-sources-pepper-0123456789abc', DATA_DIR: file('data-broken'),
      TRUST_LISTS: `${file('eu-lotl.xml')},${write('tsl-be-tampered.xml', tampered[0]!)}`, TRUST_LIST_SIGNERS: file('lotl-signer.pem') }))
      .rejects.toThrow(/Invalid configuration: TRUST_LISTS cannot be used: the trusted list .*tsl-be-tampered\.xml \(BE\) is refused: its signature does not cover it as signed/);
  });

  it('a national list signed by a certificate neither the signers nor the LOTL name is refused', () => {
    const rogue = signWithXmlsec(dir, nationalListXml('BE', [qualifiedCa([{ status: 'granted', since: '2020-01-01T00:00:00Z' }])]), file('rogue.key'), file('rogue.pem'));
    expect(xmlsecVerifies(dir, rogue, file('rogue.pem'))).toBe(true);
    expect(() => trustedListAnchors([{ name: 'eu-lotl.xml', xml: lotl }, { name: 'tsl-be.xml', xml: rogue }], [readFileSync(file('lotl-signer.pem'), 'utf8')]))
      .toThrow(/signed by "CN=Rogue list signer", which is not an allowed signer/);
    // Without the LOTL, the BE signer is not allowed either.
    expect(() => trustedListAnchors([{ name: 'tsl-be.xml', xml: beList }], [readFileSync(file('lotl-signer.pem'), 'utf8')])).toThrow(/not an allowed signer/);
  });

  it('a service is an anchor only while granted: withdrawn before the signature, the signature is not trusted', () => {
    const now = Date.now();
    const withdrawnList = signWithXmlsec(dir, nationalListXml('BE', [qualifiedCa([
      { status: 'withdrawn', since: new Date(now - 3_600_000).toISOString() },
      { status: 'granted', since: '2020-01-01T00:00:00Z' },
    ])]), file('be-signer.key'), file('be-signer.pem'));
    const { anchors } = trustedListAnchors([{ name: 'eu-lotl.xml', xml: lotl }, { name: 'tsl-be.xml', xml: withdrawnList }], [readFileSync(file('lotl-signer.pem'), 'utf8')]);
    expect(anchors).toEqual([expect.objectContaining({ source: BE_SOURCE, from: '2020-01-01T00:00:00.000Z', until: new Date(now - 3_600_000).toISOString() })]);
    // The signature was made minutes ago, after the withdrawal: the chain builder does not take the anchor.
    const report = verifyPdf(thirdParty, { trustRoots: [], anchors });
    expect(report.signatures[0]).toMatchObject({ trusted: false, indication: 'INDETERMINATE' });
    expect(report.signatures[0]!.warnings.join(' ')).toMatch(/\(EU trusted list BE: Example QTSP \/ Example Qualified CA\) is trusted from 2020-01-01T00:00:00.000Z to/);
    // Granted until now: the same signature is trusted.
    const granted = trustedListAnchors([{ name: 'eu-lotl.xml', xml: lotl }, { name: 'tsl-be.xml', xml: beList }], [readFileSync(file('lotl-signer.pem'), 'utf8')]).anchors;
    expect(verifyPdf(thirdParty, { trustRoots: [], anchors: granted }).signatures[0]).toMatchObject({ trusted: true, indication: 'TOTAL_PASSED' });
  });
});

describe('TRUST_SYSTEM', () => {
  it("adds Debian's ca-certificates bundle, every anchor named as the system store", async () => {
    const system = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: 'trust-sources-pepper-0123456789abc', DATA_DIR: file('data-system'), TRUST_SYSTEM: 'true' });
    try {
      const { anchors } = await system.app.services.signing();
      const bundle = (readFileSync(SYSTEM_BUNDLE, 'utf8').match(/-----BEGIN CERTIFICATE-----/g) ?? []).length;
      expect(bundle).toBeGreaterThan(50);
      expect(anchors.filter((a) => a.source === 'system store (ca-certificates)')).toHaveLength(bundle);
      const { anchors: without } = await plain.app.services.signing();
      expect(without.some((a) => a.source === 'system store (ca-certificates)')).toBe(false);
    } finally {
      await system.app.close();
    }
  });
});
