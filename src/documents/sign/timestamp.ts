import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
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

function post(url: string, body: Buffer, timeoutMs: number, maxBytes: number): Promise<Buffer> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : null;
  if (!client) return Promise.reject(tsaFailed('the TSA URL must be http or https'));
  return new Promise((resolve, reject) => {
    const req = client.request(target, {
      method: 'POST',
      timeout: timeoutMs,
      headers: { 'content-type': 'application/timestamp-query', 'content-length': body.length, 'user-agent': 'docproc' },
    }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(tsaFailed(`HTTP ${res.statusCode}`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          req.destroy();
          return reject(tsaFailed('reply too large'));
        }
        chunks.push(chunk);
      });
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', () => reject(tsaFailed('connection broke')));
    });
    const timer = setTimeout(() => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => reject(tsaFailed(err.code === 'ETIMEDOUT' ? 'timed out' : err.code ?? 'network error')));
    req.end(body);
  });
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
  const reply = await post(options.url, buildTimeStampRequest(hash, nonce), options.timeoutMs ?? 10_000, options.maxBytes ?? 256 * 1024);
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
