import type { Warning } from '../warnings.js';
/** The engine's view of a sign request (the route maps JSON or multipart onto it). */
export interface SignerInfo {
  email: string;
  name: string;
  ip?: string;
  userAgent?: string;
  /** Other details the caller gave (title, company, …): kept and printed as given. */
  [detail: string]: string | number | boolean | null | undefined;
}

/** ready, scroll, field_change and submit are SuperDoc's; any other name is recorded as given. */
export type AuditEventType = string;

export interface AuditEvent {
  type: AuditEventType;
  timestamp: string;
  data?: Record<string, unknown>;
}

export interface RectAppearance {
  /** 1-based page number. */
  page: number;
  /** PDF points from the bottom-left corner of the page. */
  x: number;
  y: number;
  width: number;
  height: number;
  /** PNG or JPEG drawn in the box beside the text (see pdf/appearance-image.ts for the limits). */
  image?: Uint8Array;
}

export interface FieldAppearance {
  /** Name of an existing, empty signature field to fill. */
  field: string;
  /** PNG or JPEG drawn in the field's box beside the text, when the field is visible. */
  image?: Uint8Array;
}

export type CertifyPermission = 'no-changes' | 'form-filling' | 'annotations';

/** DocMDP /P value of each certification level. */
export const DOC_MDP_PERMISSION: Record<CertifyPermission, 1 | 2 | 3> = { 'no-changes': 1, 'form-filling': 2, annotations: 3 };

export interface SignRequest {
  signer: SignerInfo;
  auditTrail: AuditEvent[];
  eventId?: string;
  metadata?: Record<string, unknown>;
  /** Audit-trail certificate page; on unless enabled === false. */
  certificate?: { enabled?: boolean };
  reason?: string;
  location?: string;
  contactInfo?: string;
  appearance?: RectAppearance | FieldAppearance;
  /**
   * Makes this a certification signature (DocMDP, ISO 32000-1 §12.8.2.2) allowing, after it: no
   * changes (P=1), form filling and signing (P=2), or those and annotations (P=3). Only the first
   * signature of a document can certify it.
   */
  certify?: CertifyPermission;
  /** Set by the route: correlates the audit record with logs. */
  requestId?: string;
  /** Shown as the document title when the PDF has none (e.g. the uploaded file name). */
  documentName?: string;
}

export interface SignOptions {
  /** RFC 3161 TSA (operator configuration): adds a signature timestamp (PAdES B-T). */
  tsa?: { url: string; timeoutMs?: number; allowPrivateAddresses?: boolean };
  /** Signing time; defaults to now. */
  now?: Date;
  /** SHA-256 (hex) of the document as the caller sent it, when the route converted it first (DOCX → PDF). */
  receivedSha256?: string;
  /** When given, filled with the milliseconds each signing stage took (bench/sign.ts prints them). */
  stages?: Record<string, number>;
}

export interface SignResult {
  document: Buffer;
  warnings: Warning[];
  audit: AuditRecord;
}

export interface AuditRecord {
  service: 'docproc';
  schemaVersion: 1;
  requestId?: string;
  document: { title: string; sha256: string; bytes: number };
  signer: SignerInfo;
  events: AuditEvent[];
  eventId?: string;
  metadata?: Record<string, unknown>;
  signedAt: string;
  signature: {
    reason?: string;
    location?: string;
    certificateSubject: string;
    certificateIssuer: string;
    certificateFingerprint: string;
    developmentCertificate: boolean;
    timestampAuthority?: string;
  };
}
