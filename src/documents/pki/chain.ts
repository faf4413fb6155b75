import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { extensionOf, hasExtendedKeyUsage, issuedBy, namesIssuer, oneLine, type Cert } from './certificates.js';
import type { TrustAnchor, TrustStore } from './trust.js';

/**
 * The one chain builder: from a leaf up to a trust anchor through the certificates a signature
 * carries, with the checks of RFC 5280 §6.1 that apply to a path: every issuer's signature, CA
 * certificates (basicConstraints cA) allowed to sign certificates (keyUsage keyCertSign), their
 * path-length and name constraints, no critical extension left unprocessed, and the leaf fit for
 * its purpose (keyUsage for signatures, extended key usage for time-stamping and OCSP responders).
 * Not checked here: validity periods (the caller knows the time that matters, see `validAt`) and
 * certificate policies (every policy is acceptable: no explicit policy is required).
 */
export type ChainPurpose = 'signature' | 'timeStamping' | 'ocspSigning';

export interface ChainOptions {
  purpose: ChainPurpose;
  /** The time the chain must have been trusted at, for anchors trusted only for a period (trusted lists). */
  at?: Date;
}

export interface ChainResult {
  /** Leaf first; ends at the anchor when trusted. */
  chain: Cert[];
  trusted: boolean;
  /** The anchor the chain ends at, with where it comes from. */
  anchor?: TrustAnchor;
  problem?: string;
}

const MAX_CHAIN = 12;
/** Issuer candidates tried in all, whatever the pool holds (cross-certificates make it a search). */
const MAX_TRIES = 200;

const KP_TIME_STAMPING = '1.3.6.1.5.5.7.3.8';
const KP_OCSP_SIGNING = '1.3.6.1.5.5.7.3.9';

/** Extensions whose meaning this builder applies or that do not constrain a path. */
const UNDERSTOOD = new Set([
  '2.5.29.14', // subjectKeyIdentifier
  '2.5.29.35', // authorityKeyIdentifier
  '2.5.29.15', // keyUsage
  '2.5.29.37', // extKeyUsage
  '2.5.29.19', // basicConstraints
  '2.5.29.30', // nameConstraints
  '2.5.29.17', // subjectAltName
  '2.5.29.18', // issuerAltName
  '2.5.29.31', // cRLDistributionPoints
  '2.5.29.46', // freshestCRL
  '2.5.29.32', // certificatePolicies: any policy is acceptable
  '2.5.29.33', // policyMappings
  '2.5.29.36', // policyConstraints
  '2.5.29.54', // inhibitAnyPolicy
  '2.5.29.9', // subjectDirectoryAttributes
  '2.5.29.16', // privateKeyUsagePeriod
  '1.3.6.1.5.5.7.1.1', // authorityInfoAccess
  '1.3.6.1.5.5.7.1.11', // subjectInfoAccess
  '1.3.6.1.5.5.7.1.3', // qcStatements
  '1.3.6.1.5.5.7.48.1.5', // id-pkix-ocsp-nocheck
]);

/** KeyUsage bits (RFC 5280 §4.2.1.3), as the first octet of the BIT STRING holds them. */
const KU = { digitalSignature: 0x80, nonRepudiation: 0x40, keyCertSign: 0x04 } as const;

function keyUsage(cert: Cert): number | undefined {
  const value = extensionOf(cert, '2.5.29.15')?.parsedValue;
  return value instanceof asn1js.BitString ? (value.valueBlock.valueHexView[0] ?? 0) : undefined;
}

const name = (cert: Cert) => `"${oneLine(cert.x509.subject)}"`;

function unprocessedCritical(cert: Cert): string | undefined {
  return cert.parsed.extensions?.find((e) => e.critical && !UNDERSTOOD.has(e.extnID))?.extnID;
}

/** Why `leaf` cannot serve `purpose`, or undefined. */
export function unfitFor(leaf: Cert, purpose: ChainPurpose): string | undefined {
  const critical = unprocessedCritical(leaf);
  if (critical) return `the certificate ${name(leaf)} carries a critical extension this service does not process (${critical})`;
  if (purpose === 'timeStamping' && !hasExtendedKeyUsage(leaf, KP_TIME_STAMPING)) {
    return `the certificate ${name(leaf)} is not a time-stamping certificate (extended key usage id-kp-timeStamping, RFC 3161 §2.3)`;
  }
  if (purpose === 'ocspSigning' && !hasExtendedKeyUsage(leaf, KP_OCSP_SIGNING)) {
    return `the certificate ${name(leaf)} is not authorised for OCSP signing (id-kp-OCSPSigning)`;
  }
  const usage = keyUsage(leaf);
  if (usage !== undefined && !(usage & (KU.digitalSignature | KU.nonRepudiation))) {
    return `the key usage of ${name(leaf)} allows no signatures (neither digitalSignature nor nonRepudiation)`;
  }
  return undefined;
}

