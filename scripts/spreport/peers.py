"""The peers suite's report: scaleppm against netpbm, libvips,
GraphicsMagick and ImageMagick.  From a folder's peers.csv (size, job,
tool, round, wall_ns, maxrss_kb), peers-scale.csv (size, job,
threads_arg, run, scale_ns, threads) and peers-verify.tsv (one row a
tool's verification run), peers.md and peers.png.  The jobs and tools are
what the verification lists, in its order; scripts/peers.sh runs them."""
import os

from . import figures, stats
from .tables import ReportError, markdown_table, number, read_rows, \
    write_text

# Targets (issue 6): scaleppm's median against the fastest peer's.
TARGET_REDUCE, TARGET_ENLARGE, TARGET_RSS = 0.33, 0.8, 2
TARGET_BOX, TARGET_FLOOR, TARGET_THREADS = 0.5, 2, 1.7


def label(job):
    """"reduce 2" for reduce2."""
    head = job.rstrip("0123456789")
    return f"{head} {job[len(head):]}"


def factor(job):
    return int(job[len(job.rstrip("0123456789")):])


def x(a, b):
    """a/b to two places, or "" where either is missing."""
    return f"{a / b:.2f}" if a is not None and b else ""


def ms(ns):
    return f"{ns / 1e6:.1f}"


def medians(path, keys, value):
    """{key tuple: Summary} of column VALUE of the CSV PATH, by the
    columns KEYS."""
    by = {}
    for row in read_rows(path, keys + (value,)):
        by.setdefault(tuple(row[k] for k in keys), []).append(
            number(row, value, path))
    return {k: stats.summarize(v) for k, v in by.items()}


class Verify:
    """peers-verify.tsv: the jobs, and per (size, job) its tools."""

    def __init__(self, path):
        self.rows = read_rows(path, ("size", "job", "tool", "expected",
                                     "result", "dims", "detail", "verdict",
                                     "timed"), sep="\t")
        self.jobs = list(dict.fromkeys(r["job"] for r in self.rows))
        self.tools = {}
        for r in self.rows:
            self.tools.setdefault((r["size"], r["job"]), []).append(r)


def rounds_range(wall, size, job, peer):
    """The range the rounds allow scaleppm's time ÷ PEER's on SIZE's JOB:
    scaleppm's fastest round over the peer's slowest, its slowest over the
    peer's fastest; None where either was not timed."""
    a, b = wall.get((size, job, "scaleppm")), wall.get((size, job, peer))
    if a is None or b is None or not b.min > 0:
        return None
    return a.min / b.max, a.max / b.min


