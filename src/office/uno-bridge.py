#!/usr/bin/python3
"""
One bridge per LibreOffice process (run with the UNO python, /usr/bin/python3).

It starts soffice with a private profile and a private UNO pipe, connects to it, then serves
jobs from Node over stdin/stdout as JSON lines:

  <- {"id": 1, "op": "convert", "input": "/tmp/job/in.docx", "output": "/tmp/job/out.pdf",
      "trackedChanges": "markup" | "accept" | "reject",
      "work": {"fields": bool, "indexes": bool},     (absent: refresh everything)
      "loadFilter": "MS Word 2007 XML", "filterOptions": "...",   (optional)
      "application": "writer" | "calc" | "impress",  (absent: writer)
      "exportFilter": "writer_pdf_Export",            (absent: the application's)
      "filterData": {"PageRange": "1-2", ...},        (PDF export filter data; absent: defaults)
      "landscape": bool,                              (turn every page style to landscape)
      "fitColumns": bool}                             (Calc: every used column as wide as its content)
  <- {"id": 2, "op": "ping"}
  -> {"type": "ready", "officePid": 123}
  -> {"type": "result", "id": 1, "ok": true, "rss": 123456, "stages": {"load": ms, "refresh": ms, "export": ms}}
  -> {"type": "result", "id": 1, "ok": false, "kind": "load" | "export" | "office", "message": "..."}

stdout carries nothing but these lines; soffice's own output goes to stderr. When stdin
closes (Node exited or closed us), the whole process group, soffice.bin included, is killed:
that is the parent-death guard.
"""
import hashlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time

import uno
from com.sun.star.beans import PropertyValue
from com.sun.star.connection import NoConnectException
from com.sun.star.io import IOException
from com.sun.star.lang import IllegalArgumentException

LOAD_FILTER = "MS Word 2007 XML"
PDF_FILTERS = {"writer": "writer_pdf_Export", "calc": "calc_pdf_Export", "impress": "impress_pdf_Export"}
DOCUMENT_SERVICES = {
    "writer": "com.sun.star.text.TextDocument",
    "calc": "com.sun.star.sheet.SpreadsheetDocument",
    "impress": "com.sun.star.presentation.PresentationDocument",
}
CONNECT_DEADLINE_S = float(os.environ.get("DOCPROC_OFFICE_START_TIMEOUT", "60"))
FIRST_START_RESTART_CODE = 81

protocol_out = sys.stdout
write_lock = threading.Lock()


def send(message):
    line = json.dumps(message, separators=(",", ":"))
    with write_lock:
        protocol_out.write(line + "\n")
        protocol_out.flush()


CLEANUP = {"work_dir": None, "pipe_name": None, "profile_url": None}


def group_members():
    """Pids of our process group (soffice, soffice.bin), ourselves excluded."""
    own, group, members = os.getpid(), os.getpgrp(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == own:
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == group:
            members.append(int(entry))
    return members


def pipe_files():
    if not CLEANUP["pipe_name"]:
        return []
    digest = hashlib.md5(CLEANUP["profile_url"].encode("utf-16-le")).digest()
    single = "".join("%x" % b for b in digest)
    uid = os.getuid()
    return ["/tmp/OSL_PIPE_%d_%s" % (uid, CLEANUP["pipe_name"]), "/tmp/OSL_PIPE_%d_SingleOfficeIPC_%s" % (uid, single)]


def die_with_group(code=0):
    """Kill everything we started (same process group), remove our private files, exit.
    Node does the same when it kills us; this covers Node dying without a word."""
    try:
        for pid in group_members():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and any(
            os.path.exists("/proc/%d" % pid) and not is_zombie(pid) for pid in group_members()
        ):
            time.sleep(0.02)
        for path in pipe_files():
            try:
                os.unlink(path)
            except OSError:
                pass
        if CLEANUP["work_dir"]:
            shutil.rmtree(CLEANUP["work_dir"], ignore_errors=True)
    finally:
        os._exit(code)


def is_zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def prop(name, value):
    p = PropertyValue()
    p.Name = name
    p.Value = value
    return p


def start_office(soffice, profile_url, pipe_name):
    args = [
        soffice,
        "-env:UserInstallation=" + profile_url,
        "--headless",
        "--invisible",
        "--nologo",
        "--nodefault",
        "--norestore",
        "--nolockcheck",
        "--nofirststartwizard",
        "--accept=pipe,name=%s;urp;StarOffice.ComponentContext" % pipe_name,
    ]
    # Node gives us a private TMPDIR: LibreOffice's own temp files land there, not in /tmp.
    return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=sys.stderr, stderr=sys.stderr)


