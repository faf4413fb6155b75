"""Asks LibreOffice (UNO, a private soffice listening on a pipe) to verify the OOXML package
signatures of DOCX files. Run with /usr/bin/python3 (the interpreter that has the uno module).
Usage: lo-verify-docx.py <pipe-name> <file.docx>...   Prints one JSON object per file."""
import uno
from com.sun.star.beans import PropertyValue
from com.sun.star.embed.ElementModes import READ

from lo_uno import describe, run


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
    out = [describe(info) for info in infos]
    storage.dispose()
    return out


run(verify)
