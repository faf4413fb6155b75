import { safeFetch } from '../../../inputs/safe-fetch.js';

/** Fetches a URL through the outbound guard: GET, or POST of an OCSP request. */
export type RevocationFetcher = (url: string, post?: { contentType: string; body: Uint8Array }) => Promise<Uint8Array>;

export interface RevocationFetchPolicy {
  /** REVOCATION_TIMEOUT_MS: one deadline for every OCSP and CRL request of one operation. */
  timeoutMs: number;
  maxBytes: number;
  allowPrivateAddresses: boolean;
}

/**
 * The outbound budget of one operation (a verify, a sign at B-LT/B-LTA, an extend): certificates
 * come from the caller's document, so each asks at most `perCertificate` of the URLs it names
 * (OCSP first, then CRLs) and the whole operation at most `perRequest`, all within the policy's one
 * deadline. Revocation data is fetched only for chains that end at a trusted root.
 */
export const REVOCATION_BUDGET = { perCertificate: 2, perRequest: 10 } as const;

/** The one message for every request that did not bring an answer: no oracle on the network. */
export const NOT_FETCHED = 'could not be fetched';

/**
 * OCSP and CRL requests through the outbound guard, within the budget of one operation (make one
 * fetcher per operation). Plain http is allowed: OCSP responses and CRLs are signed, and their URLs
 * are http by convention (RFC 5280 §4.2.1.13); private addresses only with
 * OUTBOUND_ALLOW_PRIVATE_ADDRESSES. Whatever went wrong on the way — refused address, DNS, refused
 * connection, timeout, an HTTP status, a redirect, a body too large — the error says only
 * NOT_FETCHED, so what the warnings show tells nothing about hosts a caller names.
 */
export interface BudgetedFetcher extends RevocationFetcher {
  /** Says how the budget stopped requests, once it did. */
  budgetNote(): string | undefined;
}

export function revocationFetcher(policy: RevocationFetchPolicy, budget: { perRequest: number } = REVOCATION_BUDGET, clock: () => number = Date.now): BudgetedFetcher {
  const deadline = clock() + policy.timeoutMs;
  let requests = 0;
  let stopped: 'count' | 'deadline' | undefined;
  const fetcher = async (url: string, post?: { contentType: string; body: Uint8Array }) => {
    if (requests >= budget.perRequest) {
      stopped ??= 'count';
      throw new Error(`not asked: the ${budget.perRequest} revocation requests are spent`);
    }
    const remaining = deadline - clock();
    if (remaining <= 0) {
      stopped ??= 'deadline';
      throw new Error(`not asked: the ${policy.timeoutMs} ms for revocation requests are spent`);
    }
    requests++;
    try {
      return await safeFetch(url, {
        allowHttp: true,
        maxBytes: policy.maxBytes,
        timeoutMs: remaining,
        allowPrivateAddresses: policy.allowPrivateAddresses,
        ...(post ? { method: 'POST' as const, body: Buffer.from(post.body), headers: { 'content-type': post.contentType } } : {}),
      });
    } catch {
      throw new Error(NOT_FETCHED);
    }
  };
  return Object.assign(fetcher, {
    budgetNote: () =>
      stopped === undefined
        ? undefined
        : `Revocation requests stopped at this operation's budget (${stopped === 'count' ? `${budget.perRequest} requests` : `${policy.timeoutMs} ms`}): some certificates have no revocation data stored.`,
  });
}
