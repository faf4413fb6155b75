#!/usr/bin/python3
"""
One warm soffice set up as one variant of bench/office-cpu.ts (which differences between
bare-uno.py and the service's uno-bridge.py cost soffice.bin CPU). Started by the bench, jailed or
not; everything it uses lives under WORK_DIR.

  python3 office-variant.py CONFIG_JSON

CONFIG: {"soffice": path, "workDir": dir, "profileDir": dir, "inputs": [paths],
         "props": "bare" | "service",   the load properties of bare-uno.py or of uno-bridge.py
         "path": "same" | "fresh",      reload the inputs in place (bare-uno.py) or, as the service
                                        does, rename a new copy of the document to one fixed job path
                                        (jobDir/input.docx) each time and rename the PDF away after
                                        the export
         "rss": bool,                   read the office's statm after each job, as uno-bridge.py does
         "sameSession": bool}           soffice in our session (the service's), not one of its own (bare-uno.py's)

Protocol (JSON lines): after one conversion of every input it prints {"ready": true, "officePid": n}
(the pid as the driver sees it). Each command line {"op": "batch", "docs": [i, ...]} converts those
inputs and answers {"officeMs": soffice.bin utime+stime, "officeIdleMs": soffice.bin's CPU while idle since
the previous batch, "selfMs": this script's, "wallMs": ...}.
EOF on stdin ends it.
"""
import json
import os
import subprocess
import sys
import time

import uno
from com.sun.star.beans import PropertyValue
from com.sun.star.connection import NoConnectException

TICK_MS = 1000.0 / os.sysconf("SC_CLK_TCK")


def prop(name, value):
    p = PropertyValue()
    p.Name = name
    p.Value = value
    return p


def start(config):
    pipe = "office-variant-%d" % os.getpid()
    profile = uno.systemPathToFileUrl(config["profileDir"])
    # The arguments of uno-bridge.py (bare-uno.py has the same but --nofirststartwizard).
    office = subprocess.Popen(
        [config["soffice"], "-env:UserInstallation=" + profile, "--headless", "--invisible", "--nologo", "--nodefault",
         "--norestore", "--nolockcheck", "--nofirststartwizard",
         "--accept=pipe,name=%s;urp;StarOffice.ComponentContext" % pipe],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        # bare-uno.py's soffice has a session of its own (an autogroup of its own for the scheduler);
        # the service's stays in the service's session (office-process.ts: ownProcessGroup).
        start_new_session=not config.get("sameSession"))
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    deadline = time.monotonic() + 90
    while True:
        try:
            ctx = resolver.resolve("uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe)
            return office, ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
        except NoConnectException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def stat_fields(pid):
    with open("/proc/%d/stat" % pid) as f:
        stat = f.read()
    return stat[stat.rindex(")") + 2:].split()


def find_office_bin(launcher):
    """soffice.bin: the launcher (oosplash) or one of its children."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open("/proc/%s/comm" % entry) as f:
                    comm = f.read().strip()
                fields = stat_fields(int(entry))
            except OSError:
                continue
            if comm == "soffice.bin" and (int(entry) == launcher or int(fields[1]) == launcher):
                return int(entry)
        time.sleep(0.1)
    raise RuntimeError("no soffice.bin")


def cpu_ms(pid):
    fields = stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) * TICK_MS


BARE_PROPS = lambda: (prop("Hidden", True), prop("ReadOnly", True))
SERVICE_PROPS = lambda: (
    prop("Hidden", True),
    prop("ReadOnly", True),
    prop("MacroExecutionMode", 0),
    prop("UpdateDocMode", 0),
    prop("FilterName", "MS Word 2007 XML"),
    prop("RepairPackage", False),
    prop("Silent", True),
)


def main():
    config = json.loads(sys.argv[1])
    work_dir = config["workDir"]
    office, desktop = start(config)
    page = os.sysconf("SC_PAGE_SIZE")
    load_props = SERVICE_PROPS() if config["props"] == "service" else BARE_PROPS()
    fresh = config["path"] == "fresh"
    contents = []
    if fresh:
        for source in config["inputs"]:
            with open(source, "rb") as f:
                contents.append(f.read())
        job_dir = config["jobDir"]
        os.makedirs(job_dir, exist_ok=True)
        stage_dir = os.path.dirname(job_dir)  # the same mount: a rename, as the service's
        fixed_input = os.path.join(job_dir, "input.docx")
        fixed_output = os.path.join(job_dir, "output.pdf")
    same_output = os.path.join(work_dir, "out.pdf")
    counter = [0]
    office_bin = None

    def convert(i):
        if fresh:
            counter[0] += 1
            staged = os.path.join(stage_dir, "in-%d.docx" % counter[0])
            with open(staged, "wb") as f:
                f.write(contents[i])
            os.rename(staged, fixed_input)
            source, target = fixed_input, fixed_output
        else:
            source, target = config["inputs"][i], same_output
        doc = desktop.loadComponentFromURL(uno.systemPathToFileUrl(source), "_blank", 0, load_props)
        try:
            doc.storeToURL(uno.systemPathToFileUrl(target), (prop("FilterName", "writer_pdf_Export"),))
        finally:
            doc.close(True)
        if fresh:
            kept = os.path.join(stage_dir, "out-%d.pdf" % counter[0])
            os.rename(target, kept)
            os.unlink(kept)
            os.unlink(source)
        if config.get("rss") and office_bin:
            with open("/proc/%d/statm" % office_bin) as f:
                int(f.read().split()[1]) * page

    try:
        for i in range(len(config["inputs"])):
            convert(i)
        # Found after the first conversions: a new profile's first start restarts soffice.bin (code 81).
        office_bin = find_office_bin(office.pid)
        print(json.dumps({"ready": True, "officePid": office_bin}), flush=True)
        idle_since = cpu_ms(office_bin)
        for line in sys.stdin:
            command = json.loads(line)
            t0, self0, office0 = time.perf_counter(), time.process_time(), cpu_ms(office_bin)
            for i in command["docs"]:
                convert(i)
            idle_since, office_idle = cpu_ms(office_bin), office0 - idle_since
            print(json.dumps({
                "officeMs": idle_since - office0,
                "officeIdleMs": office_idle,
                "selfMs": (time.process_time() - self0) * 1000,
                "wallMs": (time.perf_counter() - t0) * 1000,
            }), flush=True)
    finally:
        try:
            desktop.terminate()
        except Exception:
            pass
        try:
            office.wait(timeout=10)
        except subprocess.TimeoutExpired:
            office.kill()


if __name__ == "__main__":
    main()
