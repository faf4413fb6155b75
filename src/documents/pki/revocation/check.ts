import { randomBytes } from 'node:crypto';
import { oneLine, type Cert } from '../certificates.js';
import { REVOCATION_BUDGET, type RevocationFetcher } from './fetcher.js';
import { EvidenceProblem, noCheckNeeded, ocspRequest, readCrl, readOcspResponse, revocationPointers, type EvidenceVerdict } from './evidence.js';

/**
 * Revocation status of the certificates of a chain (signer and intermediates; the trust anchor is
 * trusted as configured). Policy, in order:
 *  1. revocation data carried by the PDF (DSS, or the CMS adbe-revocationInfoArchival attribute):
 *     a checked revocation wins whenever it was issued; a checked "good" counts only when it is
 *     fresh for the validation time (ETSI EN 319 102-1 §5.2.5, see `freshFor`). Evidence about the
 *     certificate that is not fresh is named in `problems` and leaves the status `unknown`;
 *  2. when fetching is on, the certificate's OCSP responder (AIA), then its CRLs (CDP), fetched
 *     through the outbound guard, checked, and cached for their validity — also for a certificate
 *     whose embedded evidence was discarded as stale;
 *  3. otherwise the status is `notChecked`: no data in the file and fetching off (the default), or
 *     a certificate that publishes no way to check it. That does not change the verdict; `unknown`
 *     (stale evidence only, a responder that cannot be reached or does not know the certificate)
 *     makes it INDETERMINATE.
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

export type { RevocationFetcher };

function blank(cert: Cert): CertRevocation {
  return { subject: oneLine(cert.x509.subject), serialNumber: cert.x509.serialNumber.toLowerCase(), status: 'notChecked', source: 'none', method: null, producedAt: null, revokedAt: null, reason: null, problems: [] };
}

function apply(entry: CertRevocation, verdict: EvidenceVerdict, source: EvidenceSource): CertRevocation {
  return { ...entry, status: verdict.status, source, method: verdict.method, producedAt: verdict.producedAt, revokedAt: verdict.revokedAt ?? null, reason: verdict.reason ?? null };
}

/**
 * The time revocation evidence must speak for (ETSI EN 319 102-1 §5.2.5): the proof of existence of
 * what is validated (a signature or archive time-stamp) when there is one, else the current time.
 */
export interface ValidationTime {
  at: Date;
  /** What the time is, for messages: "the signature time-stamp", "now (no proof of existence)". */
  basis: string;
}

/**
 * ETSI EN 319 102-1 §5.2.5: evidence is fresh for validation time T when it was issued after
 * T − (nextUpdate − thisUpdate). Against the current time that is "nextUpdate not passed"; against a
 * time-stamp, evidence fetched shortly before the time-stamp counts as long as it was still current
 * then. Without nextUpdate (RFC 6960: newer information is always available) it must be issued at
 * or after T.
 */
export function freshFor(verdict: EvidenceVerdict, at: Date): boolean {
  const issued = new Date(verdict.producedAt).getTime();
  const next = verdict.nextUpdate ? new Date(verdict.nextUpdate).getTime() : issued;
  return issued >= at.getTime() - Math.max(0, next - issued);
}

const describeEvidence = (verdict: EvidenceVerdict) =>
  `${verdict.method === 'ocsp' ? 'OCSP response' : 'CRL'} issued ${verdict.producedAt}${verdict.nextUpdate ? ` (next update ${verdict.nextUpdate})` : ' (no next update)'}`;

/**
 * The best embedded verdict: a revocation wins; else a 'good' fresh for the validation time. Good
 * evidence about this certificate that is not fresh is discarded, named in `entry.problems`, and
 * leaves the entry `unknown` (returned null: fetching may still settle it).
 */
function fromEmbedded(entry: CertRevocation, cert: Cert, issuer: Cert, evidence: EmbeddedEvidence[], validation: ValidationTime): CertRevocation | null {
  let good: CertRevocation | null = null;
  /** Evidence about this certificate that cannot settle it: not fresh, or "unknown". */
  const stale: string[] = [];
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
      if (verdict.status === 'unknown') {
        stale.push(`${set.source}: an ${describeEvidence(verdict)} says the responder does not know the certificate`);
        continue;
      }
      if (freshFor(verdict, validation.at)) good ??= apply(entry, verdict, set.source);
      else stale.push(`${set.source}: discarded a "good" ${describeEvidence(verdict)}: not fresh for the validation time ${validation.at.toISOString()}, ${validation.basis} (ETSI EN 319 102-1 §5.2.5: issued after validation time − (nextUpdate − thisUpdate))`);
    }
  }
  if (good) return { ...good, problems: [...good.problems, ...stale] };
  if (stale.length) {
    entry.status = 'unknown';
    entry.problems.push(...stale);
  }
  return null;
}

/** A checked OCSP response or CRL fetched for one certificate, with the bytes a DSS stores. */
export interface FetchedEvidence {
  verdict: EvidenceVerdict;
  source: 'ocsp-fetched' | 'crl-fetched';
  der: Uint8Array;
}

interface CachedEvidence extends FetchedEvidence {
  until: number;
}

/** Fetched evidence by issuer and serial, kept until its nextUpdate (at most an hour). */
const cache = new Map<string, CachedEvidence>();
const CACHE_LIMIT = 1_000;
const CACHE_MAX_MS = 60 * 60 * 1000;
const SKEW_MS = 5 * 60 * 1000;

