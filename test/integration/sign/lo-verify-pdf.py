"""Asks LibreOffice (UNO, a private soffice listening on a pipe) to verify the signatures of PDF
files. Run with /usr/bin/python3 (the interpreter that has the uno module).
Usage: lo-verify-pdf.py <pipe-name> <file.pdf>...   Prints one JSON object per file.

DocumentDigitalSignatures.verifyDocumentContentSignatures(None, stream): with no storage and an
input stream, LibreOffice's signature manager treats the input as "not ZIP based" and runs its PDF
signature verification (xmlsecurity PDFSignatureHelper) over the whole byte stream."""
import uno

from lo_uno import describe, run


def verify(ctx, path):
    smgr = ctx.ServiceManager
    files = smgr.createInstanceWithContext("com.sun.star.ucb.SimpleFileAccess", ctx)
    stream = files.openFileRead(uno.systemPathToFileUrl(path))
    try:
        signatures = smgr.createInstanceWithContext("com.sun.star.security.DocumentDigitalSignatures", ctx)
        return [describe(info) for info in signatures.verifyDocumentContentSignatures(None, stream)]
    finally:
        stream.closeInput()


run(verify)
