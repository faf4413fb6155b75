import { timingSafeEqual } from 'node:crypto';
import * as pkijs from 'pkijs';
import { hashBytes, hashFromOid } from './algorithms.js';
import { summarizeCert, validAt } from './certificates.js';
import { buildChain, type ChainResult } from './chain.js';
import { anchorReport, type TrustStore } from './trust.js';
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
  /** The anchor the TSA's chain ends at and where its trust comes from; null when not trusted. */
  trustAnchor?: import('./trust.js').TrustAnchorReport | null;
  /** Revocation of the time-stamp unit's chain (signature time-stamps; a document time-stamp reports it as its own signature). */
  revocation?: import('./revocation/check.js').CertRevocation[];
  errors: string[];
}

function rdnText(names: pkijs.RelativeDistinguishedNames): string {
  return names.typesAndValues.map((tv) => String(tv.value.valueBlock.value)).join(', ');
}

/** What reading a time-stamp token found: the report, the token's CMS, the TSA's chain, the nonce. */
export interface TimestampToken {
  report: TimestampReport;
  cms: CmsCheck;
  /** The time-stamp unit's chain (built for time-stamping), when the token names its certificate. */
  chain?: ChainResult;
  genTime?: Date;
  nonce?: bigint;
}

/**
 * Reads and checks an RFC 3161 time-stamp token against the bytes it should time-stamp: the message
 * imprint, the token's CMS signature (with the TSA certificate bound by its ESS signing-certificate
 * attribute), the TSA certificate fit for time-stamping and valid at the time it gives, and its
 * chain to the trust anchors. Verification and signing (the TSA's reply) both use it; never throws.
 */
export function readTimestampToken(token: Uint8Array, stamped: Uint8Array, trust: TrustStore): TimestampToken {
  const cms = checkSignedData(token, () => Buffer.alloc(0));
  const report: TimestampReport = { time: null, tsa: null, intact: false, valid: false, trusted: false, errors: [] };
  const read: TimestampToken = { report, cms };
  if (cms.formatError || !cms.eContent || cms.eContentType !== OID_TST_INFO) {
    report.errors.push(`the time-stamp token is not a valid RFC 3161 token${cms.formatError ? `: ${cms.formatError}` : ''}`);
    return read;
  }
  let info: pkijs.TSTInfo;
  try {
    info = new pkijs.TSTInfo({ schema: decodeBer(cms.eContent).result });
    read.genTime = info.genTime;
    read.nonce = info.nonce ? BigInt(info.nonce.toBigInt()) : undefined;
  } catch {
    report.errors.push('the time-stamp token content (TSTInfo) cannot be decoded');
    return read;
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
    if (report.valid && !validAt(cms.signerCert, info.genTime)) {
      report.valid = false;
      report.errors.push(`the TSA certificate was not valid at the time it gives (${report.time})`);
    }
    read.chain = buildChain(cms.signerCert, cms.certificates, trust, { purpose: 'timeStamping', at: info.genTime });
    report.trusted = read.chain.trusted;
    report.trustAnchor = anchorReport(read.chain.anchor);
    if (!read.chain.trusted) report.errors.push(`the time-stamp authority is not trusted: ${read.chain.problem}`);
  }
  return read;
}
