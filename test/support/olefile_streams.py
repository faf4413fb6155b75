"""Independent CFB reader for the differential tests: python3-olefile (Debian) reads each file given.

Prints one JSON object: {path: {"streams": {name: hex}} | {"error": text}} for the root streams,
olefile told to raise on every defect it notices (DEFECT_INCORRECT), so a file it reads is one it
found consistent.
"""
import json
import sys

import olefile

result = {}
for path in sys.argv[1:]:
    try:
        with olefile.OleFileIO(path, raise_defects=olefile.DEFECT_INCORRECT) as ole:
            streams = {}
            for entry in ole.listdir(streams=True, storages=False):
                if len(entry) == 1:
                    streams[entry[0]] = ole.openstream(entry[0]).read().hex()
            result[path] = {"streams": streams}
    except Exception as exc:  # any refusal counts as "not read"
        result[path] = {"error": f"{type(exc).__name__}: {exc}"}
json.dump(result, sys.stdout)
