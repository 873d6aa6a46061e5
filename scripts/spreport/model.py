"""The cost model of the Sun study's runs: load, scale and release of the
read and the mmap path, predicted from unit costs that spcost measures
apart from the runs (src/experiments/tools/spcost.c) and from the
image's geometry, following the code (src/input_*.c, plan.c, item.c, work.c,
image.c).  Nothing here is fitted to the times it predicts.

    PYTHONPATH=scripts /usr/bin/python3 -m spreport.model \\
        --units UNITS.csv... --out DIR RUNS_DIR...

writes DIR/model.md, DIR/model.csv, DIR/model.png and DIR/bytes.csv
(model_report.py).
A prediction is a dict of ns by phase ("load", "scale", "release") and
of the counts it rests on (faults, madvise calls).

The units are measured under the runs' conditions where the runs' threads
meet: the kernels, the input's and the chunks' first faults with ten
threads at once on the CPUs the process has (*_t10, each net of the gate,
gate_t10, the threads' wake-ups, paid once a run); the pages given back
during the run with the other CPU busy (*_busy); the enlarge kernel with
a writer beside it (*_writing); a cold file's read and faults
(read_cold, mmap_cold_*); the load's and the release's system calls once
each in a process just exec'd, as a run makes them (load_open_first,
load_map_first, release_unmap_first: each its process's first of its
kind, several times a loop's cost).  Held out: a session-N folder is
predicted from the units-K.csv files with K not N (held_out).  A cost a
page or a byte of a file is taken at the size spcost measured nearest
the run's file (SIZED, read_units).

Units spcost measures that no phase uses, kept as checks on the others:
thread (the threads start before the gate opens, outside every timed
phase), read_fresh and anon_fault_4k (the same in a long-running
process: read_process and anon_fault_process are what a run pays),
memcpy, madvise_anon, free_large, file_fault_page_*, pread1 and
madvise_call (the calls in a loop, which STAND_INS prices the first
calls with for an older spcost's files), and the
single-thread costs the *_t10 units replace (cpus, wake_remote,
switch_local, anon_fault_2m; STAND_INS uses them for an older spcost's
files)."""
import argparse
import csv
import math
import os
import re
import sys
from dataclasses import dataclass

PAGE = 4096
HUGE = 2 << 20           # a transparent huge page (plan.c, input_mmap.c)
CHUNK = 512 * 1024       # SP_CHUNK: output bytes an item (job.h)
DEPTH = 2                # SP_RUN_DEPTH: slots a thread (parallel.h)
PIXEL = 3                # bytes a pixel: 8-bit RGB
HEADER_BLOCK = 8192      # the header reader's first pread (input_bytes.c)
# The anonymous pages a process first touches during the load whatever
# the path (the header reader's stack block and stdio's buffers): a count
# read off the mmap path's load faults, not a time.  The first ones are
# the job's thread's first malloc's, which spcost times with their
# faults (first_malloc, first_malloc_faults); the rest cost
# anon_fault_process each.
LOAD_FIRST_TOUCH = 7
# System calls of the read path's load past those load_open_first times
# (the open, an fstat and the header block's pread, as a fresh process
# makes them): an lseek past the header and a second fstat.
READ_LOAD_CALLS = 2


def session_of(path):
    """The N of a units-N.csv or of a session-N folder; None where its
    name has none."""
    m = re.search(r"(?:units|session)-(\d+)(?:\.csv)?$",
                  os.path.normpath(path))
    return int(m.group(1)) if m else None


def held_out(paths, folder):
    """The units files of PATHS that predict FOLDER's runs: those measured
    at another moment than its session (units-K.csv, K not its N, as
    reference.sh numbers them), all of them where that leaves none or
    FOLDER is no session-N."""
    n = session_of(folder)
    other = [p for p in paths if session_of(p) != n]
    return other if n is not None and other else list(paths)


