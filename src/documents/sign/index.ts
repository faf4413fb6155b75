export { signPdf, signPdfReport, AUDIT_FILE_NAME } from './sign-pdf.js';
export {
  loadSigningIdentity, describeCertificate, parsePkcs12, toPortable, fromPortable,
  type SigningIdentity, type PortableIdentity, type IdentityConfig, type CertificateDescription,
} from './identity.js';
export { assertSignableRequest } from './audit.js';
export type { SignRequest, SignOptions, SignResult, AuditRecord, AuditEvent, SignerInfo } from './types.js';
export { signDocx, DOCX_AUDIT_CONTENT_TYPE, DOCX_AUDIT_RELATIONSHIP } from './docx/sign-docx.js';
