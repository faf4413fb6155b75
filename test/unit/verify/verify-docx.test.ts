import { readFileSync } from 'node:fs';
import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import PizZip from 'pizzip';
import { beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors/domain-error.js';
import { verifyDocx, type DocxVerifyReport } from '../../../src/documents/verify/index.js';
import { VerifyDocxResponseSchema, VerifyResponseSchema } from '../../../src/routes/v1/schemas/verify.js';
import { makeLeaf, makeTestPki, type TestIdentity } from './helpers/pki.js';
import { removePart, replacePart, signDocxForTest } from './helpers/ooxml.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { duplicatedMainPart, extraFootnotes, extraOfficeDocument, shadowedMainPart } from '../../support/ooxml/docx-attacks.js';
import { toHttpFailure } from '../../../src/http/error-status.js';

const corpus = (name: string) => readFileSync(`${CORPUS_DIR}/docx-signed/${name}.docx`);
/** Inside the validity of the 2009/2010 Belgian eID certificates of the corpus. */
const EID_TIME = new Date('2010-10-01T00:00:00Z');

let root: TestIdentity;
let signer: TestIdentity;
let ecSigner: TestIdentity;

beforeAll(() => {
  if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => /^\d{4}-\d\d-\d\dT/.test(v) && !Number.isNaN(Date.parse(v)));
  ({ root, signer, ecSigner } = makeTestPki());
});

const schemaErrors = (report: DocxVerifyReport) => [...Value.Errors(VerifyDocxResponseSchema, report)].map((e) => `${e.path}: ${e.message}`);
const partOf = (report: DocxVerifyReport, name: string, sig = 0) => report.signatures[sig]!.parts.find((p) => p.part === name);

/** The signer certificate embedded in a corpus signature, as PEM (trusting it directly lets the later rules show). */
function embeddedLeafPem(docx: Uint8Array, sig = 'sig1'): string {
  const xml = new PizZip(docx).file(`_xmlsignatures/${sig}.xml`)!.asText();
  const b64 = /<X509Certificate>([\s\S]+?)<\/X509Certificate>/.exec(xml)![1]!.replace(/\s+/g, '');
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}

