import * as asn1js from 'asn1js';

/**
 * The one way PKI structures (CMS, certificates, CRLs, OCSP responses, time-stamp tokens, PKCS#12)
 * are decoded. asn1js stops at 10 000 elements by default, which a 148 KB CMS carrying a CRL or an
 * 84 KB CRL already exceed; the limit here grows with the input instead: every element takes at
 * least two bytes, so `bytes / 2` elements never refuse a well-formed input, up to a bound that
 * keeps one decoded tree within a worker's memory: asn1js and pkijs keep about 0.9 KB per element,
 * so the bound is ≈180 MB, reached by a CRL of about 1 MB (35 000 entries); any input up to 400 KB
 * decodes whatever its shape.
 */
export const MAX_ASN1_ELEMENTS = 200_000;

/** Elements a decoding of `byteLength` bytes may produce: proportional to the size, bounded. */
export const elementLimit = (byteLength: number): number =>
  Math.min(MAX_ASN1_ELEMENTS, Math.max(asn1js.DEFAULT_MAX_NODES, Math.ceil(byteLength / 2)));

/** asn1js.fromBER with the element limit for this input's size (offset -1 when it does not decode). */
export function decodeBer(bytes: Uint8Array | ArrayBuffer): ReturnType<typeof asn1js.fromBER> {
  return asn1js.fromBER(bytes, { maxNodes: elementLimit(bytes.byteLength) });
}

/** X.690 §11.6: SET OF elements compared as octet strings, the shorter padded with zero octets. */
function derOrder(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Universal types DER encodes primitive only (X.690 §10.2): BIT STRING, OCTET STRING and the string types. */
const PRIMITIVE_ONLY = new Set([3, 4, 12, 18, 19, 20, 21, 22, 25, 26, 27, 28, 30]);

function lengthOctets(length: number): number[] {
  if (length < 0x80) return [length];
  const octets: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) octets.unshift(rest % 256);
  return [0x80 | octets.length, ...octets];
}

/**
 * The DER encoding of a decoded value (X.690 §10–11): definite lengths in their shortest form and
 * SET elements in DER order, from the identifier and content octets as decoded; undefined when the
 * value has no DER form this can give (a constructed string, a BOOLEAN other than 00/FF, an INTEGER
 * with redundant leading octets). RFC 5652 §5.4: a signature covers the DER encoding of its signed
 * attributes, whatever encoding was transmitted.
 */
export function derEncoding(block: asn1js.AsnType): Uint8Array | undefined {
  const { tagClass, tagNumber, isConstructed, blockLength: idLength } = block.idBlock;
  const universal = tagClass === 1;
  const identifier = block.valueBeforeDecodeView.subarray(0, idLength);
  let content: Uint8Array;
  if (!isConstructed) {
    const start = idLength + block.lenBlock.blockLength;
    content = block.valueBeforeDecodeView.subarray(start, start + block.lenBlock.length);
    if (universal && tagNumber === 1 && (content.length !== 1 || (content[0] !== 0 && content[0] !== 0xff))) return undefined;
    if (universal && (tagNumber === 2 || tagNumber === 10) && content.length > 1 && ((content[0] === 0 && content[1]! < 0x80) || (content[0] === 0xff && content[1]! >= 0x80))) return undefined;
  } else {
    if (universal && PRIMITIVE_ONLY.has(tagNumber)) return undefined;
    const children = derContent(block, universal && tagNumber === 17);
    if (!children) return undefined;
    content = children;
  }
  return Buffer.concat([identifier, Buffer.from(lengthOctets(content.length)), content]);
}

/** The DER content octets of a constructed value: its elements' DER encodings, in DER order for a SET. */
function derContent(block: asn1js.AsnType, isSet: boolean): Uint8Array | undefined {
  const children: Uint8Array[] = [];
  for (const child of block instanceof asn1js.Constructed ? block.valueBlock.value : []) {
    if (child.idBlock.tagClass === 1 && child.idBlock.tagNumber === 0) continue; // end-of-contents of an indefinite length
    const encoded = derEncoding(child);
    if (!encoded) return undefined;
    children.push(encoded);
  }
  if (isSet) children.sort(derOrder);
  return Buffer.concat(children);
}

/**
 * The DER encoding of a decoded [n] IMPLICIT SET OF as the universal SET OF it stands for (what
 * RFC 5652 §5.4 signs for signed attributes): the same as derEncoding of the value re-tagged 0x31
 * and decoded again, without decoding it again. Undefined when it is not a constructed value with a
 * one-octet identifier, or has no DER form.
 */
export function derEncodingAsSet(block: asn1js.AsnType): Uint8Array | undefined {
  if (!(block instanceof asn1js.Constructed) || !block.idBlock.isConstructed || block.idBlock.blockLength !== 1) return undefined;
  const content = derContent(block, true);
  return content && Buffer.concat([Uint8Array.of(0x31), Buffer.from(lengthOctets(content.length)), content]);
}
