import { createPublicKey, generateKeyPairSync, verify as cryptoVerify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { describe, expect, it } from 'vitest';
import {
  OID, assembleSignedData, buildSignedAttributes, issuerAndSerial, signAttributes, signatureAlgorithmOf, signedAttributesDer, signedAttributesDerByPkijs, type CmsSigner,
} from '../../../src/documents/pki/cms/build.js';
import { parsePkcs12 } from '../../../src/documents/sign/identity.js';
import { CORPUS_DIR } from '../../support/corpus.js';

/**
 * The signed attributes and the SignedData written as DER by buildSignedAttributes and assembleSignedData against the same structure built with
 * pkijs object by object (the library verify reads CMS with): byte for byte equal, for an RSA
 * signer with a 5-certificate chain, an EC key, with and without a signature time-stamp token;
 * and pkijs reads back the signer and a signature that verifies over the signed attributes.
 */
const bundle = parsePkcs12(readFileSync(path.join(CORPUS_DIR, 'certs/signpdf-bundle.p12')), '');
const single = parsePkcs12(readFileSync(path.join(CORPUS_DIR, 'certs/signpdf-certificate.p12')), '');

function withPkijs(signer: CmsSigner, attributes: ReturnType<typeof buildSignedAttributes>, signatureValue: Buffer, token?: Buffer): Buffer {
  const unsignedAttrs = token
    ? new pkijs.SignedAndUnsignedAttributes({ type: 1, attributes: [new pkijs.Attribute({ type: OID.signatureTimeStampToken, values: [asn1js.fromBER(token).result] })] })
    : undefined;
  const signerInfo = new pkijs.SignerInfo({
    version: 1,
    sid: issuerAndSerial(signer.certificate),
    digestAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }),
    signedAttrs: new pkijs.SignedAndUnsignedAttributes({ type: 0, attributes: attributes.attributes }),
    signatureAlgorithm: signatureAlgorithmOf(signer.privateKey),
    signature: new asn1js.OctetString({ valueHex: signatureValue }),
    ...(unsignedAttrs ? { unsignedAttrs } : {}),
  });
  const seen = new Set<string>();
  const certificates = [signer.certificate, ...signer.chain].filter((c) => !seen.has(c.fingerprint256) && seen.add(c.fingerprint256))
    .map((c) => Buffer.from(c.raw)).sort(Buffer.compare)
    .map((raw) => new pkijs.Certificate({ schema: asn1js.fromBER(raw).result }));
  const signedData = new pkijs.SignedData({
    version: 1,
    digestAlgorithms: [new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 })],
    encapContentInfo: new pkijs.EncapsulatedContentInfo({ eContentType: OID.data }),
    certificates,
    signerInfos: [signerInfo],
  });
  return Buffer.from(new pkijs.ContentInfo({ contentType: OID.signedData, content: signedData.toSchema(true) }).toSchema().toBER());
}

describe('assembleSignedData (DER written from parts) against pkijs', () => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const signers: [string, CmsSigner][] = [
    ['RSA, 5-certificate chain', { privateKey: bundle.privateKey, certificate: bundle.certificate, chain: bundle.chain }],
    ['RSA, the leaf repeated in the chain', { privateKey: single.privateKey, certificate: single.certificate, chain: [single.certificate] }],
    ['EC key', { privateKey: ec, certificate: single.certificate, chain: [] }],
  ];

  for (const [label, signer] of signers) {
    it(`${label}: byte for byte what pkijs writes, with and without a time-stamp token`, () => {
      for (let n = 0; n < 5; n++) {
        const attributes = buildSignedAttributes(Buffer.alloc(32, n * 37), signer.certificate);
        // The signed attributes written from parts are what asn1js encodes from the pkijs objects.
        expect(signedAttributesDer(attributes).equals(signedAttributesDerByPkijs(attributes))).toBe(true);
        const signatureValue = signAttributes(attributes, signer.privateKey);
        const plain = assembleSignedData({ signer, attributes, signatureValue });
        expect(plain.equals(withPkijs(signer, attributes, signatureValue))).toBe(true);
        const token = plain; // any ContentInfo will do as the token's bytes
        const stamped = assembleSignedData({ signer, attributes, signatureValue, timeStampToken: token });
        expect(stamped.equals(withPkijs(signer, attributes, signatureValue, token))).toBe(true);
      }
    });
  }

  it('pkijs reads it back: the signer, its signed attributes and a signature that verifies over them', () => {
    const signer = signers[0]![1];
    const attributes = buildSignedAttributes(Buffer.alloc(32, 9), signer.certificate);
    const signatureValue = signAttributes(attributes, signer.privateKey);
    const cms = assembleSignedData({ signer, attributes, signatureValue });
    const info = new pkijs.ContentInfo({ schema: asn1js.fromBER(cms).result });
    const signedData = new pkijs.SignedData({ schema: info.content });
    expect(signedData.certificates).toHaveLength(5);
    const signerInfo = signedData.signerInfos[0]!;
    const signedAttrs = Buffer.from(signerInfo.signedAttrs!.encodedValue);
    expect(Buffer.concat([Buffer.from([0x31]), signedAttrs.subarray(1)]).equals(signedAttributesDer(attributes))).toBe(true);
    const der = Buffer.concat([Buffer.from([0x31]), signedAttrs.subarray(1)]);
    expect(cryptoVerify('sha256', der, createPublicKey(signer.certificate.publicKey.export({ type: 'spki', format: 'pem' })), Buffer.from(signerInfo.signature.valueBlock.valueHexView))).toBe(true);
  });
});