# The units whose cost a page or a byte depends on the file's size (the
# folios the page cache makes of it, the block malloc maps): read_units
# takes them at the size nearest a run's file; every other unit at the
# smallest size spcost measured (the study's raster by default).
SIZED = ("read_process", "read_touched", "read_cold", "free_process",
         "madvise_file_", "file_fault_", "file_pages_per_fault_",
         "mmap_cold_")


def read_units(paths, length=None):
    """spcost's CSVs as {unit: value}: a unit's median over the files
    (spcost run more than once, at different moments of a shared
    machine); a unit of SIZED measured with the files' size (the bytes
    column; older files have none) nearest LENGTH, a run's file's, by
    ratio, the others at the smallest size."""
    from . import stats
    seen = {}
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                size = int(r.get("bytes") or 0)
                seen.setdefault(r["unit"], {}).setdefault(
                    size, []).append(float(r["value"]))
    out = {}
    for u, by in seen.items():
        if length is None or 0 in by or not u.startswith(SIZED):
            size = min(by)
        else:
            size = min(by, key=lambda b: abs(math.log(b / length)))
        out[u] = stats.median(by[size])
    return out


def file_length(geo):
    """The bytes of a W x H PPM file (GEO)."""
    w, h = geo
    return w * h * PIXEL + header_bytes(w, h)


@dataclass
class Plan:
    """plan.c's sp_plan for a PNM output (chunked)."""
    ow: int
    oh: int
    orow: int
    rows: int
    times: int
    chunk_rows: int
    items: int
    threads: int
    slots: int
    chunk: int