def connect(soffice, profile_url, pipe_name):
    """Starts soffice and returns (process, desktop). oosplash restarts soffice.bin itself after
    the first-start code 81; should the whole process exit anyway, it is started again."""
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    url = "uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe_name
    deadline = time.monotonic() + CONNECT_DEADLINE_S
    process = start_office(soffice, profile_url, pipe_name)
    starts = 1
    while time.monotonic() < deadline:
        try:
            ctx = resolver.resolve(url)
            desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
            return process, ctx, desktop
        except NoConnectException:
            pass
        code = process.poll()
        if code is not None:
            if starts >= 3:
                raise RuntimeError("soffice exited with code %s during start-up" % code)
            process = start_office(soffice, profile_url, pipe_name)
            starts += 1
        time.sleep(0.1)
    raise RuntimeError("soffice did not accept a UNO connection in time")


def office_pids(launcher_pid):
    """The launcher and its children (oosplash, soffice.bin): one scan of /proc."""
    pids = [launcher_pid]
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2:].split(" ", 2)[1]) == launcher_pid:
            pids.append(int(entry))
    return pids


OFFICE_PIDS = []
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def office_rss(launcher_pid):
    """Resident memory of the office processes, in bytes; 0 when unknown. Asked after every job, so
    the processes are found once and then only their statm is read (found again if one is gone)."""
    for _ in range(2):
        if not OFFICE_PIDS:
            try:
                OFFICE_PIDS.extend(office_pids(launcher_pid))
            except OSError:
                return 0
        total = 0
        try:
            for pid in OFFICE_PIDS:
                with open("/proc/%d/statm" % pid) as f:
                    total += int(f.read().split()[1]) * PAGE_SIZE
            return total
        except (OSError, ValueError, IndexError):
            del OFFICE_PIDS[:]
    return 0


