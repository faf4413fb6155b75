import { X509Certificate } from 'node:crypto';
import * as pkijs from 'pkijs';
import { decodeBer } from './asn1.js';

/** A certificate kept in both shapes: Node's (fast signature checks) and pkijs' (names, extensions). */
export interface Cert {
  der: Buffer;
  x509: X509Certificate;
  parsed: pkijs.Certificate;
}

export interface CertSummary {
  commonName: string | null;
  email: string | null;
  organization: string | null;
  serialNumber: string;
  subject: string;
  issuer: string;
  notBefore: string;
  notAfter: string;
}

/** Parses a DER certificate; pass `parsed` when pkijs already decoded it (saves a second decode). */
export function parseCert(der: Uint8Array, parsed?: pkijs.Certificate): Cert | undefined {
  try {
    const buffer = Buffer.from(der);
    const x509 = new X509Certificate(buffer);
    // OpenSSL parses a certificate whose key it cannot decode and throws only when the key is read:
    // such a certificate can verify nothing, so it is no certificate at all here.
    void x509.publicKey;
    if (parsed) return { der: buffer, x509, parsed };
    const asn1 = decodeBer(buffer);
    if (asn1.offset === -1) return undefined;
    return { der: buffer, x509, parsed: new pkijs.Certificate({ schema: asn1.result }) };
  } catch {
    return undefined;
  }
}

const first = (value: unknown): string | null => {
  if (Array.isArray(value)) return value.length ? String(value[0]) : null;
  return typeof value === 'string' ? value : null;
};

/** A distinguished name as Node prints it (one attribute a line), on one line. */
export const oneLine = (dn: string) => dn.split('\n').filter(Boolean).join(', ');

export function summarizeCert(cert: Cert): CertSummary {
  const legacy = cert.x509.toLegacyObject() as unknown as { subject?: Record<string, unknown> };
  const subject = legacy.subject ?? {};
  const sanEmail = /email:([^,\s]+)/.exec(cert.x509.subjectAltName ?? '')?.[1] ?? null;
  return {
    commonName: first(subject.CN),
    email: first(subject.emailAddress) ?? sanEmail,
    organization: first(subject.O),
    serialNumber: cert.x509.serialNumber.toLowerCase(),
    subject: oneLine(cert.x509.subject),
    issuer: oneLine(cert.x509.issuer),
    notBefore: new Date(cert.x509.validFrom).toISOString(),
    notAfter: new Date(cert.x509.validTo).toISOString(),
  };
}

export function validAt(cert: Cert, when: Date): boolean {
  const t = when.getTime();
  return t >= new Date(cert.x509.validFrom).getTime() && t <= new Date(cert.x509.validTo).getTime();
}

/** The certificate's extension `oid`, if it carries it. */
export const extensionOf = (cert: Cert, oid: string): pkijs.Extension | undefined => cert.parsed.extensions?.find((e) => e.extnID === oid);

/** The certificate's extended key usage names `oid`. */
export function hasExtendedKeyUsage(cert: Cert, oid: string): boolean {
  return (extensionOf(cert, '2.5.29.37')?.parsedValue as pkijs.ExtKeyUsage | undefined)?.keyPurposes?.includes(oid) === true;
}

/** `child` names `issuer` as its issuer (OpenSSL's checkIssued would also judge key usage: the chain builder does, saying why). */
export const namesIssuer = (child: Cert, issuer: Cert): boolean => child.x509.issuer === issuer.x509.subject;

/** `issuer` names and signed `child`. */
export function issuedBy(child: Cert, issuer: Cert): boolean {
  try {
    return namesIssuer(child, issuer) && child.x509.verify(issuer.x509.publicKey);
  } catch {
    return false;
  }
}
