import { createHash, verify as verifySignature } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DOMParser, type Element } from '@xmldom/xmldom';
import PizZip from 'pizzip';
import { beforeAll, describe, expect, it } from 'vitest';
import { signDocx } from '../../../src/documents/sign/docx/sign-docx.js';
import { OpcPackage } from '../../../src/documents/ooxml/package.js';
import { canonicalize } from '../../../src/documents/ooxml/c14n.js';
import { transformedRelationships } from '../../../src/documents/ooxml/relationship-transform.js';
import { parseXml } from '../../../src/documents/ooxml/xml.js';
import { loadSigningIdentity, type SigningIdentity } from '../../../src/documents/sign/identity.js';
import type { SignRequest } from '../../../src/documents/sign/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { CORPUS_DIR } from '../../support/corpus.js';

const corpus = (p: string) => readFileSync(path.join(`${CORPUS_DIR}`, p));
const request: SignRequest = {
  signer: { name: 'Jane Q. Signer', email: 'jane@example.com', ip: '203.0.113.7' },
  auditTrail: [{ type: 'submit', timestamp: '2025-03-01T09:01:00Z', data: { field: 'x' } }],
  eventId: 'evt-1',
  reason: 'Approved',
  requestId: 'req-1',
};
const DSIG = 'http://www.w3.org/2000/09/xmldsig#';
const b64 = (data: string | Buffer | Uint8Array, algorithm = 'sha256') => createHash(algorithm).update(data).digest('base64');