class JobFailure(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def dispatch(ctx, document, command):
    helper = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.DispatchHelper", ctx)
    frame = document.getCurrentController().getFrame()
    helper.executeDispatch(frame, command, "", 0, ())


def apply_tracked_changes(ctx, document, mode):
    if mode == "accept":
        dispatch(ctx, document, ".uno:AcceptAllTrackedChanges")
    elif mode == "reject":
        dispatch(ctx, document, ".uno:RejectAllTrackedChanges")
    if mode in ("accept", "reject"):
        # Nothing left to mark up; stop recording so the export shows the clean result.
        document.setPropertyValue("RecordChanges", False)


def index_text(index):
    return index.getAnchor().getString().strip()


def update_index(document, index):
    """Updates one index (TOC, alphabetical, ...). Word keeps the entries it last computed; when
    the document no longer holds what the index points at, an update would leave it empty, so
    an index that had entries and has none after the update is put back as it was."""
    before = index_text(index)
    index.update()
    if before and not index_text(index):
        undo = document.getUndoManager()
        if undo.isUndoPossible():
            undo.undo()


def update_fields_and_indexes(document, fields=True, indexes=True):
    """Bring fields and indexes up to date. Indexes are updated again after a field refresh and
    a layout pass so the page numbers in a TOC are those of the final layout."""
    all_indexes = document.getDocumentIndexes() if indexes else None
    count = all_indexes.getCount() if all_indexes is not None else 0
    for i in range(count):
        update_index(document, all_indexes.getByIndex(i))
    if fields:
        document.getTextFields().refresh()
    if count:
        document.refresh()
        for i in range(count):
            update_index(document, all_indexes.getByIndex(i))
    if fields:
        document.getTextFields().refresh()


def needs_editing(job, work):
    if job.get("landscape") or job.get("fitColumns"):
        return True
    if job.get("application", "writer") != "writer":
        return False
    return job.get("trackedChanges", "markup") != "markup" or work.get("fields", True) or work.get("indexes", True)


def turn_landscape(document):
    """Every page style portrait → landscape (width and height swapped), as a landscape print would."""
    styles = document.getStyleFamilies().getByName("PageStyles")
    for name in styles.getElementNames():
        style = styles.getByName(name)
        if style.getPropertyValue("IsLandscape"):
            continue
        width, height = style.getPropertyValue("Width"), style.getPropertyValue("Height")
        style.setPropertyValue("IsLandscape", True)
        if height > width:
            style.setPropertyValue("Width", height)
            style.setPropertyValue("Height", width)


def fit_columns(document):
    """Every used column of every sheet as wide as its widest cell (a CSV has no widths of its own)."""
    sheets = document.getSheets()
    for i in range(sheets.getCount()):
        sheet = sheets.getByIndex(i)
        cursor = sheet.createCursor()
        cursor.gotoEndOfUsedArea(False)
        columns = sheet.getColumns()
        for c in range(cursor.getRangeAddress().EndColumn + 1):
            columns.getByIndex(c).setPropertyValue("OptimalWidth", True)


def filter_data(values):
    """The PDF export's FilterData, from JSON values (bool, int, str) as Node checked them."""
    props = tuple(prop(name, value) for name, value in sorted((values or {}).items()))
    return uno.Any("[]com.sun.star.beans.PropertyValue", props)


def convert(ctx, desktop, job):
    """Converts job["input"] to PDF; returns the time of each stage in ms. job["work"] says what the
    document needs (Node read the package): without indexes, layout fields or changes to apply it
    is loaded read-only and exported straight away. Without "work" everything is done (safe default)."""
    work = job.get("work") or {}
    editing = needs_editing(job, work)
    stages = {}
    load_props = (
        prop("Hidden", True),
        # Accepting/rejecting tracked changes and updating indexes edit the loaded copy, which
        # LibreOffice refuses on a read-only document. The copy is never stored back: only
        # storeToURL to a new PDF file is used.
        prop("ReadOnly", not editing),
        prop("MacroExecutionMode", 0),  # NEVER_EXECUTE
        prop("UpdateDocMode", 0),  # NO_UPDATE: no link/OLE refresh on load
        prop("FilterName", job.get("loadFilter") or LOAD_FILTER),
        prop("RepairPackage", False),
        prop("Silent", True),
    ) + ((prop("FilterOptions", job["filterOptions"]),) if job.get("filterOptions") else ())
    application = job.get("application", "writer")
    started = time.perf_counter()
    try:
        document = desktop.loadComponentFromURL(uno.systemPathToFileUrl(job["input"]), "_blank", 0, load_props)
    except (IOException, IllegalArgumentException) as err:  # the filter refused the file
        raise JobFailure("load", str(err))
    if document is None or not document.supportsService(DOCUMENT_SERVICES[application]):
        if document is not None:
            document.close(True)
        raise JobFailure("load", "LibreOffice could not open the file as a %s document" % application)
    try:
        stages["load"] = lap(started)
        if application == "writer" and job.get("trackedChanges", "markup") != "markup":
            started = time.perf_counter()
            apply_tracked_changes(ctx, document, job["trackedChanges"])
            stages["officeChanges"] = lap(started)
        if application == "writer" and (work.get("fields", True) or work.get("indexes", True)):
            started = time.perf_counter()
            update_fields_and_indexes(document, work.get("fields", True), work.get("indexes", True))
            stages["refresh"] = lap(started)
        if job.get("fitColumns") and application == "calc":
            fit_columns(document)
        if job.get("landscape") and application != "impress":
            turn_landscape(document)
        started = time.perf_counter()
        export = (prop("FilterName", job.get("exportFilter") or PDF_FILTERS[application]),)
        if job.get("filterData"):
            export += (prop("FilterData", filter_data(job["filterData"])),)
        try:
            uno.invoke(document, "storeToURL", (uno.systemPathToFileUrl(job["output"]), export))
        except IOException as err:
            raise JobFailure("export", str(err))
        stages["export"] = lap(started)
    finally:
        try:
            document.close(True)
        except Exception:
            pass
    return stages


def lap(started):
    return round((time.perf_counter() - started) * 1000, 3)


def office_alive(desktop):
    """A document error and a dying office can look alike from inside a UNO call."""
    try:
        desktop.getComponents()
        return True
    except Exception:
        return False


def watch_office(process):
    """soffice.bin can die between jobs (killed, crashed): exit with it, so that Node sees the whole
    process go at once and replaces it, instead of the next caller's job finding a dead office."""
    process.wait()
    die_with_group(3)


def read_jobs(jobs):
    for line in sys.stdin:
        line = line.strip()
        if line:
            jobs.put(json.loads(line))
    die_with_group(0)


def main():
    soffice, profile_dir, pipe_name, work_dir = sys.argv[1:5]
    profile_url = uno.systemPathToFileUrl(profile_dir)
    CLEANUP.update(work_dir=work_dir, pipe_name=pipe_name, profile_url=profile_url)
    signal.signal(signal.SIGTERM, lambda *_: die_with_group(0))
    # Reading stdin from the start makes its EOF (Node gone) a parent-death guard during start-up too.
    jobs = queue.Queue()
    threading.Thread(target=read_jobs, args=(jobs,), daemon=True).start()
    process, ctx, desktop = connect(soffice, profile_url, pipe_name)
    threading.Thread(target=watch_office, args=(process,), daemon=True).start()
    send({"type": "ready", "officePid": process.pid})
    while True:
        job = jobs.get()
        try:
            stages = convert(ctx, desktop, job) if job.get("op") == "convert" else {}
            send({"type": "result", "id": job["id"], "ok": True, "rss": office_rss(process.pid), "stages": stages})
        except JobFailure as failure:
            if not office_alive(desktop):
                send({"type": "result", "id": job["id"], "ok": False, "kind": "office", "message": str(failure)})
                die_with_group(3)
            send({"type": "result", "id": job["id"], "ok": False, "kind": failure.kind, "message": str(failure)})
        except Exception as err:
            # The office process is gone or wedged (DisposedException, RuntimeException):
            # report it and exit so Node replaces this process.
            send({"type": "result", "id": job["id"], "ok": False, "kind": "office", "message": str(err)})
            die_with_group(3)


if __name__ == "__main__":
    try:
        main()
    except Exception as err:
        sys.stderr.write("uno-bridge: %s\n" % err)
        die_with_group(2)
