import * as asn1js from 'asn1js';
import { hashRanges, recoverRsaDigestInfo, type HashName } from '../../pki/algorithms.js';
import { oneLine, parseCert, summarizeCert, validAt, type Cert } from '../../pki/certificates.js';
import { buildChain } from '../../pki/chain.js';
import type { TrustStore } from '../../pki/trust.js';
import { checkSignedData, type CmsCheck } from '../../pki/cms/signed-data.js';
import { readTimestampToken } from '../../pki/timestamp.js';
import type { PdfView, RevisionEnd } from '../../pdf/document.js';
import { PdfDict, PdfString, asArray, asDict, asNumber, asText, isName, nameOf, type PdfValue } from '../../pdf/objects.js';
import { readAuditTrail } from '../../sign/audit.js';
import type { SignatureFieldRef } from '../../pdf/structure.js';
import type { ChainRevocation } from '../../pki/revocation/check.js';
import type { DocMdpReport, SignatureReport } from '../types.js';
import { checkByteRange, type ByteRangeCheck } from './byte-range.js';
import type { FieldLock } from './change-rules.js';
import type { SignedRevision } from './modifications.js';
import { parsePdfDate } from './pdf-date.js';
import { anchorReport, developmentAnchorWarning } from '../../pki/trust.js';

/** Everything about one signature that does not depend on the other signatures. */
export interface SignatureFacts {
  report: SignatureReport;
  byteRange: ByteRangeCheck;
  cms?: CmsCheck;
  signerCert?: Cert;
  /** A /Contents placeholder that was never filled (all zero bytes). */
  placeholder: boolean;
  /** Found in the file but not shown by the final document (its field was dropped later). */
  hidden?: boolean;
  /** The signer's chain as built (leaf first; ends at the anchor when trusted). */
  chain?: Cert[];
  /** The /Contents bytes as stored (the key of the signature's DSS VRI entry). */
  contents?: Uint8Array;
  /** Certificates of the signature's time-stamp token (the TSA's chain as the token carries it). */
  timestampCerts?: Cert[];
  /** The time-stamp unit's chain (signature time-stamps), and its revocation. */
  timestampChain?: { chain: Cert[]; trusted: boolean };
  timestampRevocation?: ChainRevocation;
  /** The earliest trusted document time-stamp made after this signature (proof of existence). */
  archivePoe?: Date;
  /** Revocation of the chain, from the PDF's evidence (and, online, from the responders). */
  revocation?: ChainRevocation;
  /** The fields this signature locked (FieldMDP), and a DocMDP permission its field lock set. */
  lock?: FieldLock;
  lockPermission?: 1 | 2 | 3;
}

export interface EvaluationContext {
  data: Uint8Array;
  final: PdfView;
  revisions: readonly RevisionEnd[];
  trust: TrustStore;
  now: Date;
  signedView: (end: number) => PdfView | undefined;
  /** The revision ending at `end`, indexed for the modification analysis. */
  signedRevision: (end: number) => SignedRevision | undefined;
  /** Digest of the byte ranges (a SHA-256 from the file's start is kept, so the whole file is hashed once). */
  digestRanges: (hash: HashName, ranges: Array<[number, number]>) => Buffer;
}

function emptyReport(field: SignatureFieldRef): SignatureReport {
  return {
    field: field.name,
    signed: false,
    subFilter: null,
    kind: 'approval',
    signingTime: null,
    reason: null,
    location: null,
    byteRange: null,
    signer: null,
    digestAlgorithm: null,
    signatureAlgorithm: null,
    intact: false,
    cryptoValid: false,
    trusted: false,
    certificateValidAtSigningTime: false,
    timestamp: null,
    revocation: [],
    coverage: 'unclear',
    modificationsAfter: 'none',
    docMdp: null,
    fieldMdp: null,
    auditTrail: null,
    indication: 'INDETERMINATE',
    subIndication: 'SIGNED_DATA_NOT_FOUND',
    errors: [],
    warnings: [],
  };
}

export function docMdpOf(sigDict: PdfDict, view: PdfView): DocMdpReport | null {
  for (const ref of view.array(sigDict.get('Reference')) ?? []) {
    const reference = view.dict(ref);
    if (!isName(reference?.get('TransformMethod'), 'DocMDP')) continue;
    const p = asNumber(view.dict(reference?.get('TransformParams'))?.get('P')) ?? 2;
    return { permission: p === 1 || p === 3 ? p : 2, respected: true };
  }
  return null;
}

const LOCK_ACTIONS = new Set(['All', 'Include', 'Exclude']);

/**
 * The fields a signature locks: its FieldMDP signature reference (signed with it), else the /Lock
 * dictionary its field carried when signed (ISO 32000-1 §12.7.4.5: locked "when this signature
 * field is signed"). A /P in either (ISO 32000-2 Tables 257 and 233) also sets a DocMDP
 * permission for what follows.
 */
