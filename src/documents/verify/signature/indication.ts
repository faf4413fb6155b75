import { validAt } from '../../pki/certificates.js';
import type { ModificationLevel } from '../types.js';
import { levelRank } from './change-rules.js';
import type { SignatureFacts } from './evaluate.js';

/**
 * The most a later revision may change: DocMDP P1 archival updates only (PAdES: DSS, document
 * time-stamps), P2 signatures and form filling, P3 and plain approval signatures also annotations.
 */
export function allowedLevel(permission: 1 | 2 | 3 | undefined): ModificationLevel {
  if (permission === 1) return 'archival';
  if (permission === 2) return 'formFilling';
  return 'annotations';
}

export function levelAllowed(level: ModificationLevel, permission: 1 | 2 | 3 | undefined): boolean {
  return levelRank(level) <= levelRank(allowedLevel(permission));
}

/**
 * Sets indication/subIndication following ETSI EN 319 102-1: format and hash/crypto failures
 * are TOTAL_FAILED; missing data, unusable algorithms, untrusted chains and certificates
 * outside their validity without proof of existence are INDETERMINATE.
 */
export function decideIndication(facts: SignatureFacts, changesAllowed: boolean, now: Date): void {
  const { report, byteRange, cms } = facts;
  const fail = (indication: 'TOTAL_FAILED' | 'INDETERMINATE', sub: NonNullable<typeof report.subIndication>, error?: string) => {
    report.indication = indication;
    report.subIndication = sub;
    if (error && !report.errors.includes(error)) report.errors.push(error);
  };
  if (!report.signed) return fail('INDETERMINATE', 'SIGNED_DATA_NOT_FOUND');
  if (byteRange.notFound) return fail('INDETERMINATE', 'SIGNED_DATA_NOT_FOUND', byteRange.notFound);
  if (cms?.formatError) return fail('TOTAL_FAILED', 'FORMAT_FAILURE', cms.formatError);
  if (byteRange.formatProblem) return fail('TOTAL_FAILED', 'FORMAT_FAILURE', byteRange.formatProblem);
  // The digest comparison does not depend on the signature algorithm: a document shown to be
  // altered fails even when its signature value cannot be checked.
  const altered = () => `${report.kind === 'documentTimestamp' ? 'the time-stamp imprint' : 'the signed digest'} does not match the signed bytes: the document was altered`;
  if (cms?.unsupportedAlgorithm && cms.digestCompared && !report.intact) {
    report.errors.push(`unsupported algorithm: ${cms.unsupportedAlgorithm}`);
    return fail('TOTAL_FAILED', 'HASH_FAILURE', altered());
  }
  if (cms?.unsupportedAlgorithm) return fail('INDETERMINATE', 'CRYPTO_CONSTRAINTS_FAILURE_NO_POE', `unsupported algorithm: ${cms.unsupportedAlgorithm}`);
  if (!facts.signerCert) return fail('INDETERMINATE', 'NO_SIGNING_CERTIFICATE_FOUND', 'the signature carries no signer certificate');
  if (cms?.structureError) return fail('TOTAL_FAILED', 'FORMAT_FAILURE', cms.structureError);
  if (!report.intact) return fail('TOTAL_FAILED', 'HASH_FAILURE', altered());
  if (cms?.nonDerAttributes) return fail('TOTAL_FAILED', 'HASH_FAILURE', cms.nonDerAttributes);
  if (!report.cryptoValid) return fail('TOTAL_FAILED', 'SIG_CRYPTO_FAILURE', 'the signature value does not verify with the signer certificate');
  if (!changesAllowed) {
    report.errors.unshift(`the document was changed after signing in a way that is not allowed (${report.modificationsAfter})`);
    return fail('TOTAL_FAILED', 'FORMAT_FAILURE');
  }
  if (!report.trusted) return fail('INDETERMINATE', 'NO_CERTIFICATE_CHAIN_FOUND', 'the signer certificate does not chain to a trusted root');
  let signatureTimestamp = report.timestamp?.valid && report.timestamp.intact && report.timestamp.trusted && report.timestamp.time ? new Date(report.timestamp.time) : undefined;
  // A time-stamp unit revoked at or before its time-stamp proves nothing.
  const revokedUnit = report.timestamp?.revocation?.find((r) => r.status === 'revoked' && (!r.revokedAt || !signatureTimestamp || new Date(r.revokedAt).getTime() <= signatureTimestamp.getTime()));
  if (signatureTimestamp && revokedUnit) {
    report.warnings.push(`the time-stamp unit certificate "${revokedUnit.subject}" was revoked${revokedUnit.revokedAt ? ` on ${revokedUnit.revokedAt}` : ''}, before its time-stamp: the time-stamp is not proof of the signing time`);
    signatureTimestamp = undefined;
  }
  // Proof of existence: the signature's own time-stamp, else a later archive (document) time-stamp.
  const poe = signatureTimestamp ?? facts.archivePoe;
  const revoked = report.revocation.find((r) => r.status === 'revoked');
  if (revoked) {
    const when = revoked.revokedAt ? new Date(revoked.revokedAt) : undefined;
    const what = `the certificate "${revoked.subject}" was revoked${when ? ` on ${when.toISOString()}` : ''}${revoked.reason ? ` (${revoked.reason})` : ''}`;
    if (poe && when && when.getTime() > poe.getTime()) {
      report.warnings.push(`${what}, after the time-stamp proves the signature existed (${poe.toISOString()}): the signature stays valid`);
    } else if (poe) {
      return fail('TOTAL_FAILED', 'REVOKED', `${what}, before the time-stamped signing time ${poe.toISOString()}`);
    } else {
      return fail('INDETERMINATE', 'REVOKED_NO_POE', `${what}, and no trusted time-stamp proves the signature was made before that`);
    }
  }
  const unknown = report.revocation.find((r) => r.status === 'unknown');
  if (unknown) {
    return fail('INDETERMINATE', 'TRY_LATER', `the revocation status of "${unknown.subject}" could not be established (${unknown.problems.join('; ') || 'no answer'}); try again later`);
  }
  const signer = facts.signerCert;
  const claimed = report.signingTime ? new Date(report.signingTime) : undefined;
  if (claimed && claimed.getTime() < new Date(signer.x509.validFrom).getTime()) {
    return fail('TOTAL_FAILED', 'NOT_YET_VALID', 'the signer certificate was not yet valid at the claimed signing time');
  }
  if (claimed && claimed.getTime() > new Date(signer.x509.validTo).getTime()) {
    // The signer's own signed claim puts the signature after the certificate's end (ETSI EN 319 102-1 EXPIRED).
    return fail('TOTAL_FAILED', 'EXPIRED', `the signer certificate had expired (${new Date(signer.x509.validTo).toISOString()}) at the claimed signing time`);
  }
  if (!validAt(signer, now) && !(poe && validAt(signer, poe))) {
    return fail('INDETERMINATE', 'OUT_OF_BOUNDS_NO_POE', 'the signer certificate is outside its validity period and no trusted time-stamp proves the signature existed before');
  }
  if (cms?.weakAlgorithm) {
    return fail('INDETERMINATE', 'CRYPTO_CONSTRAINTS_FAILURE_NO_POE', `the signature uses ${cms.weakAlgorithm}, which is no longer considered secure`);
  }
  report.indication = 'TOTAL_PASSED';
  report.subIndication = null;
}
