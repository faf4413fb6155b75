#!/usr/bin/python3
"""
The baseline of bench/convert-docx.ts: LibreOffice doing nothing but the bare job, with none of
docproc's code. It starts its own soffice (private profile, private pipe, no jail), loads each
document read-only and exports it to PDF, in a loop.

  python3 bare-uno.py SOFFICE WORK_DIR INPUT...

Protocol (JSON lines): after one warm-up conversion of every input it prints {"ready": true}.
Each line it then reads is a command:
  {"op": "one", "input": i}        -> {"ms": ms}                              (one conversion)
  {"op": "latency", "rounds": N}   -> {"latencies": [[ms, ...] per input]}  (one at a time)
  {"op": "loop", "seconds": S}     -> {"docs": n, "seconds": s}             (round robin)
EOF on stdin ends it (soffice is terminated).
"""
import json
import os
import subprocess
import sys
import time

import uno
from com.sun.star.beans import PropertyValue
from com.sun.star.connection import NoConnectException


def prop(name, value):
    p = PropertyValue()
    p.Name = name
    p.Value = value
    return p


def start(soffice, work_dir):
    pipe = "bare-uno-%d" % os.getpid()
    profile = uno.systemPathToFileUrl(os.path.join(work_dir, "profile"))
    office = subprocess.Popen(
        [soffice, "-env:UserInstallation=" + profile, "--headless", "--invisible", "--nologo", "--nodefault",
         "--norestore", "--nolockcheck", "--accept=pipe,name=%s;urp;StarOffice.ComponentContext" % pipe],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    deadline = time.monotonic() + 90
    while True:
        try:
            ctx = resolver.resolve("uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe)
            return office, ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
        except NoConnectException:
            if time.monotonic() > deadline or office.poll() is not None:
                raise
            time.sleep(0.1)


PDF_FILTERS = {".xlsx": "calc_pdf_Export", ".pptx": "impress_pdf_Export"}


def convert(desktop, source, target):
    doc = desktop.loadComponentFromURL(uno.systemPathToFileUrl(source), "_blank", 0,
                                       (prop("Hidden", True), prop("ReadOnly", True)))
    try:
        export = PDF_FILTERS.get(os.path.splitext(source)[1], "writer_pdf_Export")
        doc.storeToURL(uno.systemPathToFileUrl(target), (prop("FilterName", export),))
    finally:
        doc.close(True)


def main():
    soffice, work_dir, inputs = sys.argv[1], sys.argv[2], sys.argv[3:]
    office, desktop = start(soffice, work_dir)
    target = os.path.join(work_dir, "out.pdf")
    try:
        for source in inputs:
            convert(desktop, source, target)
        print(json.dumps({"ready": True}), flush=True)
        for line in sys.stdin:
            command = json.loads(line)
            if command["op"] == "one":
                t0 = time.perf_counter()
                convert(desktop, inputs[command["input"]], target)
                print(json.dumps({"ms": (time.perf_counter() - t0) * 1000}), flush=True)
            elif command["op"] == "latency":
                latencies = [[] for _ in inputs]
                for _ in range(command["rounds"]):
                    for i, source in enumerate(inputs):
                        t0 = time.perf_counter()
                        convert(desktop, source, target)
                        latencies[i].append((time.perf_counter() - t0) * 1000)
                print(json.dumps({"latencies": latencies}), flush=True)
            elif command["op"] == "loop":
                started = time.perf_counter()
                deadline = started + command["seconds"]
                docs = 0
                while time.perf_counter() < deadline:
                    convert(desktop, inputs[docs % len(inputs)], target)
                    docs += 1
                print(json.dumps({"docs": docs, "seconds": time.perf_counter() - started}), flush=True)
    finally:
        try:
            desktop.terminate()
        except Exception:
            pass
        try:
            office.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(office.pid, 9)


if __name__ == "__main__":
    main()
