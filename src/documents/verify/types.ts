import type { PortableAnchor, TrustAnchorReport } from '../pki/trust.js';
import type { CertSummary } from '../pki/certificates.js';
import type { TimestampReport } from '../pki/timestamp.js';
import type { CertRevocation } from '../pki/revocation/check.js';

export type Coverage = 'entireFile' | 'entireRevision' | 'unclear';
/**
 * What changed after a signature, the most significant kind first found by use: `archival` is what
 * PAdES allows even after a no-changes certification (DSS/VRI validation data, document
 * time-stamps, document metadata, empty invisible signature fields); `signatures` adds signatures
 * and visible signature fields; `formFilling` field values and appearances; `annotations` added,
 * changed or removed annotations; `other` is anything no rule explains.
 */
export type ModificationLevel = 'none' | 'archival' | 'signatures' | 'formFilling' | 'annotations' | 'other';
export type Indication = 'TOTAL_PASSED' | 'TOTAL_FAILED' | 'INDETERMINATE';
export type SubIndication =
  | 'FORMAT_FAILURE'
  | 'HASH_FAILURE'
  | 'SIG_CRYPTO_FAILURE'
  | 'NOT_YET_VALID'
  | 'EXPIRED'
  | 'SIGNED_DATA_NOT_FOUND'
  | 'NO_SIGNING_CERTIFICATE_FOUND'
  | 'NO_CERTIFICATE_CHAIN_FOUND'
  | 'OUT_OF_BOUNDS_NO_POE'
  | 'REVOKED'
  | 'REVOKED_NO_POE'
  | 'TRY_LATER'
  | 'CRYPTO_CONSTRAINTS_FAILURE_NO_POE';

export interface SignerSummary {
  name: string | null;
  email: string | null;
  organization: string | null;
}

export interface SignatureSigner extends CertSummary {
  /** Subjects of the chain as built (signer first, trust anchor last when trusted). */
  chain: string[];
  /** The anchor the chain ends at and where its trust comes from; null when not trusted. */
  trustAnchor: TrustAnchorReport | null;
}


export interface DocMdpReport {
  permission: 1 | 2 | 3;
  /** Later changes stay within what the permission allows. */
  respected: boolean;
}

/** The form fields a signature locked (FieldMDP, ISO 32000-1 §12.8.2.4). */
export interface FieldMdpReport {
  action: 'All' | 'Include' | 'Exclude';
  fields: string[];
  /** No locked field changed later. */
  respected: boolean;
}

export interface SignatureReport {
  field: string;
  /** False for an empty signature field (no /V), which is reported but never passes. */
  signed: boolean;
  subFilter: string | null;
  /** Certification signature, approval signature, or document time-stamp. */
  kind: 'approval' | 'certification' | 'documentTimestamp';
  signingTime: string | null;
  reason: string | null;
  location: string | null;
  byteRange: number[] | null;
  signer: SignatureSigner | null;
  digestAlgorithm: string | null;
  signatureAlgorithm: string | null;
  intact: boolean;
  cryptoValid: boolean;
  trusted: boolean;
  certificateValidAtSigningTime: boolean;
  timestamp: TimestampReport | null;
  /** Revocation status of the signer's chain (signer first, the trust anchor not included). */
  revocation: CertRevocation[];
  coverage: Coverage;
  modificationsAfter: ModificationLevel;
  docMdp: DocMdpReport | null;
  fieldMdp: FieldMdpReport | null;
  /** The docproc audit record in the signature dictionary as signed (/DocprocAuditTrail), or null. */
  auditTrail: Record<string, unknown> | null;
  indication: Indication;
  subIndication: SubIndication | null;
  errors: string[];
  warnings: string[];
}

export interface VerifyReport {
  valid: boolean;
  reason: string;
  /** The last signer; document time-stamps are never signers. */
  signer: SignerSummary | null;
  signers: SignerSummary[];
  document: {
    format: 'pdf';
    pages: number;
    sha256: string;
    revisions: number;
    signatureCount: number;
    timestampCount: number;
    modifiedAfterLastSignature: boolean;
    /** Structural problems found while reading the file and how they were recovered. */
    warnings: string[];
  };
  /** Signed signatures (approval and certification), in signing order. */
  signatures: SignatureReport[];
  /** Document time-stamps (kind documentTimestamp), in order: proofs of existence, not signatures. */
  timestamps: SignatureReport[];
  /** Names of signature fields nobody has signed yet (they are not failed signatures). */
  unsignedFields: string[];
}

export interface VerifyOptions {
  /** PEM certificates (each string may hold several): the TRUST_ROOTS bundle plus the service's signing root. */
  trustRoots: string[];
  /** Anchors with their source (TRUST_ROOTS, the request's trustRoots, trusted lists, the system store …), before trustRoots. */
  anchors?: PortableAnchor[];
  /** Validation time (defaults to now). */
  now?: Date;
  /** Largest input accepted, in bytes. */
  maxBytes?: number;
}

export interface OnlineVerifyOptions extends VerifyOptions {
  /** Fetches OCSP responses and CRLs for certificates the PDF carries no revocation data for. */
  fetchRevocation?: import('../pki/revocation/check.js').RevocationFetcher;
}