/** Why `issuer` cannot issue the certificates below it in `chain` (leaf first), or undefined. */
function issuerProblem(issuer: Cert, below: Cert[]): string | undefined {
  const constraints = extensionOf(issuer, '2.5.29.19')?.parsedValue as pkijs.BasicConstraints | undefined;
  if (!constraints?.cA) return `the issuer ${name(issuer)} is not a CA certificate (basicConstraints cA)`;
  const usage = keyUsage(issuer);
  if (usage !== undefined && !(usage & KU.keyCertSign)) return `the key usage of the issuer ${name(issuer)} does not allow signing certificates (keyCertSign)`;
  const critical = unprocessedCritical(issuer);
  if (critical) return `the issuer ${name(issuer)} carries a critical extension this service does not process (${critical})`;
  const pathLen = typeof constraints.pathLenConstraint === 'number' ? constraints.pathLenConstraint : (constraints.pathLenConstraint as asn1js.Integer | undefined)?.valueBlock.valueDec;
  // Non-self-issued intermediates between this issuer and the leaf (RFC 5280 §6.1.4 (l), (m)).
  const intermediates = below.slice(1).filter((c) => c.x509.subject !== c.x509.issuer).length;
  if (pathLen !== undefined && intermediates > pathLen) return `the issuer ${name(issuer)} allows ${pathLen} intermediate certificate(s) below it (pathLenConstraint), the chain has ${intermediates}`;
  const nameProblem = nameConstraintProblem(issuer, below);
  if (nameProblem) return nameProblem;
  return undefined;
}

/** Why `anchor` cannot vouch for a chain at `at` (trusted-list anchors are trusted for a period), or undefined. */
function periodProblem(anchor: TrustAnchor, at: Date | undefined): string | undefined {
  if (!at || (!anchor.from && !anchor.until)) return undefined;
  if ((anchor.from && at < anchor.from) || (anchor.until && at > anchor.until)) {
    return `the trust anchor ${name(anchor.cert)} (${anchor.source}) is trusted from ${anchor.from?.toISOString() ?? 'the start'} to ${anchor.until?.toISOString() ?? 'now'}, not at ${at.toISOString()}`;
  }
  return undefined;
}

/**
 * Builds the chain from `leaf` upwards using `pool` (the certificates the signature carries) and the
 * trust anchors, trying other issuers when one path fails a check; the first trusted path wins.
 */
export function buildChain(leaf: Cert, pool: Cert[], trust: TrustStore, options: ChainOptions): ChainResult {
  const leafIssue = unfitFor(leaf, options.purpose);
  let tries = 0;
  let firstProblem: string | undefined;
  let longest: Cert[] = [leaf];
  const note = (problem: string) => (firstProblem ??= problem);
  const usable = (anchor: TrustAnchor) => {
    const problem = periodProblem(anchor, options.at);
    if (problem) note(problem);
    return !problem;
  };

  const extend = (chain: Cert[]): ChainResult | undefined => {
    const current = chain.at(-1)!;
    if (chain.length > longest.length) longest = chain;
    const self = trust.anchorOf(current);
    if (self && usable(self)) return { chain, trusted: true, anchor: self };
    if (chain.length >= MAX_CHAIN) {
      note('the certificate chain is too long');
      return undefined;
    }
    const inChain = (cert: Cert) => chain.some((c) => c.x509.fingerprint256 === cert.x509.fingerprint256);
    const candidates: Array<{ cert: Cert; anchor?: TrustAnchor }> = [
      ...trust.issuersOf(current).filter((a) => !inChain(a.cert)).map((anchor) => ({ cert: anchor.cert, anchor })),
      ...pool.filter((c) => !inChain(c) && namesIssuer(current, c)).map((cert) => ({ cert })),
    ];
    for (const { cert, anchor } of candidates) {
      if (++tries > MAX_TRIES) {
        note('too many candidate issuer certificates to search');
        return undefined;
      }
      if (!issuedBy(current, cert)) continue;
      if (anchor) {
        // A trust anchor is trusted as configured (RFC 5280 §6.1.1 (d)); its name constraints still apply.
        const problem = nameConstraintProblem(cert, chain);
        if (problem) note(problem);
        else if (usable(anchor)) return { chain: [...chain, cert], trusted: true, anchor };
        continue;
      }
      const problem = issuerProblem(cert, chain);
      if (problem) {
        note(problem);
        continue;
      }
      const found = extend([...chain, cert]);
      if (found) return found;
    }
    return undefined;
  };

  const found = extend([leaf]);
  if (found) return leafIssue ? { chain: found.chain, trusted: false, problem: leafIssue } : found;
  const top = longest.at(-1)!;
  const fallback = issuedBy(top, top)
    ? `the chain ends at the self-signed certificate ${name(top)}, which is not a trusted root`
    : `no issuer certificate found for ${name(top)} among the embedded certificates and trusted roots`;
  return { chain: longest, trusted: false, problem: leafIssue ?? firstProblem ?? fallback };
}