def make_plan(w, h, factor, threads):
    n = abs(factor)
    if factor > 0:
        ow, oh = w * n, h * n
    else:
        ow, oh = -(-w // n), -(-h // n)
    orow = ow * PIXEL
    unit = factor if factor > 1 else 1
    share = -(-oh // threads)
    share = -(-share // unit) * unit
    rows = CHUNK // orow
    if rows >= unit:
        rows -= rows % unit
    elif orow <= CHUNK // unit * 4:
        rows = unit
    elif rows == 0:
        rows = 1
    rows = min(rows, share)
    times = factor if factor > 1 and rows % factor == 0 else 1
    items = -(-oh // rows)
    used = min(threads, items)
    return Plan(ow, oh, orow, rows, times, rows // times, items, used,
                used * DEPTH, ow * (rows // times) * PIXEL)


def default_grain(length):
    """input_mmap.c's default_grain."""
    grain = HUGE
    while grain // 2 >= PAGE and grain > length // 64:
        grain //= 2
    return grain


def header_bytes(w, h):
    return len("P6\n%d %d\n255\n" % (w, h))


def lerp(units, name, n):
    """A kernel's cost at factor N from its cost at 2 and at 8 (spcost
    measures those two), linear in N, held at the ends."""
    a, b = units[name % 2], units[name % 8]
    t = min(max((n - 2) / 6.0, 0.0), 1.0)
    return a + (b - a) * t


def input_rows(p, factor, h):
    """The source rows the scale reads (item.c): one in N for a reduce,
    all of them for an enlarge."""
    if factor < -1:
        return range(0, min(p.oh * -factor, h), -factor)
    return range(h)


def input_faults(units, geo, p, factor, kind):
    """mmap: the faults of the input's first reads, and the pages they
    map: a fault maps the aligned window of pages_per_fault pages (the
    fault-around, or a large folio) around it."""
    w, h = geo
    stride, off = w * PIXEL, header_bytes(w, h)
    per = max(1, round(units["file_pages_per_fault_" + kind]))
    windows, pages = set(), set()
    for y in input_rows(p, factor, h):
        first = (off + y * stride) // PAGE
        last = (off + (y + 1) * stride - 1) // PAGE
        for pg in range(first, last + 1):
            windows.add(pg // per)
    file_pages = -(-(off + stride * h) // PAGE)
    for win in windows:
        pages.update(range(win * per, min((win + 1) * per, file_pages)))
    return len(windows), pages


def chunk_faults(units, p):
    """The faults of the chunks the items are scaled into (plan.c's one
    mapping, on huge pages from 2 MiB): each item its own slot while
    there are slots for all, else every slot in use.  Returns the count
    and their ns."""
    used = p.chunk_rows * p.orow
    n_used = min(p.items, p.slots)
    if p.items > p.slots:
        used = p.chunk
    total = p.chunk * p.slots
    if total >= HUGE:
        last = (n_used - 1) * p.chunk + used
        regions = -(-last // HUGE)
        return regions, regions * units["anon_fault_2m_t10"]
    pages = set()
    for s in range(n_used):
        a = s * p.chunk
        pages.update(range(a // PAGE, (a + used - 1) // PAGE + 1))
    return len(pages), len(pages) * units["anon_fault_4k_t10"]


def scale_ns(units, geo, p, factor, n_in, kind, cold_ns=0.0, written=True):
    """The scale phase (work.c: the time any thread was scaling an item):
    the prepare's mapping, the gate, the kernel's work, the chunks' first
    faults and the input's (N_IN faults of the KIND page cache, and
    COLD_NS for the pages a cold file reads from the device).

    Every term but the device's is a cost spcost measured with the runs'
    threads at once on the CPUs the process has (the *_t10 units, each
    net of the gate; gate_t10: the threads' wake-ups and switches once
    it opens, paid once).  The writes of finished items and the pages
    given back meanwhile are not added: the finisher makes them while
    the others scale, and they are their phases' own (write, release).
    Past the slots, an item waits for a slot the writer frees; when
    writing an item takes longer than scaling one, the items after the
    first slots' are scaled one at a time, at the single-thread costs.
    With no output (WRITTEN false: --no-output, the study's span) a slot
    is freed as soon as its item is done, and no item waits."""
    w, h = geo
    n = abs(factor)
    if factor < -1:
        name, count = "reduce%d_px", p.oh * p.ow
    else:
        name, count = "enlarge%d_byte", h * p.orow
    kernel = count * lerp(units, name + "_t10", n)
    faults = n_in * units["file_fault_%s_t10" % kind]
    n_chunk, chunk_ns = chunk_faults(units, p)
    prepare = units["mmap_munmap"] / 2 + units["gate_t10"]
    if p.chunk * p.slots >= HUGE:
        prepare += units["syscall"]
    if written and p.items > p.slots:
        k_item = count * lerp(units, name, n) / p.items
        if units["write_cached"] * p.chunk * p.times >= k_item:
            first = p.slots / p.items
            alone = name + ("_writing" if factor > 1 else "")
            return n_chunk, prepare + cold_ns + chunk_ns + first * (
                kernel + faults) + (1 - first) * (
                count * lerp(units, alone, n) +
                n_in * units["file_fault_" + kind])
    return n_chunk, prepare + cold_ns + kernel + chunk_ns + faults


def drops(p, factor, stride, off, length):
    """input_mmap.c's done_before after each item but the last (work.c's
    write_item): the [from, to) byte ranges given back during the run."""
    grain, dropped, out = default_grain(length), 0, []
    for i in range(p.items - 1):
        y1 = (i + 1) * p.rows
        if y1 >= p.oh:
            break
        first = y1 // factor if factor > 1 else y1 * -factor
        end = min(off + first * stride, length)
        end -= end % grain
        if end > dropped:
            out.append((dropped, end))
            dropped = end
    return out, dropped


# The units an older spcost did not measure, each with the stand-in the
# model took before it had them: the single-thread cost shared out over
# the CPUs spcost found the process to have (cpus), one remote wake-up
# for the gate, the madvise of an idle machine, the kernel with no
# writer beside it, no arena of the job's thread's own (its first
# malloc, first_malloc: its faults were counted among
# LOAD_FIRST_TOUCH's).  stand_ins says which
# were stood in for.
STAND_INS = {
    "gate_t10": lambda u: u["wake_remote"],
    "reduce2_px_t10": lambda u: u["reduce2_px"] / u["cpus"],
    "reduce8_px_t10": lambda u: u["reduce8_px"] / u["cpus"],
    "enlarge2_byte_t10": lambda u: u["enlarge2_byte"] / u["cpus"],
    "enlarge8_byte_t10": lambda u: u["enlarge8_byte"] / u["cpus"],
    "file_fault_large_t10": lambda u: u["file_fault_large"] / u["cpus"],
    "file_fault_small_t10": lambda u: u["file_fault_small"] / u["cpus"],
    "anon_fault_2m_t10": lambda u: u["anon_fault_2m"] / u["cpus"],
    "anon_fault_4k_t10": lambda u: u["anon_fault_process"] / u["cpus"],
    "enlarge2_byte_writing": lambda u: u["enlarge2_byte"],
    "first_malloc": lambda u: 0.0,
    "first_malloc_faults": lambda u: 0.0,
    "enlarge8_byte_writing": lambda u: u["enlarge8_byte"],
    "madvise_file_large_busy": lambda u: u["madvise_file_large"],
    "madvise_file_small_busy": lambda u: u["madvise_file_small"],
    # the calls priced as in a loop: open, fstat and the header's pread
    # (its copy); the mapping and an fstat; the last madvise, munmap and
    # close
    "load_open_first": lambda u: (2 * u["syscall"] + u["pread1"] +
                                  HEADER_BLOCK * u["read_touched"]),
    "load_map_first": lambda u: u["mmap_munmap"] / 2 + u["syscall"],
    "release_unmap_first": lambda u: (u["madvise_call"] +
                                      u["mmap_munmap"] / 2 + u["syscall"]),
}


def stand_ins(units):
    """UNITS with each unit of STAND_INS it lacks stood in for, and the
    names of those."""
    missing = sorted(k for k in STAND_INS if k not in units)
    out = dict(units)
    for k in missing:
        out[k] = STAND_INS[k](units)
    return out, missing


def cold_pages(geo, p, factor):
    """The file's pages a cold mmap run reads from the device: readahead
    brings the pages between those the scale reads, so the span from the
    header's page to the last row read."""
    w, h = geo
    stride, off = w * PIXEL, header_bytes(w, h)
    last = max(input_rows(p, factor, h))
    return (off + (last + 1) * stride - 1) // PAGE + 1


def predict(units, geo, factor, method, kind="large", threads=10,
            cache="warm", written=True):
    """The ns of each phase of one run of METHOD ("read" or "mmap") at
    FACTOR on a W x H image (GEO) whose file the page cache holds in
    KIND ("large" folios or "small" pages), or does not hold (CACHE
    "cold": the read path's copy at spcost's read_cold, the mmap path's
    pages at its cold faults' cost a page), THREADS threads on the CPUs
    spcost's *_t10 units were measured on; WRITTEN: whether each run
    wrote its output (runs.csv's output column: none, as 2002, or a
    file; runs from before the column wrote one)."""
    u, _ = stand_ins(units)
    w, h = geo
    stride, off = w * PIXEL, header_bytes(w, h)
    raster, length = stride * h, stride * h + header_bytes(w, h)
    p = make_plan(w, h, factor, threads)
    own = min(u["first_malloc_faults"], LOAD_FIRST_TOUCH)
    load = (u["load_open_first"] + u["first_malloc"] +
            (LOAD_FIRST_TOUCH - own) * u["anon_fault_process"])
    out = {"plan": p, "load_faults": LOAD_FIRST_TOUCH, "drop_calls": 0}
    cold = cache == "cold"
    if method == "read":
        load += READ_LOAD_CALLS * u["syscall"] + raster * u["read_process"]
        if cold:
            load += raster * (u["read_cold"] - u["read_touched"])
        out["load_faults"] += -(-raster // PAGE)
        n_in, cold_ns = 0, 0.0
        release = -(-raster // PAGE) * u["free_process"]
    else:
        load += u["load_map_first"]
        n_in, mapped = input_faults(u, geo, p, factor, kind)
        cold_ns = 0.0
        if cold:
            cold_ns = cold_pages(geo, p, factor) * (
                u["mmap_cold_fault"] / u["mmap_cold_pages_per_fault"])
        ranges, dropped = drops(p, factor, stride, off, length)
        busy = u["madvise_file_%s_busy" % kind]
        drops_ns = 0.0
        for a, b in ranges:
            held = sum(1 for pg in range(a // PAGE, b // PAGE)
                       if pg in mapped)
            drops_ns += u["madvise_call_shared"] + held * busy
        rest = sum(1 for pg in mapped if pg * PAGE >= dropped)
        release = (drops_ns + rest * u["madvise_file_" + kind] +
                   u["release_unmap_first"])
        out["drop_calls"] = len(ranges)
    n_chunk, scale = scale_ns(u, geo, p, factor, n_in, kind, cold_ns,
                              written)
    out.update(load=load, scale=scale, release=release,
               total=load + scale + release,
               scale_faults=n_chunk + n_in, input_faults=n_in)
    return out


def touched(units, geo, factor, kind="large", threads=10):
    """The bytes and pages each path touches at FACTOR, by the code's
    geometry: read() copies the raster (input_read.c seeks past the
    header) into a fresh malloc'd buffer, whose pages the load touches
    first besides LOAD_FIRST_TOUCH (predict's load_faults); the mmap
    path's scale reads the rows input_rows names, whole, and its faults
    map the pages input_faults predicts (windows of spcost's
    file_pages_per_fault_KIND pages); it gives pages back in the
    madvise calls drops counts."""
    w, h = geo
    stride = w * PIXEL
    raster = stride * h
    p = make_plan(w, h, factor, threads)
    faults, pages = input_faults(units, geo, p, factor, kind)
    length = raster + header_bytes(w, h)
    ranges, _ = drops(p, factor, stride, header_bytes(w, h), length)
    return {"file_bytes": length,
            "read_copy_bytes": raster,
            "read_load_pages": -(-raster // PAGE) + LOAD_FIRST_TOUCH,
            "mmap_input_bytes": len(input_rows(p, factor, h)) * stride,
            "mmap_input_faults": faults,
            "mmap_mapped_pages": len(pages),
            "mmap_drop_calls": len(ranges)}


def geometry_of(name):
    """W, H from an image's name (sun1280x1024.ppm, gen12000x10000.ppm),
    or None."""
    m = re.search(r"(\d+)x(\d+)", name)
    return (int(m.group(1)), int(m.group(2))) if m else None


def read_runs(folder):
    """A folder's runs.csv as a list of dicts."""
    with open(os.path.join(folder, "runs.csv"), newline="") as f:
        return list(csv.DictReader(f))


def settings_of(folder):
    """The "settings:" line of FOLDER's env.txt (sun.sh) as {key: value}
    (fault_around_pages, folios, ...); {} where there is none."""
    try:
        with open(os.path.join(folder, "env.txt")) as f:
            for line in f:
                if line.startswith("settings:"):
                    return dict(t.split("=", 1) for t in line.split()[1:]
                                if "=" in t)
    except FileNotFoundError:
        pass
    return {}


def main(argv=None):
    from . import model_report
    ap = argparse.ArgumentParser(
        prog="spreport.model",
        description="Predict the Sun study's phases from spcost's unit "
        "costs and compare with measured runs.")
    ap.add_argument("--units", required=True, nargs="+",
                    help="spcost's CSV; several: each unit's median")
    ap.add_argument("--out", required=True, help="folder for model.*")
    ap.add_argument("--geometry", help="WxH, for runs whose image name "
                    "does not say it")
    ap.add_argument("runs", nargs="+", help="folders holding runs.csv")
    a = ap.parse_args(argv)
    units = read_units(a.units)
    forced = geometry_of(a.geometry) if a.geometry else None
    os.makedirs(a.out, exist_ok=True)
    rows = model_report.compare(a.units, a.runs, forced)
    touched_rows = model_report.touched_rows(units, a.runs, forced)
    threads = {r["threads"] for f in a.runs for r in read_runs(f)
               if r.get("threads")}
    model_report.write_all(a.out, units, rows, a.units, touched_rows,
                           threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