export function fieldLockOf(sigDict: PdfDict, fieldDict: PdfDict | undefined, view: PdfView): { lock?: FieldLock; permission?: 1 | 2 | 3 } {
  let lock: FieldLock | undefined;
  let permission: 1 | 2 | 3 | undefined;
  const read = (params: PdfDict | undefined) => {
    const p = asNumber(params?.get('P'));
    if (p === 1 || p === 2 || p === 3) permission ??= p;
    const action = nameOf(params?.get('Action'));
    if (!params || !action || !LOCK_ACTIONS.has(action) || lock) return;
    const fields = (view.array(params.get('Fields')) ?? []).flatMap((f) => asText(view.resolve(f)) ?? []);
    lock = { action: action as FieldLock['action'], fields };
  };
  for (const ref of view.array(sigDict.get('Reference')) ?? []) {
    const reference = view.dict(ref);
    if (isName(reference?.get('TransformMethod'), 'FieldMDP')) read(view.dict(reference?.get('TransformParams')));
  }
  read(view.dict(fieldDict?.get('Lock')));
  return { lock, permission };
}

/** The signature dictionary (and its field) as they were in the signed revision (an attacker may have rewritten them later). */
function signedSignatureDict(field: SignatureFieldRef, finalDict: PdfDict, ctx: EvaluationContext): { dict: PdfDict; view: PdfView; fieldDict?: PdfDict } {
  const br = asArray(finalDict.get('ByteRange'));
  const end = br?.length === 4 && typeof br[2] === 'number' && typeof br[3] === 'number' ? br[2] + br[3] : undefined;
  const view = end !== undefined && end <= ctx.data.length ? ctx.signedView(end) : undefined;
  if (view && field.fieldNum !== undefined) {
    const fieldThen = view.dict(view.getObject(field.fieldNum) ?? null);
    const dictThen = view.dict(fieldThen?.get('V'));
    if (dictThen) return { dict: dictThen, view, fieldDict: fieldThen };
  }
  return { dict: finalDict, view: ctx.final, fieldDict: field.field };
}

const certsFromValue = (view: PdfView, value: PdfValue | undefined): Cert[] => {
  const resolved = view.resolve(value);
  const list = asArray(resolved) ?? (resolved === undefined ? [] : [resolved]);
  return list.flatMap((v) => {
    const s = view.resolve(v);
    return s instanceof PdfString ? (parseCert(s.bytes) ?? []) : [];
  });
};

/** adbe.x509.rsa_sha1: /Contents is a DER OCTET STRING holding a PKCS#1 v1.5 signature over the byte-range digest. */
function checkX509RsaSha1(contents: Uint8Array, certs: Cert[], ranges: Array<[number, number]>, data: Uint8Array): CmsCheck {
  const check: CmsCheck = { certificates: certs, intact: false, cryptoValid: false, signerCount: 1, signerCert: certs[0] };
  const asn1 = asn1js.fromBER(contents);
  if (asn1.offset === -1 || !(asn1.result instanceof asn1js.OctetString)) return { ...check, formatError: 'the adbe.x509.rsa_sha1 /Contents is not a DER OCTET STRING' };
  const signature = new Uint8Array(asn1.result.valueBlock.valueHexView);
  check.signatureValue = signature;
  if (!check.signerCert) return check;
  if (check.signerCert.x509.publicKey.asymmetricKeyType !== 'rsa') return { ...check, formatError: 'adbe.x509.rsa_sha1 requires an RSA certificate' };
  const recovered = recoverRsaDigestInfo(check.signerCert.x509.publicKey, signature);
  if (!recovered) return check; // the signature does not decrypt with the signer's key
  check.cryptoValid = true;
  const hash = recovered.hash ?? 'sha1';
  check.digest = hash;
  check.scheme = { kind: 'rsa-pkcs1', hash };
  check.algorithmDescription = `RSA PKCS#1 v1.5 with ${hash.toUpperCase().replace('SHA', 'SHA-')}`;
  if (hash === 'sha1') check.weakAlgorithm = 'SHA-1';
  const expected = hashRanges(hash, data, ranges);
  check.intact = Buffer.from(recovered.digest).equals(expected);
  return check;
}

const concatRanges = (data: Uint8Array, ranges: Array<[number, number]>) => Buffer.concat(ranges.map(([s, e]) => data.subarray(s, e)));

/**
 * Gathers facts about one signature field: byte range, CMS, certificates, time-stamps, DocMDP.
 * `home` is the revision the field was found in when the final document no longer shows it.
 */