let identity: SigningIdentity;
beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'docproc-sign-docx-unit-'));
  try {
    identity = await loadSigningIdentity({ dataDir: dir });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const unzip = (docx: Buffer) => new PizZip(docx);
const text = (zip: PizZip, name: string) => zip.file(name)?.asText();
const parse = (xml: string) => new DOMParser().parseFromString(xml, 'application/xml');
const all = (doc: ReturnType<typeof parse>, ns: string, name: string) => Array.from(doc.getElementsByTagNameNS(ns, name) as unknown as ArrayLike<Element>);

describe('Relationship Transform and canonical serialisation', () => {
  it('reproduces the digests MS Office 2010 wrote for its .rels references (corpus eid-ms-office-2010-signed.docx)', () => {
    const pkg = OpcPackage.open(corpus('docx-signed/eid-ms-office-2010-signed.docx'));
    const packageRels = transformedRelationships(pkg.xml('/_rels/.rels'), { sourceIds: ['rId1'], sourceTypes: [] });
    expect(b64(packageRels, 'sha1')).toBe('1vWU/YTF/7t6ZjnE44gAFTbZvvA=');
    const documentRels = pkg.relationships('/word/document.xml').map((r) => r.id);
    expect(b64(transformedRelationships(pkg.xml('/word/_rels/document.xml.rels'), { sourceIds: documentRels, sourceTypes: [] }), 'sha1')).toBe('7Lrw8RLHizGRtO3qKbjkYWsVI1E=');
  });

  it('writes C14N: sorted namespaces then attributes, start/end tag pairs, inherited namespaces on the apex, escaping', () => {
    const doc = parseXml('<r xmlns:a="urn:a"><b:x xmlns:b="urn:b" xmlns="urn:default" z="a&quot;&lt;&amp;&#10;" a="1"><y>1 &lt; 2 &amp; 3 &gt; 2&#13;</y></b:x></r>');
    const node = doc.documentElement!.firstChild as unknown as Parameters<typeof canonicalize>[0];
    expect(canonicalize(node, { exclusive: false, withComments: false })).toBe(
      '<b:x xmlns="urn:default" xmlns:a="urn:a" xmlns:b="urn:b" a="1" z="a&quot;&lt;&amp;&#xA;"><y>1 &lt; 2 &amp; 3 &gt; 2&#xD;</y></b:x>',
    );
  });
});

describe('signDocx package layout', () => {
  it('adds origin.sigs, sig1.xml, their relationships and content types, and the audit part; keeps every original part', async () => {
    const input = corpus('docx-signed/eid-hello-world-unsigned.docx');
    const { document, audit, warnings } = await signDocx(input, request, identity, { now: new Date('2025-03-01T09:02:03.456Z') });
    const before = unzip(input);
    const after = unzip(document);
    for (const name of Object.keys(before.files).filter((n) => !before.files[n].dir && n !== '[Content_Types].xml' && n !== '_rels/.rels')) {
      expect(Buffer.from(after.file(name)!.asUint8Array()).equals(Buffer.from(before.file(name)!.asUint8Array())), name).toBe(true);
    }
    expect(text(after, '_xmlsignatures/origin.sigs')).toBe('');
    expect(text(after, '_xmlsignatures/_rels/origin.sigs.rels')).toContain('Type="http://schemas.openxmlformats.org/package/2006/relationships/digital-signature/signature" Target="sig1.xml"');
    const rels = text(after, '_rels/.rels')!;
    expect(rels).toContain('Type="http://schemas.openxmlformats.org/package/2006/relationships/digital-signature/origin" Target="_xmlsignatures/origin.sigs"');
    expect(rels).toContain('Type="urn:docproc:relationships:audit-trail" Target="docproc/audit-trail.json"');
    const types = text(after, '[Content_Types].xml')!;
    expect(types).toContain('<Default Extension="sigs" ContentType="application/vnd.openxmlformats-package.digital-signature-origin"/>');
    expect(types).toContain('<Override PartName="/_xmlsignatures/sig1.xml" ContentType="application/vnd.openxmlformats-package.digital-signature-xmlsignature+xml"/>');
    expect(types).toContain('<Override PartName="/docproc/audit-trail.json" ContentType="application/json"/>');

    const stored = JSON.parse(text(after, 'docproc/audit-trail.json')!);
    expect(stored).toEqual(JSON.parse(JSON.stringify(audit)));
    expect(stored).toMatchObject({ signer: { name: 'Jane Q. Signer', ip: '203.0.113.7' }, eventId: 'evt-1', requestId: 'req-1', signedAt: '2025-03-01T09:02:03.000Z' });
    expect(stored.document.sha256).toBe(createHash('sha256').update(input).digest('hex'));
    expect(warnings.map((w) => w.message).join(' ')).toContain('no audit page');
  });

  it('signs every part except content types, core/app properties and signatures, with digests of the stored bytes', async () => {
    const input = corpus('docx/docx4j-sample-docx.docx');
    const { document } = await signDocx(input, { ...request, certificate: { enabled: false } }, identity);
    const zip = unzip(document);
    const sig = parse(text(zip, '_xmlsignatures/sig1.xml')!);
    const manifest = all(sig, DSIG, 'Manifest')[0];
    const references = all(sig, DSIG, 'Reference').filter((r) => r.parentNode === manifest);
    const uris = references.map((r) => r.getAttribute('URI')!.split('?')[0]);
    const expected = Object.keys(zip.files)
      .filter((n) => !zip.files[n].dir && !/^(\[Content_Types\]\.xml|docProps\/(core|app)\.xml|_xmlsignatures\/.*)$/.test(n))
      .map((n) => `/${n}`);
    expect(uris.sort()).toEqual(expected.sort());
    for (const reference of references) {
      const uri = reference.getAttribute('URI')!;
      const part = decodeURIComponent(uri.slice(1, uri.indexOf('?')));
      const digest = reference.getElementsByTagNameNS(DSIG, 'DigestValue').item(0)!.textContent;
      if (part.endsWith('.rels')) {
        const selected = Array.from(reference.getElementsByTagNameNS('http://schemas.openxmlformats.org/package/2006/digital-signature', 'RelationshipReference') as unknown as ArrayLike<Element>)
          .map((r) => r.getAttribute('SourceId'));
        expect(selected.length, part).toBeGreaterThan(0);
        expect(uri).toContain('?ContentType=application/vnd.openxmlformats-package.relationships+xml');
      } else {
        expect(digest, part).toBe(b64(zip.file(part)!.asUint8Array()));
      }
    }
    const packageRelsReference = references.find((r) => r.getAttribute('URI')!.startsWith('/_rels/.rels'))!;
    const selectedIds = Array.from(packageRelsReference.getElementsByTagNameNS('http://schemas.openxmlformats.org/package/2006/digital-signature', 'RelationshipReference') as unknown as ArrayLike<Element>).map((r) => r.getAttribute('SourceId'));
    const packageRels = parse(text(zip, '_rels/.rels')!);
    const typeOf = (id: string | null) => all(packageRels, 'http://schemas.openxmlformats.org/package/2006/relationships', 'Relationship').find((r) => r.getAttribute('Id') === id)!.getAttribute('Type');
    expect(selectedIds.map(typeOf).sort()).toEqual(['http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument', 'urn:docproc:relationships:audit-trail']);
  });

  it('SignedInfo is signed with RSA-SHA256 by the leaf certificate; XAdES names that certificate', async () => {
    const { document } = await signDocx(corpus('docx-signed/eid-hello-world-unsigned.docx'), request, identity);
    const xml = text(unzip(document), '_xmlsignatures/sig1.xml')!;
    const signedInfo = /<SignedInfo>[\s\S]*<\/SignedInfo>/.exec(xml)![0].replace('<SignedInfo>', `<SignedInfo xmlns="${DSIG}">`);
    const value = Buffer.from(/<SignatureValue>([^<]+)<\/SignatureValue>/.exec(xml)![1], 'base64');
    expect(verifySignature('sha256', Buffer.from(signedInfo), identity.certificate.publicKey, value)).toBe(true);
    expect(xml).toContain('<SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256">');
    const certificates = [...xml.matchAll(/<X509Certificate>([^<]+)<\/X509Certificate>/g)].map((m) => m[1]);
    expect(certificates[0]).toBe(identity.certificate.raw.toString('base64'));
    expect(certificates).toHaveLength(1 + identity.chain.length);
    expect(xml).toContain(`<xd:CertDigest><DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"></DigestMethod><DigestValue>${b64(identity.certificate.raw)}</DigestValue>`);
    expect(xml).toContain(`<X509SerialNumber>${BigInt(`0x${identity.certificate.serialNumber}`).toString()}</X509SerialNumber>`);
    expect(xml).toContain('<SignatureComments>Approved</SignatureComments>');
    expect(xml).toMatch(/<mdssi:Value>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ<\/mdssi:Value>/);
  });

  it('a second signature becomes sig2.xml with its own audit part; sig1.xml stays byte-identical', async () => {
    const once = (await signDocx(corpus('docx-signed/eid-hello-world-unsigned.docx'), request, identity)).document;
    const { document, warnings } = await signDocx(once, request, identity);
    const a = unzip(once);
    const b = unzip(document);
    expect(text(b, '_xmlsignatures/sig1.xml')).toBe(text(a, '_xmlsignatures/sig1.xml'));
    expect(text(b, '_xmlsignatures/sig2.xml')).toContain('<Signature xmlns="http://www.w3.org/2000/09/xmldsig#" Id="idPackageSignature">');
    expect(text(b, 'docproc/audit-trail-2.json')).toContain('"schemaVersion": 1');
    expect(text(b, '_xmlsignatures/_rels/origin.sigs.rels')).toContain('Target="sig2.xml"');
    expect((text(b, '_rels/.rels')!.match(/digital-signature\/origin/g) ?? []).length).toBe(1);
    expect(warnings.map((w) => w.message).join(' ')).toContain('already carries 1 signature');
  });

  it('refuses what it cannot sign', async () => {
    await expect(signDocx(Buffer.from('%PDF-1.7\n'), request, identity)).rejects.toMatchObject({ code: 'INVALID_FILE_FORMAT' });
    await expect(signDocx(corpus('docx-signed/eid-hello-world-unsigned.docx'), { ...request, auditTrail: [{ type: 'ready', timestamp: 'x' }] }, identity))
      .rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    const notWord = new PizZip();
    notWord.file('[Content_Types].xml', '<Types/>');
    await expect(signDocx(notWord.generate({ type: 'nodebuffer' }), request, identity)).rejects.toMatchObject({ code: 'INVALID_FILE_FORMAT' });
  });
});
