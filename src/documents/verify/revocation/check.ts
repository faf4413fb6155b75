import { randomBytes } from 'node:crypto';
import { oneLine, type Cert } from '../cms/certificates.js';
import { EvidenceProblem, noCheckNeeded, ocspRequest, readCrl, readOcspResponse, revocationPointers, type EvidenceVerdict } from './evidence.js';

/**
 * Revocation status of the certificates of a chain (signer and intermediates; the trust anchor is
 * trusted as configured). Policy, in order:
 *  1. revocation data carried by the PDF (DSS, or the CMS adbe-revocationInfoArchival attribute):
 *     a checked OCSP response or CRL produced at or after the time it must speak for;
 *  2. when fetching is on, the certificate's OCSP responder (AIA), then its CRLs (CDP), fetched
 *     through the outbound guard, checked, and cached for their validity;
 *  3. otherwise the status is `notChecked`: no data in the file and fetching off (the default), or
 *     a certificate that publishes no way to check it. That does not change the verdict; `unknown`
 *     (a responder that cannot be reached or does not know the certificate) makes it INDETERMINATE.
 */
export type CertStatus = 'good' | 'revoked' | 'unknown' | 'notChecked';
export type EvidenceSource = 'pdf-dss' | 'cms' | 'ocsp-fetched' | 'crl-fetched' | 'none';

export interface CertRevocation {
  subject: string;
  serialNumber: string;
  status: CertStatus;
  source: EvidenceSource;
  method: 'ocsp' | 'crl' | null;
  /** When the evidence used was produced. */
  producedAt: string | null;
  revokedAt: string | null;
  reason: string | null;
  /** Evidence found but not usable, and fetch failures. */
  problems: string[];
}

export interface EmbeddedEvidence {
  source: 'pdf-dss' | 'cms';
  ocsps: Uint8Array[];
  crls: Uint8Array[];
}

/** Fetches a URL through the outbound guard: GET, or POST of an OCSP request. */
export type RevocationFetcher = (url: string, post?: { contentType: string; body: Uint8Array }) => Promise<Uint8Array>;

function blank(cert: Cert): CertRevocation {
  return { subject: oneLine(cert.x509.subject), serialNumber: cert.x509.serialNumber.toLowerCase(), status: 'notChecked', source: 'none', method: null, producedAt: null, revokedAt: null, reason: null, problems: [] };
}

function apply(entry: CertRevocation, verdict: EvidenceVerdict, source: EvidenceSource): CertRevocation {
  return { ...entry, status: verdict.status, source, method: verdict.method, producedAt: verdict.producedAt, revokedAt: verdict.revokedAt ?? null, reason: verdict.reason ?? null };
}

/** The best embedded verdict: a revocation wins; else a 'good' produced at or after `speaksFor`. */
function fromEmbedded(entry: CertRevocation, cert: Cert, issuer: Cert, evidence: EmbeddedEvidence[], speaksFor: Date): CertRevocation | null {
  let good: CertRevocation | null = null;
  for (const set of evidence) {
    const readings: Array<() => EvidenceVerdict> = [
      ...set.ocsps.map((der) => () => readOcspResponse(der, cert, issuer, new Date(8.64e15))),
      ...set.crls.map((der) => () => readCrl(der, cert, issuer)),
    ];
    for (const read of readings) {
      let verdict: EvidenceVerdict;
      try {
        verdict = read();
      } catch (error) {
        // Evidence about other certificates is normal in a DSS; only say so when it was about this one.
        if (error instanceof EvidenceProblem && !/another (certificate|CA)/.test(error.message)) entry.problems.push(`${set.source}: ${error.message}`);
        continue;
      }
      if (verdict.status === 'revoked') return apply(entry, verdict, set.source);
      if (verdict.status === 'good' && new Date(verdict.producedAt).getTime() >= speaksFor.getTime() && !good) good = apply(entry, verdict, set.source);
    }
  }
  return good;
}

interface CachedVerdict {
  verdict: EvidenceVerdict;
  source: EvidenceSource;
  until: number;
}

/** Fetched verdicts by URL and serial, kept until their nextUpdate (at most an hour). */
const cache = new Map<string, CachedVerdict>();
const CACHE_LIMIT = 1_000;
const CACHE_MAX_MS = 60 * 60 * 1000;

function remember(key: string, verdict: EvidenceVerdict, source: EvidenceSource, now: Date): void {
  const until = Math.min(verdict.nextUpdate ? new Date(verdict.nextUpdate).getTime() : now.getTime(), now.getTime() + CACHE_MAX_MS);
  if (until <= now.getTime()) return;
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, { verdict, source, until });
}

