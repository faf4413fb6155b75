import { createHash } from 'node:crypto';
import { fileTooLarge } from '../../../errors/domain-error.js';
import { TrustStore } from '../../pki/trust.js';
import type { SignerSummary, VerifyOptions } from '../types.js';
import { CONTENT_TYPE, PACKAGE_SOURCE, REL } from '../../ooxml/constants.js';
import { OpcPackage } from '../../ooxml/package.js';
import { relationshipsPartOf } from '../../ooxml/part-names.js';
import { signatureOriginCount } from './scope.js';
import { evaluateDocxSignature } from './signature.js';
import type { DocxSignatureReport, DocxVerifyReport } from './types.js';

export const DEFAULT_MAX_DOCX_BYTES = 50 * 1024 * 1024;
const MAX_SIGNATURES = 100;

interface SignatureParts {
  origin: string | undefined;
  signatures: string[];
  warnings: string[];
}

/** Signatures are the parts the signature origin points to (ECMA-376 Part 2 §13.2). */
function findSignatureParts(pkg: OpcPackage): SignatureParts {
  const warnings: string[] = [];
  const origin = pkg.relationships(PACKAGE_SOURCE).find((r) => r.type === REL.signatureOrigin && !r.external)?.partName;
  const signatures: string[] = [];
  if (origin) {
    for (const rel of pkg.relationships(origin)) {
      if (rel.type !== REL.signature || !rel.partName) continue;
      const name = rel.partName;
      if (!pkg.has(name)) warnings.push(`the signature part ${name} listed by the signature origin is missing`);
      else if (!signatures.includes(name)) signatures.push(name);
    }
  }
  const orphans = pkg.partNames().filter((p) => pkg.contentType(p) === CONTENT_TYPE.xmlSignature && !signatures.includes(p));
  for (const orphan of orphans) warnings.push(`the signature part ${orphan} is not linked from the signature origin; Word ignores it, and so does this check`);
  return { origin: origin && pkg.has(origin) ? origin : undefined, signatures: signatures.slice(0, MAX_SIGNATURES), warnings };
}

function uncoveredParts(pkg: OpcPackage, found: SignatureParts, signatures: DocxSignatureReport[]): string[] {
  const infrastructure = new Set(found.signatures);
  if (found.origin) {
    infrastructure.add(found.origin);
    infrastructure.add(relationshipsPartOf(found.origin));
  }
  const covered = new Set(signatures.flatMap((s) => s.parts.map((p) => p.part)));
  return pkg
    .partNames()
    .filter((p) => !infrastructure.has(p) && !covered.has(p))
    .sort();
}

const signerSummary = (s: DocxSignatureReport): SignerSummary => ({
  name: s.signer?.commonName ?? null,
  email: s.signer?.email ?? null,
  organization: s.signer?.organization ?? null,
});

function summaryReason(signatures: DocxSignatureReport[]): string {
  if (!signatures.length) return 'The document has no signatures.';
  const failing = signatures.find((s) => s.indication !== 'TOTAL_PASSED');
  if (failing) {
    const why = failing.errors[0] ?? failing.subIndication ?? 'it did not pass validation';
    return `Signature ${failing.part} is not valid (${failing.indication}${failing.subIndication ? `/${failing.subIndication}` : ''}): ${why}.`;
  }
  return signatures.length === 1
    ? 'The signature is valid and trusted, and every part it signs is unchanged.'
    : `All ${signatures.length} signatures are valid and trusted, and every part they sign is unchanged.`;
}

const bySigningTime = (a: DocxSignatureReport, b: DocxSignatureReport) =>
  (a.signingTime ?? '').localeCompare(b.signingTime ?? '') || a.part.localeCompare(b.part);

/**
 * Verifies every OOXML (XML-DSig) signature of a DOCX: the digest of each signed part (with the
 * RelationshipTransform and C14N its reference asks for), the signature over the canonical
 * SignedInfo, the X.509 chain against `trustRoots`, and which parts no signature covers.
 * Throws DomainError: FILE_TOO_LARGE, INVALID_FILE_FORMAT (not a DOCX / zip refused), ENCRYPTED_DOCUMENT.
 */
export function verifyDocx(input: Uint8Array, options: VerifyOptions): DocxVerifyReport {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_DOCX_BYTES;
  if (input.length > maxBytes) throw fileTooLarge(`The DOCX is larger than ${Math.floor(maxBytes / 1024 / 1024)} MiB; send a smaller file.`);
  // A damaged .rels or [Content_Types].xml is reported through the signatures it breaks, not refused.
  const pkg = OpcPackage.open(input, { tolerant: true });
  const origins = signatureOriginCount(pkg);
  const ctx = {
    pkg,
    trust: TrustStore.forVerification(options.trustRoots, options.anchors),
    now: options.now ?? new Date(),
    ...(origins > 1 && { packageProblem: `the package has ${origins} signature origins, and readers disagree on which signatures it holds` }),
  };
  const found = findSignatureParts(pkg);
  const signatures = found.signatures.map((part) => evaluateDocxSignature(part, ctx)).sort(bySigningTime);
  const uncovered = uncoveredParts(pkg, found, signatures);
  const last = signatures.at(-1);
  return {
    valid: signatures.length > 0 && signatures.every((s) => s.indication === 'TOTAL_PASSED'),
    reason: summaryReason(signatures),
    signer: last ? signerSummary(last) : null,
    signers: signatures.map(signerSummary),
    document: {
      format: 'docx',
      sha256: createHash('sha256').update(input).digest('hex'),
      signatureCount: signatures.length,
      parts: pkg.partNames().length,
      uncoveredParts: uncovered,
      warnings: found.warnings,
    },
    signatures,
  };
}
