import { createHash, randomBytes } from 'node:crypto';
import { safeFetch } from '../../inputs/safe-fetch.js';
import { DomainError, ErrorCode } from '../../errors/domain-error.js';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { OID } from './cms/build.js';
import { unfitFor } from './chain.js';
import { readTimestampToken } from './timestamp.js';
import { TrustStore } from './trust.js';
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
  new DomainError(ErrorCode.TIMESTAMP_AUTHORITY_FAILED, `The timestamp authority could not timestamp the signature (${why}); retry later.`);

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
    throw tsaFailed(err instanceof DomainError ? err.message.replace(/\.$/, '') : 'network error');
  }
}

const NO_ANCHORS = new TrustStore([]);

/**
 * Returns the DER TimeStampToken over `signatureValue`, read by the same reader verification uses
 * and refused unless it is the answer to this request: granted, our imprint, our nonce echoed
 * (RFC 3161 §2.4.2: a reply without it may be a replay), a valid token signature by a certificate
 * fit for time-stamping and valid at the token's time. Whether the TSA chains to a trusted root is
 * for verifiers to judge (the operator chose the TSA).
 */
export async function requestTimestamp(signatureValue: Buffer, options: TsaOptions): Promise<Buffer> {
  const hash = createHash('sha256').update(signatureValue).digest();
  const nonce = randomBytes(8);
  nonce[0] &= 0x7f;
  const reply = await post(options.url, buildTimeStampRequest(hash, nonce), options);
  let token: Buffer;
  try {
    const parsed = decodeBer(reply);
    if (parsed.offset === -1) throw new Error('not BER');
    const response = new pkijs.TimeStampResp({ schema: parsed.result });
    const status = response.status.status;
    if (status !== pkijs.PKIStatus.granted && status !== pkijs.PKIStatus.grantedWithMods) throw tsaFailed(`status ${status}`);
    if (!response.timeStampToken) throw tsaFailed('no token in the reply');
    // The token goes into the signature exactly as the TSA encoded it (its second element).
    token = Buffer.from((parsed.result as asn1js.Sequence).valueBlock.value[1]!.valueBeforeDecodeView);
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw tsaFailed('unreadable reply');
  }
  const read = readTimestampToken(token, signatureValue, NO_ANCHORS);
  const tsaCertificate = read.cms.signerCert;
  if (!read.report.intact) throw tsaFailed('the token does not cover the signature sent');
  if (read.nonce !== BigInt('0x' + nonce.toString('hex'))) throw tsaFailed('the reply does not echo the nonce sent');
  if (!tsaCertificate) throw tsaFailed('the token carries no TSA certificate');
  if (!read.report.valid) throw tsaFailed(read.report.errors.find((e) => /signature|not valid/.test(e)) ?? 'the token signature does not verify');
  const unfit = unfitFor(tsaCertificate, 'timeStamping');
  if (unfit) throw tsaFailed(unfit);
  return token;
}