def speed_tables(sizes, verify, wall, rss):
    """The per-size tables, the figure's (job, size, ratio, target,
    rounds' range) points, and how many targets were met of how many."""
    out, points, met_n, targets = [], [], 0, 0
    for size in sizes:
        out += [f"## {size}", ""]
        rows = []
        for job in verify.jobs:
            entries = verify.tools.get((size, job), [])
            med = {e["tool"]: wall[(size, job, e["tool"])].median
                   for e in entries if (size, job, e["tool"]) in wall}
            mem = {e["tool"]: rss[(size, job, e["tool"])].median
                   for e in entries if (size, job, e["tool"]) in rss}
            peers = [e["tool"] for e in entries if e["tool"] != "scaleppm"]
            # fastest first; those not timed last, in their order
            peers.sort(key=lambda t: (t not in med, med.get(t, 0)))
            timed = [t for t in peers if t in med]
            best = timed[0] if timed else None
            fm = med.get(best)
            sp = med.get("scaleppm")
            r = x(sp, fm)
            fig = r
            if job.startswith("reduce"):
                target, ft = f"≤ {TARGET_REDUCE}× fastest", TARGET_REDUCE
                met = "?" if not r else \
                    ("yes" if float(r) <= TARGET_REDUCE else "no")
            elif job.startswith("enlarge"):
                target = (f"≤ {TARGET_ENLARGE}× fastest, RSS ≤ "
                          f"{TARGET_RSS}× its")
                ft = TARGET_ENLARGE
                rr = x(mem.get("scaleppm"), mem.get(best))
                met = "?" if not r or not rr else (
                    ("yes" if float(r) <= TARGET_ENLARGE and
                     float(rr) <= TARGET_RSS else "no") + f" (RSS {rr}×)")
            else:
                target = f"≤ {TARGET_BOX}× vips-shrink and pamscale"
                ft = TARGET_BOX
                r1 = x(sp, med.get("vips-shrink"))
                r2 = x(sp, med.get("pamscale"))
                met = "?" if not r1 or not r2 else (
                    ("yes" if max(float(r1), float(r2)) <= TARGET_BOX
                     else "no") + f" ({r1}×, {r2}×)")
                fig = "" if not r1 or not r2 else \
                    (r1 if float(r1) > float(r2) else r2)
                best = "vips-shrink" if fig == r1 else "pamscale"
            met_n += met.startswith("yes")
            targets += 1
            points.append((job, size, float(fig) if fig else None, ft,
                           rounds_range(wall, size, job, best)))
            w = wall.get((size, job, "scaleppm"))
            rows.append([label(job), "**scaleppm**",
                         ms(w.median) if w else "",
                         f"{ms(w.min)}-{ms(w.max)}" if w else "",
                         f"{mem['scaleppm'] / 1024:.1f}"
                         if "scaleppm" in mem else "",
                         f"**{r}**", target, met])
            why = {e["tool"]: e["timed"][4:] for e in entries
                   if e["timed"] != "yes"}
            for t in peers:
                if t in why or t not in med:
                    rows.append(["", t, "", "", "", "",
                                 f"not timed: {why.get(t, '')}", ""])
                    continue
                w = wall[(size, job, t)]
                rows.append(["", t, ms(w.median),
                             f"{ms(w.min)}-{ms(w.max)}",
                             f"{mem[t] / 1024:.1f}" if t in mem else "",
                             x(med[t], fm), "", ""])
        out += markdown_table(["job", "tool", "median ms", "min-max ms",
                               "peak RSS MB", "× fastest", "target",
                               "met?"], "llrrrrll", rows)
        out.append("")
    return out, points, met_n, targets


def tally(table):
    """(met, targets) of a table whose last column is met?: its rows that
    say yes, and its rows."""
    rows = table[2:]
    return sum(r.rstrip("| ").endswith("| yes") for r in rows), len(rows)


