"""Asks LibreOffice (UNO, a private soffice listening on a pipe) to verify the signatures of PDF
files. Run with /usr/bin/python3 (the interpreter that has the uno module).
Usage: lo-verify-pdf.py <pipe-name> <file.pdf>...   Prints one JSON object per file.

DocumentDigitalSignatures.verifyDocumentContentSignatures(None, stream): with no storage and an
input stream, LibreOffice's signature manager treats the input as "not ZIP based" and runs its PDF
signature verification (xmlsecurity PDFSignatureHelper) over the whole byte stream."""
import hashlib
import json
import sys
import time

import uno

CERTIFICATE_STATUS = {0: "OK", 1: "UNKNOWN", 2: "UNTRUSTED", 4: "TIME_INVALID", 8: "REVOKED", 16: "INVALID"}


def connect(pipe):
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    deadline = time.time() + 60
    while True:
        try:
            return resolver.resolve("uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe)
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(0.3)


def describe(info):
    status = info.CertificateStatus
    signer = info.Signer
    return {
        "valid": bool(info.SignatureIsValid),
        "certificateStatus": status,
        "certificateStatusNames": [n for bit, n in CERTIFICATE_STATUS.items() if bit and status & bit] or ["OK"],
        "partial": bool(info.PartialDocumentSignature),
        "signer": signer.SubjectName if signer else None,
        "signerSha256": hashlib.sha256(bytes(signer.Encoded.value)).hexdigest() if signer else None,
        # LibreOffice 7.4 leaves SignatureDate 0 for PDF signatures.
        "signedAt": "%04d-%02d-%02d" % (info.SignatureDate // 10000, info.SignatureDate // 100 % 100, info.SignatureDate % 100) if info.SignatureDate else None,
    }


def verify(ctx, path):
    smgr = ctx.ServiceManager
    files = smgr.createInstanceWithContext("com.sun.star.ucb.SimpleFileAccess", ctx)
    stream = files.openFileRead(uno.systemPathToFileUrl(path))
    try:
        signatures = smgr.createInstanceWithContext("com.sun.star.security.DocumentDigitalSignatures", ctx)
        return [describe(info) for info in signatures.verifyDocumentContentSignatures(None, stream)]
    finally:
        stream.closeInput()


def main():
    ctx = connect(sys.argv[1])
    for path in sys.argv[2:]:
        try:
            print(json.dumps({"file": path, "signatures": verify(ctx, path)}))
        except Exception as err:  # report, keep going with the other files
            print(json.dumps({"file": path, "error": repr(err)}))
    sys.stdout.flush()


main()
