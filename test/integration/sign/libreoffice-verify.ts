import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * LibreOffice as an independent verifier of OOXML package signatures: a private soffice
 * (own profile, own pipe) asked over UNO (lo-verify-docx.py, run by the system python that
 * has the uno module) for DocumentDigitalSignatures.verifyDocumentContentSignatures.
 */
export interface LibreOfficeSignature {
  valid: boolean;
  /** css.security.CertificateValidity bits: 0 OK, 1 UNKNOWN (no trust information), 2 UNTRUSTED, 16 INVALID… */
  certificateStatus: number;
  certificateStatusNames: string[];
  partial: boolean;
  signer: string | null;
  signerSha256: string | null;
  signedAt: string;
}

const SCRIPT = path.join(import.meta.dirname, 'lo-verify-docx.py');

/** Verifies each DOCX with one soffice run; `nssDir` (an NSS database) lets LibreOffice judge certificate trust. */
export async function libreOfficeVerify(documents: Buffer[], nssDir?: string): Promise<LibreOfficeSignature[][]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docproc-lo-sign-'));
  const pipe = `docproc-sign-${process.pid}-${Date.now()}`;
  const env = { ...process.env, ...(nssDir ? { MOZILLA_CERTIFICATE_FOLDER: `sql:${nssDir}` } : {}) };
  const soffice = spawn('soffice', ['--headless', '--invisible', '--norestore', '--nologo', `-env:UserInstallation=file://${dir}/profile`, `--accept=pipe,name=${pipe};urp;`], {
    stdio: 'ignore', detached: true, env,
  });
  try {
    const files = documents.map((doc, i) => {
      const file = path.join(dir, `doc-${i}.docx`);
      writeFileSync(file, doc);
      return file;
    });
    const { stdout } = await promisify(execFile)('/usr/bin/python3', [SCRIPT, pipe, ...files], { timeout: 120_000, env });
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
  }
}