function fresh(verdict: EvidenceVerdict, now: Date): boolean {
  return !verdict.nextUpdate || new Date(verdict.nextUpdate).getTime() >= now.getTime() - 5 * 60 * 1000;
}

async function fetched(entry: CertRevocation, cert: Cert, issuer: Cert, fetcher: RevocationFetcher, now: Date): Promise<CertRevocation> {
  const { ocsp, crl } = revocationPointers(cert);
  if (ocsp.length === 0 && crl.length === 0) {
    entry.problems.push('the certificate names no OCSP responder or CRL');
    return entry;
  }
  for (const url of ocsp) {
    const key = `ocsp ${url} ${entry.serialNumber}`;
    const hit = cache.get(key);
    if (hit && hit.until > now.getTime()) return apply(entry, hit.verdict, hit.source);
    try {
      const nonce = randomBytes(16);
      const answer = await fetcher(url, { contentType: 'application/ocsp-request', body: ocspRequest(cert, issuer, nonce) });
      const verdict = readOcspResponse(answer, cert, issuer, now, nonce);
      if (!fresh(verdict, now)) throw new EvidenceProblem('the OCSP response is out of date (nextUpdate has passed)');
      if (verdict.status === 'unknown') {
        entry.problems.push(`OCSP ${url}: the responder does not know the certificate`);
        continue;
      }
      remember(key, verdict, 'ocsp-fetched', now);
      return apply(entry, verdict, 'ocsp-fetched');
    } catch (error) {
      entry.problems.push(`OCSP ${url}: ${(error as Error).message}`);
    }
  }
  for (const url of crl) {
    const key = `crl ${url} ${entry.serialNumber}`;
    const hit = cache.get(key);
    if (hit && hit.until > now.getTime()) return apply(entry, hit.verdict, hit.source);
    try {
      const verdict = readCrl(await fetcher(url), cert, issuer);
      if (!fresh(verdict, now)) throw new EvidenceProblem('the CRL is out of date (nextUpdate has passed)');
      remember(key, verdict, 'crl-fetched', now);
      return apply(entry, verdict, 'crl-fetched');
    } catch (error) {
      entry.problems.push(`CRL ${url}: ${(error as Error).message}`);
    }
  }
  return { ...entry, status: 'unknown' };
}

export interface ChainRevocation {
  /** One entry per checked certificate, leaf first (the trust anchor is not checked). */
  entries: CertRevocation[];
  /** Entries the embedded evidence did not settle, with what fetching needs. */
  unresolved: Array<{ entry: CertRevocation; cert: Cert; issuer: Cert }>;
}

/**
 * Revocation status of each certificate of `chain` (leaf first, anchor last when trusted) from the
 * evidence the PDF carries. `speaksFor` is the time the evidence must cover: the signing time.
 */
export function revocationFromEvidence(chain: Cert[], trustedAnchorLast: boolean, evidence: EmbeddedEvidence[], speaksFor: Date): ChainRevocation {
  const result: ChainRevocation = { entries: [], unresolved: [] };
  const checked = trustedAnchorLast ? chain.slice(0, -1) : chain;
  for (let i = 0; i < checked.length; i++) {
    const cert = checked[i]!;
    const issuer = chain[i + 1];
    const entry = blank(cert);
    if (!issuer) entry.problems.push('no issuer certificate to check revocation against');
    else if (noCheckNeeded(cert)) entry.problems.push('the certificate carries id-pkix-ocsp-nocheck');
    else {
      const embedded = fromEmbedded(entry, cert, issuer, evidence, speaksFor);
      if (embedded) {
        result.entries.push(embedded);
        continue;
      }
      result.unresolved.push({ entry, cert, issuer });
    }
    result.entries.push(entry);
  }
  return result;
}

/** Settles the unresolved entries from the certificates' OCSP responders and CRLs (in place). */
export async function resolveByFetching(revocation: ChainRevocation, fetcher: RevocationFetcher, now: Date): Promise<void> {
  for (const { entry, cert, issuer } of revocation.unresolved) {
    const index = revocation.entries.indexOf(entry);
    revocation.entries[index] = await fetched(entry, cert, issuer, fetcher, now);
  }
  revocation.unresolved = [];
}

/** For tests: forget fetched verdicts. */
export function clearRevocationCache(): void {
  cache.clear();
}
