import { createHash } from 'node:crypto';
import { validationError } from '../../errors/domain-error.js';
import type { PdfView } from '../pdf/document.js';
import { PdfString, textString, type PdfDict } from '../pdf/objects.js';
import type { SigningIdentity } from './identity.js';
import type { AuditEvent, AuditRecord, SignOptions, SignRequest } from './types.js';

/** Checks the parts of a sign request JSON Schema cannot express well. */
export function assertSignableRequest(request: SignRequest): void {
  if (!Array.isArray(request.auditTrail) || !request.auditTrail.some((e) => e?.type === 'submit')) {
    throw validationError('The audit trail must contain at least one "submit" event (the signer\'s act of signing).', [
      { field: 'auditTrail', issue: 'no event of type "submit"' },
    ]);
  }
  const name = request.signer?.name?.trim() ?? '';
  if (name.length < 2 || name.length > 255) {
    throw validationError('signer.name must be 2 to 255 characters.', [{ field: 'signer.name', issue: 'length' }]);
  }
  if (!/^[^\s@]+@[^\s@]+$/.test(request.signer?.email ?? '')) {
    throw validationError('signer.email must be an e-mail address.', [{ field: 'signer.email', issue: 'format' }]);
  }
}

export function buildAuditRecord(
  request: SignRequest, document: Buffer, identity: SigningIdentity, signedAt: Date, title: string, options: SignOptions,
): AuditRecord {
  const cert = identity.certificate;
  return {
    service: 'docproc',
    schemaVersion: 1,
    requestId: request.requestId,
    document: {
      title,
      sha256: options.receivedSha256 ?? createHash('sha256').update(document).digest('hex'),
      bytes: document.length,
    },
    signer: { ...request.signer },
    events: request.auditTrail.map((e) => ({ ...e })),
    eventId: request.eventId,
    metadata: request.metadata,
    signedAt: signedAt.toISOString(),
    signature: {
      reason: request.reason,
      location: request.location,
      certificateSubject: cert.subject.split('\n').join(', '),
      certificateIssuer: cert.issuer.split('\n').join(', '),
      certificateFingerprint: cert.fingerprint256,
      developmentCertificate: identity.isDevelopment,
      timestampAuthority: options.tsa?.url,
    },
  };
}

/** One-line summary of an event's data for the printed trail (the JSON attachment has it all). */
export function summariseEventData(event: AuditEvent, maxLength = 300): string {
  if (!event.data || Object.keys(event.data).length === 0) return '';
  const parts = Object.entries(event.data).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const text = parts.join(', ');
  return text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
}

/**
 * The signature dictionary key holding the signature's audit record: a direct entry, so the record
 * is covered by that signature's /ByteRange and changes nothing an earlier signature covers.
 */
export const AUDIT_TRAIL_KEY = 'DocprocAuditTrail';

/** The record as compact JSON in a PDF text string (non-ASCII escaped as \uXXXX, so the string stays ASCII). */
export function auditTrailString(record: AuditRecord): PdfString {
  return textString(JSON.stringify(record).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

const MAX_AUDIT_TRAIL_BYTES = 4 * 1024 * 1024;

/** The audit record a signature dictionary carries (as signed), or null when it has none or it is not JSON. */
export function readAuditTrail(view: PdfView, signature: PdfDict): Record<string, unknown> | null {
  const value = view.resolve(signature.get(AUDIT_TRAIL_KEY));
  if (!(value instanceof PdfString) || value.bytes.length > MAX_AUDIT_TRAIL_BYTES) return null;
  try {
    const record: unknown = JSON.parse(value.text());
    return record !== null && typeof record === 'object' && !Array.isArray(record) ? (record as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