def floor_rows(inputs, jobs, scale, rate):
    """The scale phase against the memory floor: a row a (input, job)."""
    rows = []
    for size, bpp in inputs:
        w, h = (int(v) for v in size.split("x"))
        for job in jobs:
            n = factor(job)
            s = scale.get((size, job, "default"))
            m = s.median if s else 0
            ow, oh = -(-w // n), -(-h // n)
            read = w * h * bpp
            if job.startswith("enlarge"):
                ow, oh = w * n, h * n
            if job.startswith("reduce"):
                read = oh * w * bpp
            written = ow * oh * bpp
            fl = (read + written) / (2 * rate) * 1e9
            met = "? (no scale figure)" if m == 0 else \
                ("yes" if m / fl <= TARGET_FLOOR else "no")
            rows.append([size, label(job), f"{m / 1e6:.2f}",
                         f"{read / 1e6:.2f}", f"{written / 1e6:.2f}",
                         f"{fl / 1e6:.3f}", f"{m / fl:.2f}", met])
    return markdown_table(["size", "job", "scale median ms", "read MB",
                           "written MB", "floor ms", "scale ÷ floor",
                           "met?"], "llrrrrrl", rows)


def thread_rows(sizes, jobs, scale):
    rows = []
    for size in sizes:
        for job in (j for j in jobs if j.startswith("enlarge")):
            t1 = scale.get((size, job, "1"))
            t2 = scale.get((size, job, "2"))
            if not t1 or not t2 or not t1.median or not t2.median:
                a = t1.median if t1 else 0
                b = t2.median if t2 else 0
                rows.append([size, label(job), f"{a / 1e6:.2f}",
                             f"{b / 1e6:.2f}", "?",
                             "? (a figure is missing)"])
                continue
            q = t1.median / t2.median
            rows.append([size, label(job), f"{t1.median / 1e6:.2f}",
                         f"{t2.median / 1e6:.2f}", f"{q:.2f}",
                         "yes" if q >= TARGET_THREADS else "no"])
    return markdown_table(["size", "job", "-t 1 ms", "-t 2 ms", "t1 ÷ t2",
                           "met?"], "llrrrl", rows)


def verify_section(verify):
    rows, not_timed = [], []
    for r in verify.rows:
        if r["timed"] != "yes":
            not_timed.append(f"- {r['size']} {label(r['job'])}, "
                             f"{r['tool']}: {r['timed'][4:]}")
        if r["tool"] == "scaleppm":
            continue
        res = r["result"]
        what = {"equal": "equal",
                "dims": f"dimensions differ; {r['detail']}",
                "differs": f"differs: {r['detail']}",
                "skipped": f"not run: {r['timed'][4:]}"}.get(
                    res, f"{res}: {r['detail']}")
        rows.append([r["size"], label(r["job"]), r["tool"], r["dims"],
                     what, r["expected"] or "-",
                     "**MISMATCH**" if r["verdict"] == "MISMATCH"
                     else r["verdict"]])
    out = markdown_table(["size", "job", "tool", "output",
                          "against scaleppm", "expected", "verdict"],
                         "lllllll", rows)
    out += ["", "## Not timed", ""]
    out += not_timed or ["Nothing: every tool was timed on every job."]
    return out


def commands_section(path, size):
    rows = []
    for r in read_rows(path, ("job", "tool", "command"), sep="\t"):
        rows.append([label(r["job"]), r["tool"], f"`{r['command']}`"])
    return [f"## Commands (for {size}; IN, OUT)", ""] + \
        markdown_table(["job", "tool", "command"], "lll", rows)


def figure(path, points, sizes, jobs):
    """scaleppm's time over the fastest peer's, a bar a size in each job,
    whiskers the range its rounds allow, the job's target a black line
    over its bars."""
    fig, (ax,) = figures.panels(1, width=11, height=5.5)
    width = 0.8 / len(sizes)
    got = {(j, s): (r, t, g) for j, s, r, t, g in points}
    for i, size in enumerate(sizes):
        xs, ys, err = [], [], [[], []]
        for k, job in enumerate(jobs):
            r, _, g = got.get((job, size), (None, None, None))
            if r is not None:
                xs.append(k - 0.4 + width * (i + 0.5))
                ys.append(r)
                lo, hi = g if g else (r, r)
                err[0].append(max(r - lo, 0))
                err[1].append(max(hi - r, 0))
        ax.bar(xs, ys, width, label=size, edgecolor="black", lw=0.5,
               color=figures.COLOURS[i % 4])
        ax.errorbar(xs, ys, yerr=err, fmt="none", ecolor="black",
                    capsize=3, lw=1)
    for k, job in enumerate(jobs):
        t = next((t for (j, _), (_, t, _) in got.items() if j == job),
                 None)
        if t is not None:
            ax.hlines(t, k - 0.45, k + 0.45, colors="black", lw=3,
                      label="target" if k == 0 else "_")
    ax.axhline(1, color="gray", ls="--", label="the fastest peer")
    ax.set_xticks(range(len(jobs)))
    ax.set_xticklabels([label(j) for j in jobs])
    ax.set_ylabel("scaleppm ÷ fastest peer (lower is better)")
    ax.set_ylim(bottom=0)
    ax.grid(True, axis="y", alpha=0.4)
    ax.set_title("scaleppm's time ÷ the fastest peer's (box: ÷ the faster "
                 "of vips shrink and pamscale -linear)\n"
                 f"{' and '.join(sizes)} images, scaleppm's default threads; "
                 "warm cache (inputs read once before), folio not "
                 "controlled, outputs on tmpfs\nbars: ratio of the medians; "
                 "whiskers: scaleppm's fastest round ÷ the peer's slowest "
                 "to its slowest ÷ the peer's fastest")
    figures.legend_below(ax, ncol=len(sizes) + 2)
    figures.save(fig, path)


def report(folder, rate, inputs, commands):
    """FOLDER/peers.md (and peers.png when RATE, the memcpy rates of
    sprun --memcpy in bytes/s, comma-separated, is given: without it
    nothing was timed, and only the verification is reported).  INPUTS:
    "WxH:BPP" of each input, in order; COMMANDS: a TSV of job, tool,
    command for the commands table.  ReportError on a bad or missing
    file."""
    rates = []
    for r in rate.split(",") if rate is not None else []:
        try:
            rates.append(float(r))
        except ValueError:
            raise ReportError(f"--memcpy {rate}: want bytes/s, "
                              "comma-separated") from None
        if not rates[-1] > 0:
            raise ReportError(f"--memcpy {rate}: a rate is not positive")
    specs = []
    for s in inputs:
        size, _, bpp = s.partition(":")
        if not bpp.isdigit() or "x" not in size:
            raise ReportError(f"--input {s}: want WxH:BPP")
        specs.append((size, int(bpp)))
    if not specs:
        raise ReportError("peers: no --input")
    sizes = [s for s, _ in specs]
    verify = Verify(os.path.join(folder, "peers-verify.tsv"))
    md = ["# peers: scaleppm against netpbm, libvips, GraphicsMagick and "
          "ImageMagick", ""]
    points = None
    if rates:
        rate = stats.median(rates)
        csv = os.path.join(folder, "peers.csv")
        wall = medians(csv, ("size", "job", "tool"), "wall_ns")
        rss = medians(csv, ("size", "job", "tool"), "maxrss_kb")
        scale = medians(os.path.join(folder, "peers-scale.csv"),
                        ("size", "job", "threads_arg"), "scale_ns")
        nr = int(max(number(r, "round", csv) for r in
                     read_rows(csv, ("round",))))
        tables, points, met, targets = speed_tables(sizes, verify, wall, rss)
        floor = floor_rows(specs, verify.jobs, scale, rate)
        threads = thread_rows(sizes, verify.jobs, scale)
        fm, ft = tally(floor)
        tm, tt = tally(threads)
        md += [f"scaleppm meets {met} of {targets} speed targets, {fm} of "
               f"{ft} memory-floor targets and {tm} of {tt} thread-scaling "
               "targets (below).", "",
               PROSE_TIMING.format(nr=nr, tr=TARGET_REDUCE,
                                   te=TARGET_ENLARGE, trss=TARGET_RSS,
                                   tb=TARGET_BOX)]
        md += tables
        md += [PROSE_FLOOR.format(nr=nr, rate=rate / 1e9, tf=TARGET_FLOOR,
                                  copies=len(rates))]
        md += floor + ["", PROSE_THREADS.format(nr=nr, tt=TARGET_THREADS)]
        md += threads
        md.append("")
    else:
        md += ["**Verification failed: nothing was timed.**", ""]
    md += [PROSE_VERIFY]
    md += verify_section(verify)
    md.append("")
    if commands:
        md += commands_section(commands, sizes[0])
    md += ["", PROSE_NOTES]
    write_text(os.path.join(folder, "peers.md"), "\n".join(md))
    if points is not None:
        figure(os.path.join(folder, "peers.png"), points, sizes,
               verify.jobs)


PROSE_TIMING = """\
Each tool does each job as a fresh process, timed by `sprun` (wall
time, CLOCK_MONOTONIC from fork to wait4; peak RSS from wait4's rusage,
as /usr/bin/time -v reports it) in {nr} rounds; in each round every (job,
tool) pair runs once, the tools of a job in an order rotated by one each
round. The input is in the page cache (read once before), the output
goes to tmpfs (/dev/shm) and is removed before each run. scaleppm runs
with its defaults (no `-t`, no `--io`). "peak RSS": the median over
the rounds of each run's peak. Raw rows: peers.csv; the scale
phase alone: peers-scale.csv; verification: peers-verify.tsv; the
machine: env.txt.

"× fastest" is a tool's median over the fastest peer's (scaleppm is not
a peer). Targets (issue 6): sample reduce, scaleppm ≤
{tr}× the fastest peer; enlarge, ≤ {te}× and
peak RSS ≤ {trss}× the fastest peer's; box, ≤ {tb}× both
vips shrink and pamscale -reduce N -linear (met? gives both ratios).
"""

PROSE_FLOOR = """\
## The scale phase against the memory floor

scaleppm's scale phase alone (`--timings=json`, scale_ns: the time any
thread was scaling; default threads, median of {nr} runs, the output to
/dev/null, since scaleppm writes one item while it scales the next and a
write into tmpfs beside it would be timed too) against the memory floor:
the bytes the job
must read plus the bytes it writes, moved at 2 × the single-thread memcpy
rate (a memcpy reads and writes each byte it copies). The memcpy rate,
by `sprun --memcpy` in this run (median of {copies} copies of 256 MiB):
{rate:.2f} GB/s. Read: a sampled reduce by N, ceil(H/N) whole rows
(it touches every cache line of a sampled row for N ≤ 21); enlarge and
box, the whole raster. Written: the output raster. Target: scale ≤
{tf}× floor.
"""

PROSE_THREADS = """\
## Thread scaling of the scale phase (enlarge)

Median scale phase with `-t 1` and with `-t 2` ({nr} runs each, in
alternating order). Target: t1 ÷ t2 ≥ {tt}.
"""

PROSE_VERIFY = """\
## Verification

Every tool once a job on each input, its output against scaleppm's:
dimensions, maxval and raster byte for byte (headers aside); for box the
largest absolute sample difference. "expected": what the tool owes
scaleppm there (see the notes); a MISMATCH stops the suite.
"""

PROSE_NOTES = """\
ImageMagick runs with MAGICK_CONFIGURE_PATH set to a policy.xml that
lifts Debian's limits (16K pixels a side, 128 Mpixel, 256 MiB of memory)
and forbids the disk cache. A peer is not timed when its job would not
fit in 3/4 of the memory available at the start (GraphicsMagick and
ImageMagick, Q16, hold input and output at 8 bytes a pixel; the outputs
sit on tmpfs), or when it took over 20× the fastest peer and over 1 s in
verification.

## Notes: which pixel a sampled reduce keeps

scaleppm keeps (x·N, y·N) on ceil(W/N) × ceil(H/N). Measured on images
whose samples encode their position:

- vips subsample: (x·N, y·N) on floor(W/N) × floor(H/N): where N does not
  divide the size, a row or column fewer, the rest equal.
- vips affine, nearest: (x·N, y·N) on round(W/N) × round(H/N).
- gm -sample W'xH'!: (x·W/W', y·H/H') truncated: x·N where N divides the
  size, else a step a little under N, and the columns drift.
- ImageMagick -sample: ((x + o)·W/W' − ε), o the sample:offset define
  (default 50%, the block's centre; 0 gives x·N − 1, through the ε), so
  sample:offset=1 (1%) keeps the top-left pixel for N ≤ 100.
- pamscale -reduce N -nomix: round(W/N) × round(H/N), and for N not a
  power of two a floating-point slip takes x·N − 1 for some x (N = 3:
  columns 0 2 5 8 ...).
- Box: scaleppm rounds each block's mean to nearest; vips shrink and gm
  -scale differ from it by at most 1. Where N does not divide the size,
  the edge blocks are averaged differently (scaleppm: over the pixels that
  exist), and pamscale, gm and ImageMagick scale by W'/W, not 1/N.
"""