function remember(key: string, evidence: FetchedEvidence, now: Date): void {
  const { nextUpdate } = evidence.verdict;
  const until = Math.min(nextUpdate ? new Date(nextUpdate).getTime() : now.getTime(), now.getTime() + CACHE_MAX_MS);
  if (until <= now.getTime()) return;
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, { ...evidence, until });
}

function assertFresh(verdict: EvidenceVerdict, now: Date, what: string): void {
  if (verdict.nextUpdate && new Date(verdict.nextUpdate).getTime() < now.getTime() - SKEW_MS) {
    throw new EvidenceProblem(`the ${what} is out of date (nextUpdate has passed)`);
  }
}

/**
 * Current revocation evidence for `cert` from its OCSP responders (AIA, preferred, with a nonce),
 * then its CRL distribution points, each answer checked; or the problems met on the way.
 * `useCache: false` asks anew: evidence to archive (B-LT) must be produced after the signatures it
 * covers, which an answer cached before them is not.
 */
export interface NoEvidence {
  problems: string[];
  /** The certificate names a responder or a CRL (none answered usefully); false: nothing to ask. */
  published: boolean;
}

export async function fetchEvidence(cert: Cert, issuer: Cert, fetcher: RevocationFetcher, now: Date, { useCache = true } = {}): Promise<FetchedEvidence | NoEvidence> {
  const key = `${issuer.x509.fingerprint256} ${cert.x509.serialNumber}`;
  const hit = useCache ? cache.get(key) : undefined;
  if (hit && hit.until > now.getTime()) return hit;
  const pointers = revocationPointers(cert);
  if (pointers.ocsp.length === 0 && pointers.crl.length === 0) return { problems: ['the certificate names no OCSP responder or CRL'], published: false };
  const problems: string[] = [];
  // At most REVOCATION_BUDGET.perCertificate URLs, OCSP first.
  const ocsp = pointers.ocsp.slice(0, REVOCATION_BUDGET.perCertificate);
  const crl = pointers.crl.slice(0, REVOCATION_BUDGET.perCertificate - ocsp.length);
  const skipped = pointers.ocsp.length + pointers.crl.length - ocsp.length - crl.length;
  if (skipped > 0) problems.push(`${skipped} more URL(s) not asked (at most ${REVOCATION_BUDGET.perCertificate} per certificate)`);
  for (const url of ocsp) {
    try {
      const nonce = randomBytes(16);
      const der = await fetcher(url, { contentType: 'application/ocsp-request', body: ocspRequest(cert, issuer, nonce) });
      const verdict = readOcspResponse(der, cert, issuer, now, nonce);
      assertFresh(verdict, now, 'OCSP response');
      if (verdict.status === 'unknown') throw new EvidenceProblem('the responder does not know the certificate');
      const evidence: FetchedEvidence = { verdict, source: 'ocsp-fetched', der };
      remember(key, evidence, now);
      return evidence;
    } catch (error) {
      problems.push(`OCSP ${url}: ${(error as Error).message}`);
    }
  }
  for (const url of crl) {
    try {
      const der = await fetcher(url);
      const verdict = readCrl(der, cert, issuer);
      assertFresh(verdict, now, 'CRL');
      const evidence: FetchedEvidence = { verdict, source: 'crl-fetched', der };
      remember(key, evidence, now);
      return evidence;
    } catch (error) {
      problems.push(`CRL ${url}: ${(error as Error).message}`);
    }
  }
  return { problems, published: true };
}

async function fetched(entry: CertRevocation, cert: Cert, issuer: Cert, fetcher: RevocationFetcher, now: Date): Promise<CertRevocation> {
  const evidence = await fetchEvidence(cert, issuer, fetcher, now);
  if ('problems' in evidence) return { ...entry, status: evidence.published ? 'unknown' : entry.status, problems: [...entry.problems, ...evidence.problems] };
  return apply(entry, evidence.verdict, evidence.source);
}

export interface ChainRevocation {
  /** One entry per checked certificate, leaf first (the trust anchor is not checked). */
  entries: CertRevocation[];
  /** Entries the embedded evidence did not settle, with what fetching needs. */
  unresolved: Array<{ entry: CertRevocation; cert: Cert; issuer: Cert }>;
}

/**
 * Revocation status of each certificate of `chain` (leaf first, anchor last when trusted) from the
 * evidence the PDF carries, judged fresh or not for `validation` (see ValidationTime).
 */
export function revocationFromEvidence(chain: Cert[], trustedAnchorLast: boolean, evidence: EmbeddedEvidence[], validation: ValidationTime): ChainRevocation {
  const result: ChainRevocation = { entries: [], unresolved: [] };
  const checked = trustedAnchorLast ? chain.slice(0, -1) : chain;
  for (let i = 0; i < checked.length; i++) {
    const cert = checked[i]!;
    const issuer = chain[i + 1];
    const entry = blank(cert);
    if (!issuer) entry.problems.push('no issuer certificate to check revocation against');
    else if (noCheckNeeded(cert)) entry.problems.push('the certificate carries id-pkix-ocsp-nocheck');
    else {
      const embedded = fromEmbedded(entry, cert, issuer, evidence, validation);
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
