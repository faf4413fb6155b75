"""Asks LibreOffice (UNO, a private soffice listening on a pipe) to verify the OOXML package
signatures of DOCX files. Run with /usr/bin/python3 (the interpreter that has the uno module).
Usage: lo-verify-docx.py <pipe-name> <file.docx>...   Prints one JSON object per file."""
import hashlib
import json
import sys
import time

import uno
from com.sun.star.beans import PropertyValue
from com.sun.star.embed.ElementModes import READ

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


def prop(name, value):
    p = PropertyValue()
    p.Name = name
    p.Value = value
    return p


def verify(ctx, path):
    smgr = ctx.ServiceManager
    factory = smgr.createInstanceWithContext("com.sun.star.embed.StorageFactory", ctx)
    url = uno.systemPathToFileUrl(path)
    media = uno.Any("[]com.sun.star.beans.PropertyValue", (prop("StorageFormat", "ZipFormat"),))
    storage = uno.invoke(factory, "createInstanceWithArguments", ((url, READ, media),))
    signatures = smgr.createInstanceWithContext("com.sun.star.security.DocumentDigitalSignatures", ctx)
    infos = signatures.verifyDocumentContentSignatures(storage, None)
    out = []
    for info in infos:
        status = info.CertificateStatus
        out.append({
            "valid": bool(info.SignatureIsValid),
            "certificateStatus": status,
            "certificateStatusNames": [n for bit, n in CERTIFICATE_STATUS.items() if bit and status & bit] or ["OK"],
            "partial": bool(info.PartialDocumentSignature),
            "signer": info.Signer.SubjectName if info.Signer else None,
            "signerSha256": hashlib.sha256(bytes(info.Signer.Encoded.value)).hexdigest() if info.Signer else None,
            "signedAt": "%04d-%02d-%02d" % (info.SignatureDate // 10000, info.SignatureDate // 100 % 100, info.SignatureDate % 100),
        })
    storage.dispose()
    return out


def main():
    ctx = connect(sys.argv[1])
    for path in sys.argv[2:]:
        try:
            print(json.dumps({"file": path, "signatures": verify(ctx, path)}))
        except Exception as err:  # report, keep going with the other files
            print(json.dumps({"file": path, "error": repr(err)}))
    sys.stdout.flush()


main()