/* ---------- name constraints (RFC 5280 §4.2.1.10), for the name forms signatures carry ---------- */

interface Names {
  directory: pkijs.RelativeDistinguishedNames;
  emails: string[];
  dns: string[];
  /** Name forms present that these checks do not understand (by GeneralName tag). */
  others: Set<number>;
}

function namesOf(cert: Cert): Names {
  const names: Names = { directory: cert.parsed.subject, emails: [], dns: [], others: new Set() };
  for (const tv of cert.parsed.subject.typesAndValues) if (tv.type === '1.2.840.113549.1.9.1') names.emails.push(String(tv.value.valueBlock.value));
  const san = extensionOf(cert, '2.5.29.17')?.parsedValue as pkijs.AltName | undefined;
  for (const general of san?.altNames ?? []) {
    if (general.type === 1) names.emails.push(String(general.value));
    else if (general.type === 2) names.dns.push(String(general.value));
    else if (general.type !== 4) names.others.add(general.type);
  }
  return names;
}

const lower = (s: string) => s.toLowerCase();

function withinDns(name: string, constraint: string): boolean {
  const n = lower(name).replace(/\.$/, '');
  const c = lower(constraint).replace(/^\./, '');
  return c === '' || n === c || n.endsWith(`.${c}`);
}

function withinEmail(email: string, constraint: string): boolean {
  const at = email.lastIndexOf('@');
  if (at < 0) return false;
  if (constraint.includes('@')) return email.slice(0, at) === constraint.slice(0, constraint.lastIndexOf('@')) && lower(email.slice(at + 1)) === lower(constraint.slice(constraint.lastIndexOf('@') + 1));
  const host = lower(email.slice(at + 1));
  return constraint.startsWith('.') ? host.endsWith(lower(constraint)) : host === lower(constraint);
}

/** `name` lies in the subtree `base`: base's RDNs are the first RDNs of name (compared as encoded). */
function withinDirectory(name: pkijs.RelativeDistinguishedNames, base: pkijs.RelativeDistinguishedNames): boolean {
  const rdns = (n: pkijs.RelativeDistinguishedNames) => {
    const seq = n.valueBeforeDecode.byteLength ? asn1js.fromBER(n.valueBeforeDecode).result : n.toSchema();
    return (seq as asn1js.Sequence).valueBlock.value.map((rdn) => Buffer.from(rdn.toBER()).toString('hex'));
  };
  const [n, b] = [rdns(name), rdns(base)];
  return b.length <= n.length && b.every((rdn, i) => rdn === n[i]);
}

function matches(names: Names, base: pkijs.GeneralName): boolean | 'unsupported' {
  if (base.type === 4) return withinDirectory(names.directory, base.value as pkijs.RelativeDistinguishedNames);
  if (base.type === 1) return names.emails.length > 0 && names.emails.every((e) => withinEmail(e, String(base.value)));
  if (base.type === 2) return names.dns.length > 0 && names.dns.every((d) => withinDns(d, String(base.value)));
  return 'unsupported';
}

function nameConstraintProblem(issuer: Cert, below: Cert[]): string | undefined {
  const constraints = extensionOf(issuer, '2.5.29.30')?.parsedValue as pkijs.NameConstraints | undefined;
  if (!constraints) return undefined;
  for (const cert of below) {
    // Self-issued intermediates are not constrained (RFC 5280 §6.1.3 (b)), the leaf always is.
    if (cert !== below[0] && cert.x509.subject === cert.x509.issuer) continue;
    const names = namesOf(cert);
    const forms = new Set([4, ...(names.emails.length ? [1] : []), ...(names.dns.length ? [2] : []), ...names.others]);
    for (const form of forms) {
      const permitted = (constraints.permittedSubtrees ?? []).filter((s) => s.base.type === form);
      const excluded = (constraints.excludedSubtrees ?? []).filter((s) => s.base.type === form);
      if ((permitted.length || excluded.length) && ![1, 2, 4].includes(form)) {
        return `the issuer ${name(issuer)} constrains names of a form (GeneralName [${form}]) this service cannot check`;
      }
      if (permitted.length && !permitted.some((s) => matches(names, s.base) === true)) {
        return `${name(cert)} lies outside the names its issuer ${name(issuer)} may certify (permitted subtrees)`;
      }
      if (excluded.some((s) => matches(names, s.base) === true)) {
        return `${name(cert)} lies in names its issuer ${name(issuer)} may not certify (excluded subtrees)`;
      }
    }
  }
  return undefined;
}
