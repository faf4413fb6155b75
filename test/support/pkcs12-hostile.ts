import { randomBytes } from 'node:crypto';
import * as asn1js from 'asn1js';

/**
 * A PKCS#12 archive that asks for a lot of key-derivation work in few bytes: `bags` shrouded keys
 * (pbeWithSHAAnd3-KeyTripleDES-CBC) at `iterations` each, and a SHA-1 MAC at `iterations`. The
 * encrypted keys are random bytes: a reader that counts before it derives never gets that far.
 */
export function hostilePkcs12(bags: number, iterations: number, keyBytes = 128): Buffer {
  const oid = (value: string) => new asn1js.ObjectIdentifier({ value });
  const octets = (bytes: Uint8Array) => new asn1js.OctetString({ valueHex: bytes });
  const explicit0 = (inner: asn1js.AsnType) => new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 0 }, value: [inner] });
  const shrouded = () =>
    new asn1js.Sequence({
      value: [
        oid('1.2.840.113549.1.12.10.1.2'),
        explicit0(new asn1js.Sequence({
          value: [
            new asn1js.Sequence({ value: [oid('1.2.840.113549.1.12.1.3'), new asn1js.Sequence({ value: [octets(randomBytes(8)), new asn1js.Integer({ value: iterations })] })] }),
            octets(randomBytes(keyBytes)),
          ],
        })),
      ],
    });
  const safeContents = new asn1js.Sequence({ value: Array.from({ length: bags }, shrouded) });
  const dataInfo = (der: ArrayBuffer) => new asn1js.Sequence({ value: [oid('1.2.840.113549.1.7.1'), explicit0(octets(new Uint8Array(der)))] });
  const authenticatedSafe = new asn1js.Sequence({ value: [dataInfo(safeContents.toBER())] });
  const macData = new asn1js.Sequence({
    value: [
      new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [oid('1.3.14.3.2.26'), new asn1js.Null()] }), octets(randomBytes(20))] }),
      octets(randomBytes(8)),
      new asn1js.Integer({ value: iterations }),
    ],
  });
  const pfx = new asn1js.Sequence({ value: [new asn1js.Integer({ value: 3 }), dataInfo(authenticatedSafe.toBER()), macData] });
  return Buffer.from(pfx.toBER());
}
