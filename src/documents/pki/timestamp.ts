import { timingSafeEqual } from 'node:crypto';
import * as pkijs from 'pkijs';
import { hashBytes, hashFromOid } from './algorithms.js';
import { summarizeCert } from './certificates.js';
import { buildChain } from './chain.js';
import type { TrustStore } from './trust.js';
import { checkSignedData, type CmsCheck } from './cms/signed-data.js';
import { decodeBer } from './asn1.js';

const OID_TST_INFO = '1.2.840.113549.1.9.16.1.4';

export interface TimestampReport {
  time: string | null;
  tsa: string | null;
  /** The token's message imprint matches the data it claims to time-stamp. */
  intact: boolean;
  /** The token's own CMS signature verifies and its content is intact. */
  valid: boolean;
  trusted: boolean;
  /** Revocation of the time-stamp unit's chain (signature time-stamps; a document time-stamp reports it as its own signature). */
  revocation?: import('./revocation/check.js').CertRevocation[];
  errors: string[];
}

function rdnText(names: pkijs.RelativeDistinguishedNames): string {
  return names.typesAndValues.map((tv) => String(tv.value.valueBlock.value)).join(', ');
}

/** Checks an RFC 3161 time-stamp token against the bytes it should time-stamp (never throws). */
export function checkTimestampToken(token: Uint8Array, stamped: Uint8Array, trust: TrustStore): TimestampReport & { cms: CmsCheck } {
  const cms = checkSignedData(token, () => Buffer.alloc(0));
  const report: TimestampReport & { cms: CmsCheck } = { time: null, tsa: null, intact: false, valid: false, trusted: false, errors: [], cms };
  if (cms.formatError || !cms.eContent || cms.eContentType !== OID_TST_INFO) {
    report.errors.push(`the time-stamp token is not a valid RFC 3161 token${cms.formatError ? `: ${cms.formatError}` : ''}`);
    return report;
  }
  let info: pkijs.TSTInfo;
  try {
    const asn1 = decodeBer(cms.eContent);
    info = new pkijs.TSTInfo({ schema: asn1.result });
  } catch {
    report.errors.push('the time-stamp token content (TSTInfo) cannot be decoded');
    return report;
  }
  report.time = info.genTime.toISOString();
  const signer = cms.signerCert ? summarizeCert(cms.signerCert) : undefined;
  report.tsa = info.tsa?.type === 4 ? rdnText(info.tsa.value as pkijs.RelativeDistinguishedNames) : (signer?.commonName ?? signer?.subject ?? null);
  const imprintHash = hashFromOid(info.messageImprint.hashAlgorithm.algorithmId);
  const imprint = new Uint8Array(info.messageImprint.hashedMessage.valueBlock.valueHexView);
  if (!imprintHash) report.errors.push('the time-stamp imprint uses an unsupported hash algorithm');
  else {
    const expected = hashBytes(imprintHash, stamped);
    report.intact = expected.length === imprint.length && timingSafeEqual(expected, imprint);
    if (!report.intact) report.errors.push('the time-stamp imprint does not match the time-stamped data');
  }
  report.valid = cms.intact && cms.cryptoValid && !cms.structureError && !cms.unsupportedAlgorithm;
  if (!cms.signerCert) report.errors.push('the time-stamp token carries no TSA certificate');
  else if (!report.valid) report.errors.push(`the time-stamp token signature does not verify${cms.structureError ? `: ${cms.structureError}` : ''}`);
  if (cms.signerCert) {
    const chain = buildChain(cms.signerCert, cms.certificates, trust);
    report.trusted = chain.trusted;
    if (!chain.trusted) report.errors.push(`the time-stamp authority is not trusted: ${chain.problem}`);
  }
  return report;
}
