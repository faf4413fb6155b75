import { createHash, randomBytes } from 'node:crypto';
import { safeFetch } from '../../inputs/safe-fetch.js';
import { AppError, ErrorCode } from '../../errors/app-error.js';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { OID } from './cms/build.js';
import { decodeBer } from './asn1.js';

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

const TST_INFO = '1.2.840.113549.1.9.16.1.4';

/** An RFC 3161 TimeStampReq (version 1, SHA-256 imprint, nonce, certReq true) in DER. */
export function buildTimeStampRequest(messageHash: Buffer, nonce: Buffer): Buffer {
  const request = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }),
      hashedMessage: new asn1js.OctetString({ valueHex: messageHash }),
    }),
    nonce: asn1js.Integer.fromBigInt(BigInt('0x' + nonce.toString('hex'))),
    certReq: true,
  });
  return Buffer.from(request.toSchema().toBER());
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

const bigintOf = (value: asn1js.Integer): bigint => BigInt(value.toBigInt());

/** TimeStampToken (ContentInfo/SignedData) → the TSTInfo fields we must check. */
function readTstInfo(token: pkijs.ContentInfo): TstInfoCheck {
  if (token.contentType !== OID.signedData) throw new Error('token is not SignedData');
  const signedData = new pkijs.SignedData({ schema: token.content });
  const encap = signedData.encapContentInfo;
  if (encap.eContentType !== TST_INFO || !encap.eContent) throw new Error('token does not hold a TSTInfo');
  const info = pkijs.TSTInfo.fromBER(encap.eContent.getValue());
  return {
    hashedMessage: Buffer.from(info.messageImprint.hashedMessage.getValue()),
    nonce: info.nonce ? bigintOf(info.nonce) : undefined,
  };
}

/** Returns the DER TimeStampToken over `signatureValue`, checked against our request. */
export async function requestTimestamp(signatureValue: Buffer, options: TsaOptions): Promise<Buffer> {
  const hash = createHash('sha256').update(signatureValue).digest();
  const nonce = randomBytes(8);
  nonce[0] &= 0x7f;
  const reply = await post(options.url, buildTimeStampRequest(hash, nonce), options);
  try {
    const parsed = decodeBer(reply);
    if (parsed.offset === -1) throw new Error('not BER');
    const response = new pkijs.TimeStampResp({ schema: parsed.result });
    const status = response.status.status;
    if (status !== pkijs.PKIStatus.granted && status !== pkijs.PKIStatus.grantedWithMods) throw tsaFailed(`status ${status}`);
    if (!response.timeStampToken) throw tsaFailed('no token in the reply');
    const info = readTstInfo(response.timeStampToken);
    if (!info.hashedMessage.equals(hash)) throw tsaFailed('the token covers a different hash');
    if (info.nonce !== undefined && info.nonce !== BigInt('0x' + nonce.toString('hex'))) throw tsaFailed('nonce mismatch');
    // The token goes into the signature exactly as the TSA encoded it (its second element).
    const tokenBlock = (parsed.result as asn1js.Sequence).valueBlock.value[1];
    return Buffer.from(tokenBlock.valueBeforeDecodeView);
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw tsaFailed('unreadable reply');
  }
}
