import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { officePipeFiles } from '../../../src/office/office-process.js';

/**
 * LibreOffice as an independent verifier of document signatures: a private soffice (own
 * profile, own pipe) asked over UNO by a script run with the system python that has the uno
 * module, for DocumentDigitalSignatures.verifyDocumentContentSignatures.
 * - DOCX (lo-verify-docx.py): OOXML package signatures, checked by xmlsec.
 * - PDF (lo-verify-pdf.py): no storage, the file as an input stream → LibreOffice's PDF
 *   signature verification (xmlsecurity's PDFSignatureHelper, NSS for the CMS).
 */
export interface LibreOfficeSignature {
  valid: boolean;
  /** css.security.CertificateValidity bits: 0 OK, 1 UNKNOWN (no trust information), 2 UNTRUSTED, 16 INVALID… */
  certificateStatus: number;
  certificateStatusNames: string[];
  /** DOCX: not every part is signed. PDF: a later revision that no later signature covers (LibreOffice's IsCompleteSignature). */
  partial: boolean;
  signer: string | null;
  signerSha256: string | null;
  /** YYYY-MM-DD; null when LibreOffice gives no date (7.4 never does for PDF signatures). */
  signedAt: string | null;
}

const DOCX_SCRIPT = path.join(import.meta.dirname, 'lo-verify-docx.py');
const PDF_SCRIPT = path.join(import.meta.dirname, 'lo-verify-pdf.py');

/** Verifies each DOCX with one soffice run; `nssDir` (an NSS database) lets LibreOffice judge certificate trust. */
export function libreOfficeVerify(documents: Buffer[], nssDir?: string): Promise<LibreOfficeSignature[][]> {
  return runVerifier(DOCX_SCRIPT, 'docx', documents, nssDir);
}

/** Verifies each PDF's signatures with one soffice run, in the order the PDF's signature fields are found. */
export function libreOfficeVerifyPdf(documents: Buffer[], nssDir?: string): Promise<LibreOfficeSignature[][]> {
  return runVerifier(PDF_SCRIPT, 'pdf', documents, nssDir);
}

async function runVerifier(script: string, extension: string, documents: Buffer[], nssDir?: string): Promise<LibreOfficeSignature[][]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docproc-lo-sign-'));
  const pipe = `docproc-sign-${process.pid}-${Date.now()}`;
  // TMPDIR inside the private dir: LibreOffice's own lu*.tmp scratch files go away with it.
  const env = { ...process.env, TMPDIR: dir, ...(nssDir ? { MOZILLA_CERTIFICATE_FOLDER: `sql:${nssDir}` } : {}) };
  const profileUrl = pathToFileURL(path.join(dir, 'profile')).href;
  const soffice = spawn('soffice', ['--headless', '--invisible', '--norestore', '--nologo', `-env:UserInstallation=${profileUrl}`, `--accept=pipe,name=${pipe};urp;`], {
    stdio: 'ignore', detached: true, env,
  });
  try {
    const files = documents.map((doc, i) => {
      const file = path.join(dir, `doc-${i}.${extension}`);
      writeFileSync(file, doc);
      return file;
    });
    const { stdout } = await promisify(execFile)('/usr/bin/python3', [script, pipe, ...files], { timeout: 120_000, env });
    return stdout.trim().split('\n').map((line) => {
      const result = JSON.parse(line) as { signatures?: LibreOfficeSignature[]; error?: string };
      if (result.error) throw new Error(`LibreOffice could not check the document: ${result.error}`);
      return result.signatures!;
    });
  } finally {
    // soffice is a wrapper script around soffice.bin: end the whole process group.
    try {
      process.kill(-soffice.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
    rmSync(dir, { recursive: true, force: true });
    removePipeSockets(pipe, profileUrl);
  }
}

/**
 * A killed soffice leaves its pipe sockets behind: the UNO pipe we named and the single-instance
 * pipe named after its profile (officePipeFiles), in /tmp (or the temp dir).
 */
function removePipeSockets(pipe: string, profileUrl: string): void {
  for (const file of officePipeFiles(pipe, profileUrl)) {
    for (const folder of new Set(['/tmp', tmpdir()])) rmSync(path.join(folder, path.basename(file)), { force: true });
  }
}