describe('verifyDocx: corpus signatures (made by the eID applet and by MS Office 2010)', () => {
  it('one signature: every signed part intact, SignatureValue verifies, untrusted Belgian eID chain', () => {
    const report = verifyDocx(corpus('eid-hello-world-signed'), { trustRoots: [] });
    expect(schemaErrors(report)).toEqual([]);
    expect(Value.Check(VerifyResponseSchema, report)).toBe(true);
    expect(report.valid).toBe(false);
    expect(report.document).toMatchObject({ format: 'docx', signatureCount: 1, parts: 13, uncoveredParts: ['/docProps/app.xml', '/docProps/core.xml'] });
    const [sig] = report.signatures;
    expect(sig).toMatchObject({
      part: '/_xmlsignatures/sig1.xml',
      id: 'idPackageSignature',
      signingTime: '2009-08-21T09:46:20.000Z',
      reason: 'The purpose of signing the document is sqadaboof',
      signatureAlgorithm: 'RSA PKCS#1 v1.5 with SHA-1',
      canonicalization: 'C14N 1.0',
      xades: false,
      intact: true,
      cryptoValid: true,
      trusted: false,
      certificateValidAtSigningTime: true,
      indication: 'INDETERMINATE',
      subIndication: 'NO_CERTIFICATE_CHAIN_FOUND',
    });
    expect(sig!.signer).toMatchObject({ commonName: 'Bart Hanssens (Signature)' });
    expect(sig!.signedObjects).toEqual([
      { uri: '#idPackageObject', type: 'http://www.w3.org/2000/09/xmldsig#Object', intact: true },
      { uri: '#idOfficeObject', type: 'http://www.w3.org/2000/09/xmldsig#Object', intact: true },
    ]);
    expect(sig!.parts.map((p) => p.part)).toEqual([
      '/_rels/.rels', '/word/_rels/document.xml.rels', '/word/document.xml', '/word/fontTable.xml', '/word/settings.xml', '/word/styles.xml', '/word/theme/theme1.xml', '/word/webSettings.xml',
    ]);
    expect(sig!.parts.every((p) => p.intact && p.error === null)).toBe(true);
    expect(partOf(report, '/_rels/.rels')).toMatchObject({ transforms: ['RelationshipTransform', 'C14N 1.0'], relationships: ['rId1'], digestAlgorithm: 'SHA-1' });
    expect(partOf(report, '/word/_rels/document.xml.rels')!.relationships).toEqual(['rId1', 'rId2', 'rId3', 'rId4', 'rId5']);
    expect(partOf(report, '/word/document.xml')).toMatchObject({ transforms: [], relationships: null, contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml' });
    expect(report.reason).toMatch(/trusted root/);
  });

  it('trusting the signer itself, the next rules show: SHA-1 at a time the certificate was valid, expiry without a time-stamp today', () => {
    const docx = corpus('eid-hello-world-signed');
    const trustRoots = [embeddedLeafPem(docx)];
    const then = verifyDocx(docx, { trustRoots, now: EID_TIME });
    expect(then.signatures[0]).toMatchObject({ trusted: true, indication: 'INDETERMINATE', subIndication: 'CRYPTO_CONSTRAINTS_FAILURE_NO_POE' });
    expect(then.signatures[0]!.errors.join()).toMatch(/SHA-1/);
    const today = verifyDocx(docx, { trustRoots });
    expect(today.signatures[0]).toMatchObject({ trusted: true, indication: 'INDETERMINATE', subIndication: 'OUT_OF_BOUNDS_NO_POE' });
  });

  it('two signatures by two signers, in signing order, both intact', () => {
    const report = verifyDocx(corpus('eid-hello-world-signed-twice'), { trustRoots: [] });
    expect(schemaErrors(report)).toEqual([]);
    expect(report.document.signatureCount).toBe(2);
    expect(report.signers.map((s) => s.name)).toEqual(['Bart Hanssens (Signature)', 'Bryan Brouckaert (Signature)']);
    expect(report.signer?.name).toBe('Bryan Brouckaert (Signature)');
    expect(report.signatures.map((s) => [s.part, s.intact, s.cryptoValid, s.reason])).toEqual([
      ['/_xmlsignatures/sig1.xml', true, true, 'The purpose of signing the document is sqadaboof'],
      ['/_xmlsignatures/sig2.xml', true, true, 'cosign'],
    ]);
  });

  it('MS Office 2010 XAdES signature: signed properties recognised, SigningCertificate matches, every part intact', () => {
    const docx = corpus('eid-ms-office-2010-signed');
    const report = verifyDocx(docx, { trustRoots: [embeddedLeafPem(docx)], now: EID_TIME });
    expect(schemaErrors(report)).toEqual([]);
    const [sig] = report.signatures;
    expect(sig).toMatchObject({ xades: true, signingTime: '2010-09-27T14:52:14.000Z', reason: 'Test', intact: true, cryptoValid: true, trusted: true });
    expect(sig!.signedObjects.map((o) => [o.uri, o.intact])).toEqual([['#idPackageObject', true], ['#idOfficeObject', true], ['#idSignedProperties', true]]);
    expect(sig!.parts).toHaveLength(9);
    expect(sig!.parts.every((p) => p.intact)).toBe(true);
    // Intact, trusted and in validity: only SHA-1 keeps it from passing.
    expect(sig!.subIndication).toBe('CRYPTO_CONSTRAINTS_FAILURE_NO_POE');
  });

  it('an unsigned DOCX has no signatures and every part is uncovered', () => {
    const report = verifyDocx(corpus('eid-hello-world-unsigned'), { trustRoots: [] });
    expect(schemaErrors(report)).toEqual([]);
    expect(report).toMatchObject({ valid: false, reason: 'The document has no signatures.', signer: null, signers: [], signatures: [] });
    expect(report.document.uncoveredParts).toContain('/word/document.xml');
  });
});

describe('verifyDocx: tampering', () => {
  it('one byte changed in word/document.xml: that part is not intact, the others are, HASH_FAILURE', () => {
    const tampered = replacePart(corpus('eid-hello-world-signed'), 'word/document.xml', (t) => t.replace('Hello', 'Jello'));
    const report = verifyDocx(tampered, { trustRoots: [] });
    expect(report.valid).toBe(false);
    const [sig] = report.signatures;
    expect(sig).toMatchObject({ intact: false, cryptoValid: true, indication: 'TOTAL_FAILED', subIndication: 'HASH_FAILURE' });
    expect(partOf(report, '/word/document.xml')).toMatchObject({ intact: false });
    expect(sig!.parts.filter((p) => !p.intact).map((p) => p.part)).toEqual(['/word/document.xml']);
    expect(report.reason).toMatch(/word\/document\.xml.*altered/);
  });

  it('a signed relationship retargeted in _rels/.rels fails; a new relationship next to it fails too, unless it is document metadata', () => {
    const docx = corpus('eid-hello-world-signed');
    const retargeted = verifyDocx(replacePart(docx, '_rels/.rels', (t) => t.replace('Target="word/document.xml"', 'Target="word/evil.xml"')), { trustRoots: [] });
    expect(partOf(retargeted, '/_rels/.rels')).toMatchObject({ intact: false });
    expect(retargeted.signatures[0]!.subIndication).toBe('HASH_FAILURE');
    const added = verifyDocx(
      replacePart(docx, '_rels/.rels', (t) => t.replace('</Relationships>', '<Relationship Id="rId9" Type="urn:x" Target="extra.xml"/></Relationships>')),
      { trustRoots: [] },
    );
    // Intact, but the signed relationships part now holds a relationship the signature does not cover.
    expect(partOf(added, '/_rels/.rels')).toMatchObject({ intact: true, relationships: ['rId1'] });
    expect(added.signatures[0]).toMatchObject({ indication: 'TOTAL_FAILED', subIndication: 'FORMAT_FAILURE' });
    expect(added.signatures[0]!.errors.join()).toMatch(/relationship rId9 \(urn:x\) in \/_rels\/\.rels is not signed/);
    const metadata = verifyDocx(
      replacePart(docx, '_rels/.rels', (t) => t.replace('</Relationships>', '<Relationship Id="rId9" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/thumbnail" Target="docProps/thumbnail.jpeg"/></Relationships>')),
      { trustRoots: [] },
    );
    expect(metadata.signatures[0]!.subIndication).toBe('NO_CERTIFICATE_CHAIN_FOUND');
  });

  it('a signed part removed, or its content type changed, is reported on that part', () => {
    const docx = corpus('eid-hello-world-signed');
    const missing = verifyDocx(removePart(docx, 'word/fontTable.xml'), { trustRoots: [] });
    expect(partOf(missing, '/word/fontTable.xml')).toMatchObject({ intact: false, error: expect.stringMatching(/missing/) });
    expect(missing.signatures[0]!.subIndication).toBe('HASH_FAILURE');
    const retyped = verifyDocx(
      replacePart(docx, '[Content_Types].xml', (t) => t.replace('PartName="/word/settings.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.settings+xml"', 'PartName="/word/settings.xml" ContentType="application/xml"')),
      { trustRoots: [] },
    );
    expect(partOf(retyped, '/word/settings.xml')).toMatchObject({ intact: false, error: expect.stringMatching(/content type/) });
  });

  it('a changed signed object (the signer comment) breaks SignedInfo reference; a changed SignatureValue breaks the signature', () => {
    const docx = corpus('eid-hello-world-signed');
    const comment = verifyDocx(replacePart(docx, '_xmlsignatures/sig1.xml', (t) => t.replace('sqadaboof', 'sqadaboog')), { trustRoots: [] });
    expect(comment.signatures[0]!.signedObjects).toContainEqual({ uri: '#idOfficeObject', type: 'http://www.w3.org/2000/09/xmldsig#Object', intact: false });
    expect(comment.signatures[0]).toMatchObject({ intact: false, subIndication: 'HASH_FAILURE' });
    const value = verifyDocx(replacePart(docx, '_xmlsignatures/sig1.xml', (t) => t.replace('GJFLQd7I3ljFCQ', 'GJFLQd7I3ljFCR')), { trustRoots: [] });
    expect(value.signatures[0]).toMatchObject({ intact: true, cryptoValid: false, indication: 'TOTAL_FAILED', subIndication: 'SIG_CRYPTO_FAILURE' });
  });

  it('the signature part removed: no signatures (and a note that the origin points to nothing)', () => {
    const report = verifyDocx(removePart(corpus('eid-hello-world-signed'), '_xmlsignatures/sig1.xml'), { trustRoots: [] });
    expect(report).toMatchObject({ valid: false, reason: 'The document has no signatures.', signatures: [] });
    expect(report.document.warnings.join()).toMatch(/sig1\.xml.*missing/);
  });

  it('a malformed signature part is a FORMAT_FAILURE, not a crash', () => {
    const report = verifyDocx(replacePart(corpus('eid-hello-world-signed'), '_xmlsignatures/sig1.xml', (t) => t.slice(0, 500)), { trustRoots: [] });
    expect(report.signatures[0]).toMatchObject({ indication: 'TOTAL_FAILED', subIndication: 'FORMAT_FAILURE' });
    expect(schemaErrors(report)).toEqual([]);
  });

  it('refuses what is not a DOCX with an DomainError', () => {
    for (const bad of [Buffer.from('%PDF-1.7 not a docx'), Buffer.from('PK\x03\x04 truncated')]) {
      let error: unknown;
      try {
        verifyDocx(bad, { trustRoots: [] });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('INVALID_FILE_FORMAT');
    }
    expect(() => verifyDocx(corpus('eid-hello-world-signed'), { trustRoots: [], maxBytes: 100 })).toThrow(expect.objectContaining({ code: 'FILE_TOO_LARGE' }));
  });
});

describe('verifyDocx: signatures built in the test (canonical forms written by hand)', () => {
  it('a trusted RSA-SHA256 signature passes; the root not trusted makes it INDETERMINATE', () => {
    const signed = signDocxForTest(corpus('eid-hello-world-unsigned'), { signer, comments: 'Looks good' });
    const report = verifyDocx(signed, { trustRoots: [root.pem] });
    expect(schemaErrors(report)).toEqual([]);
    expect(report.valid).toBe(true);
    expect(report.reason).toMatch(/valid and trusted/);
    expect(report.signer).toEqual({ name: 'Test Signer', email: 'signer@example.com', organization: 'Docproc Tests' });
    const [sig] = report.signatures;
    expect(sig).toMatchObject({ signatureAlgorithm: 'RSA PKCS#1 v1.5 with SHA-256', reason: 'Looks good', intact: true, cryptoValid: true, trusted: true, indication: 'TOTAL_PASSED', subIndication: null });
    expect(sig!.signer!.chain).toEqual(['CN=Test Signer, O=Docproc Tests, emailAddress=signer@example.com', 'CN=Docproc Test Root, O=Docproc Tests']);
    // The origin relationship was added to _rels/.rels after signing: outside the transform.
    expect(partOf(report, '/_rels/.rels')).toMatchObject({ intact: true, relationships: ['rId1', 'rId2', 'rId3'] });
    expect(report.document.uncoveredParts).toEqual(['/docProps/app.xml', '/docProps/core.xml']);
    expect(verifyDocx(signed, { trustRoots: [] }).signatures[0]!.subIndication).toBe('NO_CERTIFICATE_CHAIN_FOUND');
  });

  it('ECDSA P-256 (r||s signature value) passes', () => {
    const report = verifyDocx(signDocxForTest(corpus('eid-hello-world-unsigned'), { signer: ecSigner }), { trustRoots: [root.pem] });
    expect(report.signatures[0]).toMatchObject({ signatureAlgorithm: 'ECDSA with SHA-256', cryptoValid: true, indication: 'TOTAL_PASSED' });
  });

  it('a second signature over a signed package: both pass, and signature parts never count as uncovered', () => {
    const once = signDocxForTest(corpus('eid-hello-world-unsigned'), { signer });
    const twice = signDocxForTest(once, { signer: ecSigner });
    const report = verifyDocx(twice, { trustRoots: [root.pem] });
    expect(report.valid).toBe(true);
    expect(report.signers.map((s) => s.name)).toEqual(['Test Signer', 'EC Signer']);
    expect(report.signatures[1]!.parts.map((p) => p.part)).not.toContain('/_xmlsignatures/sig1.xml');
    expect(report.document.uncoveredParts).toEqual(['/docProps/app.xml', '/docProps/core.xml']);
  });

  it('a claimed signing time before the certificate existed is TOTAL_FAILED/NOT_YET_VALID', () => {
    const report = verifyDocx(signDocxForTest(corpus('eid-hello-world-unsigned'), { signer, signingTime: '2001-01-02T10:00:00Z' }), { trustRoots: [root.pem] });
    expect(report.signatures[0]).toMatchObject({ certificateValidAtSigningTime: false, indication: 'TOTAL_FAILED', subIndication: 'NOT_YET_VALID' });
  });

  it('a signature that signs only some parts is not valid: what the document shows is reached through unsigned relationships', () => {
    const signed = signDocxForTest(corpus('eid-hello-world-unsigned'), { signer, parts: ['word/document.xml'] });
    const report = verifyDocx(signed, { trustRoots: [root.pem] });
    expect(report.valid).toBe(false);
    expect(report.signatures[0]).toMatchObject({ intact: true, cryptoValid: true, indication: 'TOTAL_FAILED', subIndication: 'FORMAT_FAILURE' });
    expect(report.signatures[0]!.errors.join()).toMatch(/relationships part \/_rels\/\.rels is not signed/);
    expect(report.document.uncoveredParts).toContain('/word/styles.xml');
    const withoutTheme = signDocxForTest(corpus('eid-hello-world-unsigned'), { signer, parts: ['_rels/.rels', 'word/_rels/document.xml.rels', 'word/document.xml', 'word/styles.xml', 'word/settings.xml', 'word/fontTable.xml', 'word/webSettings.xml'] });
    const theme = verifyDocx(withoutTheme, { trustRoots: [root.pem] });
    expect(theme.signatures[0]!.errors.join()).toMatch(/\/word\/theme\/theme1\.xml, which the signed relationship rId\d+ in \/word\/_rels\/document\.xml\.rels points to, is not signed/);
  });

  it('an expired signer certificate is INDETERMINATE/OUT_OF_BOUNDS_NO_POE', () => {
    const expired = makeLeaf(root, { expired: true, subject: '/CN=Old Signer' });
    const report = verifyDocx(signDocxForTest(corpus('eid-hello-world-unsigned'), { signer: expired, signingTime: '2001-06-01T00:00:00Z' }), { trustRoots: [root.pem] });
    expect(report.signatures[0]).toMatchObject({ certificateValidAtSigningTime: true, indication: 'INDETERMINATE', subIndication: 'OUT_OF_BOUNDS_NO_POE' });
  });
});

describe('verifyDocx: forgeries LibreOffice shows (issue 22 item 7; test/integration/verify/docx-attacks.test.ts renders them)', () => {
  const notes = () => readFileSync(`${CORPUS_DIR}/docx/pandoc-notes.docx`);
  const honest = () => signDocxForTest(notes(), { signer });
  const refusal = (docx: Buffer) => {
    try {
      verifyDocx(docx, { trustRoots: [root.pem] });
    } catch (err) {
      return err instanceof DomainError ? { status: toHttpFailure(err).status, code: toHttpFailure(err).code, message: err.message } : err;
    }
    return 'verified';
  };

  it('the honest signature over the footnoted document passes', () => {
    expect(verifyDocx(honest(), { trustRoots: [root.pem] }).valid).toBe(true);
  });

  it.each([
    ['word/Document.xml', (d: Buffer) => shadowedMainPart(d, 'word/Document.xml', 'FORGED')],
    ['word/document%2Exml', (d: Buffer) => shadowedMainPart(d, 'word/document%2Exml', 'FORGED')],
    ['a second word/document.xml', (d: Buffer) => duplicatedMainPart(d, 'FORGED')],
  ])('signed bytes at %s beside a forgery at word/document.xml: the package is refused (400)', (_, attack) => {
    expect(refusal(attack(honest()))).toMatchObject({ status: 400, code: 'INVALID_FILE_FORMAT', message: expect.stringMatching(/^The package is invalid/) });
  });

  it('an officeDocument relationship with an unsigned Id in the signed _rels/.rels: not valid', () => {
    const report = verifyDocx(extraOfficeDocument(honest(), 'FORGED'), { trustRoots: [root.pem] });
    expect(report.valid).toBe(false);
    expect(report.signatures[0]).toMatchObject({ intact: true, cryptoValid: true, indication: 'TOTAL_FAILED', subIndication: 'FORMAT_FAILURE' });
    expect(report.signatures[0]!.errors.join()).toMatch(/relationship rIdForged \(officeDocument\) in \/_rels\/\.rels is not signed/);
  });

  it('a footnotes relationship with an unsigned Id in the signed word/_rels/document.xml.rels: not valid', () => {
    const report = verifyDocx(extraFootnotes(honest(), 'FORGED'), { trustRoots: [root.pem] });
    expect(report.valid).toBe(false);
    expect(report.signatures[0]!.errors.join()).toMatch(/relationship rIdForged \(footnotes\) in \/word\/_rels\/document\.xml\.rels is not signed/);
  });

  it('a relationships part signed by type (RelationshipsGroupReference): a new relationship of a signed type breaks the digest, one of another type the scope', () => {
    const signed = signDocxForTest(notes(), { signer, relationshipTypes: true });
    expect(verifyDocx(signed, { trustRoots: [root.pem] }).valid).toBe(true);
    const add = (relationship: string) => replacePart(signed, 'word/_rels/document.xml.rels', (t) => t.replace('</Relationships>', `${relationship}</Relationships>`));
    const sameType = verifyDocx(add('<Relationship Id="rIdMore" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/>'), { trustRoots: [root.pem] });
    expect(sameType.signatures[0]).toMatchObject({ intact: false, subIndication: 'HASH_FAILURE' });
    const otherType = verifyDocx(add('<Relationship Id="rIdOther" Type="urn:other" Target="x.xml"/>'), { trustRoots: [root.pem] });
    expect(otherType.signatures[0]).toMatchObject({ intact: true, subIndication: 'FORMAT_FAILURE' });
    expect(otherType.signatures[0]!.errors.join()).toMatch(/relationship rIdOther \(urn:other\) in \/word\/_rels\/document\.xml\.rels is not signed/);
  });

  it('two signature origins are a format failure for every signature', () => {
    const twoOrigins = replacePart(honest(), '_rels/.rels', (t) =>
      t.replace('</Relationships>', '<Relationship Id="rIdOrigin2" Type="http://schemas.openxmlformats.org/package/2006/relationships/digital-signature/origin" Target="other/origin.sigs"/></Relationships>'));
    const report = verifyDocx(twoOrigins, { trustRoots: [root.pem] });
    expect(report.signatures[0]).toMatchObject({ indication: 'TOTAL_FAILED', subIndication: 'FORMAT_FAILURE' });
    expect(report.signatures[0]!.errors.join()).toMatch(/2 signature origins/);
  });
});
