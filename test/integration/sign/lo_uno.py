"""What the LibreOffice signature checks share: connecting to a private soffice over a pipe,
describing a DocumentSignatureInformation as JSON, and the per-file output loop.
Imported by lo-verify-docx.py and lo-verify-pdf.py (run with /usr/bin/python3, which has uno)."""
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
    date = info.SignatureDate
    return {
        "valid": bool(info.SignatureIsValid),
        "certificateStatus": status,
        "certificateStatusNames": [n for bit, n in CERTIFICATE_STATUS.items() if bit and status & bit] or ["OK"],
        "partial": bool(info.PartialDocumentSignature),
        "signer": signer.SubjectName if signer else None,
        "signerSha256": hashlib.sha256(bytes(signer.Encoded.value)).hexdigest() if signer else None,
        # LibreOffice 7.4 leaves SignatureDate 0 for PDF signatures.
        "signedAt": "%04d-%02d-%02d" % (date // 10000, date // 100 % 100, date % 100) if date else None,
    }


def run(verify):
    """Usage: <script> <pipe-name> <file>... ; prints one JSON object per file."""
    ctx = connect(sys.argv[1])
    for path in sys.argv[2:]:
        try:
            print(json.dumps({"file": path, "signatures": verify(ctx, path)}))
        except Exception as err:  # report, keep going with the other files
            print(json.dumps({"file": path, "error": repr(err)}))
    sys.stdout.flush()
