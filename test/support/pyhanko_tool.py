"""pyHanko as a test oracle and as an independent signer, driven by JSON lines on stdin.

Run only through test/support/pyhanko.ts, which starts it with the PYTHONPATH that
../shared/oracles/pyhanko/run --pythonpath gives (pyHanko is never imported into the project).

  {"op": "validate", "file": "x.pdf"}
      -> {"signatures": [{"field", "timestamp", "intact", "valid", "coverage", "level", "docmdp_ok", "docmdp", "why"?}],
          "certification": P of the catalog's /Perms /DocMDP signature, or null}
         (docmdp: the DocMDP permission (1-3) this signature's reference or lock requires, or null)
  {"op": "sign", "in": "a.pdf", "out": "b.pdf", "field": "Sig1", "key": "k.pem", "cert": "c.pem",
   "chain": ["root.pem"], "certify": 1|2|3|null, "box": [x1, y1, x2, y2]|null,
   "lock": {"action": "ALL"|"INCLUDE"|"EXCLUDE", "fields": [...]}|null,
   "tsa_url": "http://..."|null, "pades": "B-T"|"B-LT"|"B-LTA"|null, "trust": ["root.pem"]}
      -> {"ok": true}   (B-LT/B-LTA: pyHanko fetches the revocation data before signing, as it does)
  {"op": "field", "in": "a.pdf", "out": "b.pdf", "field": "Sig1", "box": [x1, y1, x2, y2]|null}
      -> {"ok": true}   (an empty signature field, visible when box is given, added by pyHanko)
  {"op": "timestamp", "in": "a.pdf", "out": "b.pdf", "field": "Ts1", "key": "k.pem", "cert": "c.pem"}
      -> {"ok": true}   (a document time-stamp from pyHanko's in-process test TSA)
Every answer is one JSON line; errors are {"error": "..."}.
"""

import json
import logging
import sys

logging.disable(logging.CRITICAL)

from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter  # noqa: E402
from pyhanko.pdf_utils.reader import PdfFileReader  # noqa: E402
from pyhanko.sign import fields, signers  # noqa: E402
from pyhanko.sign.diff_analysis import DiffResult  # noqa: E402
from pyhanko.sign.timestamps.dummy_client import DummyTimeStamper  # noqa: E402
from pyhanko.sign.validation import validate_pdf_signature, validate_pdf_timestamp  # noqa: E402
from pyhanko.sign.validation.pdf_embedded import read_certification_data  # noqa: E402


def validate(cmd):
    out = []
    with open(cmd['file'], 'rb') as f:
        try:
            reader = PdfFileReader(f, strict=False)
            if reader.encrypted:
                reader.decrypt(b'')
            sigs = reader.embedded_signatures
        except Exception as e:  # noqa: BLE001
            return {'error': f'{type(e).__name__}: {e}'[:300]}
        for s in sigs:
            entry = {'field': s.field_name, 'timestamp': s.sig_object_type == '/DocTimeStamp'}
            try:
                entry['docmdp'] = s.docmdp_level.value if s.docmdp_level is not None else None
            except Exception as e:  # noqa: BLE001
                entry['docmdp_error'] = f'{type(e).__name__}: {e}'[:300]
            try:
                status = (validate_pdf_timestamp if entry['timestamp'] else validate_pdf_signature)(s, skip_diff=False)
                entry.update(
                    intact=status.intact,
                    valid=status.valid,
                    coverage=status.coverage.name,
                    level=status.modification_level.name if status.modification_level is not None else None,
                    docmdp_ok=status.docmdp_ok,
                )
                if status.diff_result is not None and not isinstance(status.diff_result, DiffResult):
                    entry['why'] = str(status.diff_result)[:600]
            except Exception as e:  # noqa: BLE001
                entry['error'] = f'{type(e).__name__}: {e}'[:300]
            out.append(entry)
        try:
            certification = read_certification_data(reader)
        except Exception:  # noqa: BLE001
            certification = None
    return {'signatures': out, 'certification': certification.permission.value if certification else None}


def load_cert(path):
    from asn1crypto import pem, x509

    with open(path, 'rb') as f:
        data = f.read()
    return x509.Certificate.load(pem.unarmor(data)[2] if pem.detect(data) else data)


def sign(cmd):
    signer = signers.SimpleSigner.load(cmd['key'], cmd['cert'], ca_chain_files=cmd.get('chain') or None)
    level = cmd.get('pades')
    timestamper = None
    if cmd.get('tsa_url'):
        from pyhanko.sign.timestamps import HTTPTimeStamper

        timestamper = HTTPTimeStamper(cmd['tsa_url'])
    validation_context = None
    if level in ('B-LT', 'B-LTA'):
        from pyhanko_certvalidator import ValidationContext

        validation_context = ValidationContext(trust_roots=[load_cert(p) for p in cmd.get('trust') or []], allow_fetching=True)
    lock = cmd.get('lock')
    field_spec = fields.SigFieldSpec(
        sig_field_name=cmd['field'],
        box=tuple(cmd['box']) if cmd.get('box') else None,
        field_mdp_spec=fields.FieldMDPSpec(fields.FieldMDPAction[lock['action']], fields=lock.get('fields')) if lock else None,
    )
    meta = signers.PdfSignatureMetadata(
        field_name=cmd['field'],
        certify=bool(cmd.get('certify')),
        docmdp_permissions=fields.MDPPerm(cmd['certify']) if cmd.get('certify') else fields.MDPPerm.FILL_FORMS,
        subfilter=fields.SigSeedSubFilter.PADES if level else None,
        embed_validation_info=validation_context is not None,
        use_pades_lta=level == 'B-LTA',
        validation_context=validation_context,
    )
    with open(cmd['in'], 'rb') as inf, open(cmd['out'], 'wb') as outf:
        writer = IncrementalPdfFileWriter(inf, strict=False)
        signers.PdfSigner(meta, signer, timestamper=timestamper, new_field_spec=field_spec).sign_pdf(writer, output=outf)
    return {'ok': True}


def field(cmd):
    with open(cmd['in'], 'rb') as inf, open(cmd['out'], 'wb') as outf:
        writer = IncrementalPdfFileWriter(inf, strict=False)
        fields.append_signature_field(writer, fields.SigFieldSpec(sig_field_name=cmd['field'], box=tuple(cmd['box']) if cmd.get('box') else None))
        writer.write(outf)
    return {'ok': True}


def timestamp(cmd):
    from asn1crypto import keys, pem, x509

    def load(path):
        with open(path, 'rb') as f:
            data = f.read()
        return pem.unarmor(data)[2] if pem.detect(data) else data

    tsa = DummyTimeStamper(tsa_cert=x509.Certificate.load(load(cmd['cert'])), tsa_key=keys.PrivateKeyInfo.load(load(cmd['key'])))
    with open(cmd['in'], 'rb') as inf, open(cmd['out'], 'wb') as outf:
        writer = IncrementalPdfFileWriter(inf, strict=False)
        signers.PdfTimeStamper(tsa, field_name=cmd['field']).timestamp_pdf(writer, 'sha256', output=outf)
    return {'ok': True}


OPS = {'validate': validate, 'sign': sign, 'field': field, 'timestamp': timestamp}

for line in sys.stdin:
    if not line.strip():
        continue
    cmd = json.loads(line)
    try:
        answer = OPS[cmd['op']](cmd)
    except Exception as e:  # noqa: BLE001
        answer = {'error': f'{type(e).__name__}: {e}'[:500]}
    print(json.dumps(answer), flush=True)