export function examineSignature(field: SignatureFieldRef, ctx: EvaluationContext, home: PdfView = ctx.final): SignatureFacts {
  const report = emptyReport(field);
  const finalDict = asDict(home.resolve(field.value));
  if (!finalDict) {
    report.errors.push('the signature field is empty (not signed)');
    return { report, byteRange: { coverage: 'unclear' }, placeholder: true };
  }
  const { dict, view, fieldDict } = signedSignatureDict(field, finalDict, ctx);
  const contents = view.resolve(dict.get('Contents'));
  const contentBytes = contents instanceof PdfString ? contents.bytes : new Uint8Array();
  // An unfilled placeholder (/Contents all zeros) claims nothing; a missing or empty /Contents
  // in a signature dictionary is a malformed signature, reported as one.
  const placeholder = contentBytes.length > 0 && contentBytes.every((b) => b === 0);
  report.subFilter = nameOf(dict.get('SubFilter')) ?? null;
  report.kind = isName(dict.get('Type'), 'DocTimeStamp') || report.subFilter === 'ETSI.RFC3161' ? 'documentTimestamp' : 'approval';
  report.reason = asText(view.resolve(dict.get('Reason'))) ?? null;
  report.location = asText(view.resolve(dict.get('Location'))) ?? null;
  report.auditTrail = readAuditTrail(view, dict);
  report.signingTime = parsePdfDate(asText(view.resolve(dict.get('M'))));
  const docMdp = docMdpOf(dict, view);
  if (docMdp) {
    report.kind = 'certification';
    report.docMdp = docMdp;
  }
  const { lock, permission: lockPermission } = fieldLockOf(dict, fieldDict, view);
  if (lock) report.fieldMdp = { action: lock.action, fields: lock.fields, respected: true };
  const brValue = view.resolve(dict.get('ByteRange'));
  report.byteRange = Array.isArray(brValue) && brValue.every((n) => typeof n === 'number') ? (brValue as number[]) : null;
  if (placeholder) {
    report.errors.push('the signature field holds an unfilled placeholder (/Contents is empty): it is not signed');
    return { report, byteRange: { coverage: 'unclear' }, placeholder: true };
  }
  report.signed = true;
  const byteRange = checkByteRange(brValue, contents, ctx.data, ctx.revisions);
  report.coverage = byteRange.coverage;
  if (!byteRange.ranges) return { report, byteRange, placeholder: false, lock, lockPermission };
  const ranges = byteRange.ranges;

  if (report.kind === 'documentTimestamp') {
    const { report: timestamp, cms } = readTimestampToken(contentBytes, concatRanges(ctx.data, ranges), ctx.trust);
    report.timestamp = timestamp;
    report.intact = timestamp.intact;
    report.cryptoValid = timestamp.valid;
    report.signingTime = timestamp.time ?? report.signingTime;
    return finishSigner({ report, byteRange, cms, signerCert: cms.signerCert, placeholder: false, contents: contentBytes, lock, lockPermission }, ctx);
  }

  let cms: CmsCheck;
  if (report.subFilter === 'adbe.x509.rsa_sha1') {
    cms = checkX509RsaSha1(contentBytes, certsFromValue(view, dict.get('Cert')), ranges, ctx.data);
  } else {
    cms = checkSignedData(contentBytes, (hash) => ctx.digestRanges(hash, ranges));
    if (cms.eContent && report.subFilter === 'adbe.pkcs7.sha1') {
      const expected = hashRanges('sha1', ctx.data, ranges);
      if (!expected.equals(cms.eContent)) cms.intact = false;
      cms.weakAlgorithm ??= 'SHA-1';
    } else if (cms.eContent) {
      cms.structureError ??= 'the CMS encapsulates content, but a detached PDF signature must not';
    }
  }
  report.intact = cms.intact;
  report.cryptoValid = cms.cryptoValid;
  report.digestAlgorithm = cms.digest ?? null;
  report.signatureAlgorithm = cms.algorithmDescription ?? null;
  if (cms.signingTime) report.signingTime = cms.signingTime.toISOString();
  if (cms.signerCount > 1) report.warnings.push(`the CMS holds ${cms.signerCount} signers; only the first is verified`);
  let timestampCerts: Cert[] | undefined;
  let timestampChain: SignatureFacts['timestampChain'];
  if (cms.timestampToken && cms.signatureValue) {
    const token = readTimestampToken(cms.timestampToken, cms.signatureValue, ctx.trust);
    report.timestamp = token.report;
    timestampCerts = token.cms.certificates;
    timestampChain = token.chain;
  }
  return finishSigner({ report, byteRange, cms, signerCert: cms.signerCert, placeholder: false, contents: contentBytes, timestampCerts, timestampChain, lock, lockPermission }, ctx);
}

function finishSigner(facts: SignatureFacts, ctx: EvaluationContext): SignatureFacts {
  const { report, signerCert, cms } = facts;
  if (!signerCert) return facts;
  const timestampPoe = report.timestamp?.valid && report.timestamp.intact && report.timestamp.time ? report.timestamp.time : null;
  const signingTime = timestampPoe ?? report.signingTime;
  const purpose = report.kind === 'documentTimestamp' ? 'timeStamping' : 'signature';
  const chain = buildChain(signerCert, cms?.certificates ?? [], ctx.trust, { purpose, at: signingTime ? new Date(signingTime) : ctx.now });
  report.trusted = chain.trusted;
  facts.chain = chain.chain;
  if (!chain.trusted && chain.problem) report.warnings.push(`certificate chain: ${chain.problem}`);
  const development = developmentAnchorWarning(chain.anchor);
  if (development) report.warnings.push(development);
  report.signer = { ...summarizeCert(signerCert), chain: chain.chain.map((c) => oneLine(c.x509.subject)), trustAnchor: anchorReport(chain.anchor) };
  report.certificateValidAtSigningTime = validAt(signerCert, signingTime ? new Date(signingTime) : ctx.now);
  return facts;
}
