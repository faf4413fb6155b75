import { safeFetch } from '../../../inputs/safe-fetch.js';
import type { RevocationFetcher } from './check.js';

export interface RevocationFetchPolicy {
  timeoutMs: number;
  maxBytes: number;
  allowPrivateAddresses: boolean;
}

/**
 * OCSP and CRL requests through the outbound guard. Plain http is allowed: OCSP responses and CRLs
 * are signed, and their URLs are http by convention (RFC 5280 §4.2.1.13); private addresses only
 * with OUTBOUND_ALLOW_PRIVATE_ADDRESSES.
 */
export function revocationFetcher(policy: RevocationFetchPolicy): RevocationFetcher {
  return (url, post) =>
    safeFetch(url, {
      allowHttp: true,
      maxBytes: policy.maxBytes,
      timeoutMs: policy.timeoutMs,
      allowPrivateAddresses: policy.allowPrivateAddresses,
      ...(post ? { method: 'POST' as const, body: Buffer.from(post.body), headers: { 'content-type': post.contentType } } : {}),
    });
}
