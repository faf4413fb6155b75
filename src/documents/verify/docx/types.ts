import type { TimestampReport } from '../../pki/timestamp.js';
import type { Indication, SignatureSigner, SignerSummary, SubIndication } from '../types.js';

/** One package part listed in a signature's Manifest. */
export interface DocxSignedPart {
  /** Part name, e.g. "/word/document.xml". */
  part: string;
  /** Content type the signature recorded for the part. */
  contentType: string | null;
  digestAlgorithm: string | null;
  /** Reference transforms in order (e.g. RelationshipTransform, C14N 1.0). */
  transforms: string[];
  /** Relationship parts signed through the RelationshipTransform: the relationship Ids covered. */
  relationships: string[] | null;
  /** The part is present, has the recorded content type, and its digest matches. */
  intact: boolean;
  error: string | null;
}

export interface DocxSignedObject {
  uri: string;
  type: string | null;
  intact: boolean;
}

export interface DocxSignatureReport {
  /** The signature part, e.g. "/_xmlsignatures/sig1.xml". */
  part: string;
  /** Id attribute of ds:Signature. */
  id: string | null;
  /** Claimed signing time (XAdES SigningTime, else the OPC SignatureTime). */
  signingTime: string | null;
  /** The signer's stated purpose (Office SignatureComments). */
  reason: string | null;
  signer: SignatureSigner | null;
  digestAlgorithm: string | null;
  signatureAlgorithm: string | null;
  canonicalization: string | null;
  /** The signature carries XAdES signed properties that it signs. */
  xades: boolean;
  intact: boolean;
  cryptoValid: boolean;
  trusted: boolean;
  certificateValidAtSigningTime: boolean;
  /** XAdES SignatureTimeStamp, when present. */
  timestamp: TimestampReport | null;
  /** Same-document references of SignedInfo (package object, Office object, XAdES properties). */
  signedObjects: DocxSignedObject[];
  /** Package parts listed in the signed Manifest. */
  parts: DocxSignedPart[];
  indication: Indication;
  subIndication: SubIndication | null;
  errors: string[];
  warnings: string[];
}

export interface DocxVerifyReport {
  valid: boolean;
  reason: string;
  signer: SignerSummary | null;
  signers: SignerSummary[];
  document: {
    format: 'docx';
    sha256: string;
    signatureCount: number;
    /** Number of parts in the package ([Content_Types].xml excluded). */
    parts: number;
    /** Parts no signature covers (signature parts and the signature origin excluded). */
    uncoveredParts: string[];
    warnings: string[];
  };
  signatures: DocxSignatureReport[];
}
