import { createHash, randomBytes } from 'node:crypto';
import { safeFetch } from '../../inputs/safe-fetch.js';
import { AppError, ErrorCode } from '../../errors/app-error.js';
import { OID } from './cms.js';
import {
  booleanValue, children, decodeInteger, decodeObjectIdentifier, integer, objectIdentifier, octetString, readNode, sequence,
  type DerNode,
} from './der.js';

/**
 * RFC 3161 client for the PAdES B-T signature timestamp. The TSA URL is set by the
 * operator (not the caller), so loopback/private addresses are allowed, but size and time
 * limits still apply.
 */
export interface TsaOptions {
  url: string;
  timeoutMs?: number;
  maxBytes?: number;
  /** OUTBOUND_ALLOW_PRIVATE_ADDRESSES: an on-premise TSA on a private or loopback address. */
  allowPrivateAddresses?: boolean;
}

const tsaFailed = (why: string) =>
  new AppError(502, ErrorCode.SIGNING_ERROR, `The timestamp authority could not timestamp the signature (${why}); retry later.`);

export function buildTimeStampRequest(messageHash: Buffer, nonce: Buffer): Buffer {
  return sequence(
    integer(1),
    sequence(sequence(objectIdentifier(OID.sha256)), octetString(messageHash)),
    integer(nonce),
    booleanValue(true),
  );
}

/** POSTs the request through the one outbound guard (scheme, address and size rules; no redirects). */
async function post(url: string, body: Buffer, options: TsaOptions): Promise<Buffer> {
  try {
    return await safeFetch(url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/timestamp-query' },
      allowHttp: true,
      maxBytes: options.maxBytes ?? 256 * 1024,
      timeoutMs: options.timeoutMs ?? 10_000,
      allowPrivateAddresses: options.allowPrivateAddresses,
    });
  } catch (err) {
    throw tsaFailed(err instanceof AppError ? err.message.replace(/\.$/, '') : 'network error');
  }
}

interface TstInfoCheck {
  hashedMessage: Buffer;
  nonce?: bigint;
}

/** TimeStampToken (ContentInfo/SignedData) → TSTInfo fields we must check. */
function readTstInfo(token: DerNode): TstInfoCheck {
  const [contentType, wrapped] = children(token);
  if (decodeObjectIdentifier(contentType) !== OID.signedData) throw new Error('token is not SignedData');
  const signedData = children(children(wrapped)[0]);
  const encap = children(signedData[2]);
  const eContent = readNode(children(encap[1])[0].content);
  const fields = children(eContent);
  const imprint = children(fields[2]);
  const nonceField = fields.slice(5).find((f) => f.tag === 0x02);
  return { hashedMessage: imprint[1].content, nonce: nonceField ? decodeInteger(nonceField) : undefined };
}

/** Returns the DER TimeStampToken over `signatureValue`, checked against our request. */
export async function requestTimestamp(signatureValue: Buffer, options: TsaOptions): Promise<Buffer> {
  const hash = createHash('sha256').update(signatureValue).digest();
  const nonce = randomBytes(8);
  nonce[0] &= 0x7f;
  const reply = await post(options.url, buildTimeStampRequest(hash, nonce), options);
  try {
    const [statusInfo, token] = children(readNode(reply));
    const status = decodeInteger(children(statusInfo)[0]);
    if (status !== 0n && status !== 1n) throw tsaFailed(`status ${status}`);
    if (!token) throw tsaFailed('no token in the reply');
    const info = readTstInfo(token);
    if (!info.hashedMessage.equals(hash)) throw tsaFailed('the token covers a different hash');
    if (info.nonce !== undefined && info.nonce !== BigInt('0x' + nonce.toString('hex'))) throw tsaFailed('nonce mismatch');
    return Buffer.from(token.raw);
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw tsaFailed('unreadable reply');
  }
}
