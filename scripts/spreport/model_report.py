"""The cost model's report: predicted against measured per folder and
factor (model.csv, model.md, model.png), the bytes each path touches by
the geometry against the runs' faults (bytes.csv, a section of
model.md), and the same model asked about the 2002 study's Table 1."""
import csv
import os

import numpy as np

from . import model, stats

PHASES = ("load", "scale", "release")
METHODS = ("read", "mmap")
# Table 1 of the Sun study (seed 002): factor: (read s, mmap s).
SUN_2002 = {2: (5.48, 4.79), 3: (3.11, 2.44), 4: (2.25, 1.52),
            8: (1.26, 0.62)}
SUN_RATIOS = {2: 1.14, 3: 1.28, 4: 1.48, 8: 2.03}
SUN_PAGE = 8192
SUN_MHZ = 296
SUN_THREADS = 10


def measured(runs, scale, method):
    """Medians of a case's runs: ns a phase and in all, faults."""
    rs = [r for r in runs if int(r["scale"]) == scale
          and r["method"] == method]
    if not rs:
        return None
    out = {ph: stats.median(float(r[ph + "_ns"]) for r in rs)
           for ph in PHASES}
    tot = [sum(float(r[ph + "_ns"]) for ph in PHASES) for r in rs]
    out["total"] = stats.median(tot)
    out["all"] = tot
    for ph in ("load", "scale"):
        out[ph + "_faults"] = stats.median(float(r[ph + "_minflt"])
                                           for r in rs)
    return out


def folder_name(folder):
    """FOLDER as the tables name it: its last component, with its parent's
    when it is one of several sessions (sun-.../session-2)."""
    parts = os.path.normpath(folder).split(os.sep)
    if parts[-1].startswith("session-") and len(parts) > 1:
        return "/".join(parts[-2:])
    return parts[-1]


def compare(units_paths, folders, forced):
    """A row a folder and factor: measured, and predicted from the units
    measured at other moments than the folder's session (model.held_out;
    the files' names in the row's "units")."""
    rows = []
    for folder in folders:
        runs = model.read_runs(folder)
        if not runs:
            continue
        first = runs[0]
        geo = forced or model.geometry_of(first["image"])
        kind = first.get("page_cache", "large")
        paths = model.held_out(units_paths, folder)
        units = model.read_units(paths, model.file_length(geo))
        cold = first["cache"] == "cold"
        scales = sorted({int(r["scale"]) for r in runs},
                        key=lambda s: (s > 0, abs(s)))
        for s in scales:
            row = {"folder": folder_name(folder),
                   "geometry": "%dx%d" % geo,
                   "cache": first["cache"], "page_cache": kind,
                   "image": first["image"], "scale": s,
                   "units": " ".join(os.path.basename(p) for p in paths),
                   "modelled": not cold or "read_cold" in units}
            meas = {m: measured(runs, s, m) for m in METHODS}
            if None in meas.values():
                continue
            for m in METHODS:
                p = model.predict(units, geo, s, m, kind, cache=(
                    first["cache"] if row["modelled"] else "warm"),
                    written=first.get("output", "file") != "none")
                for ph in PHASES + ("total",):
                    row["meas_%s_%s" % (ph, m)] = meas[m][ph]
                    row["pred_%s_%s" % (ph, m)] = p[ph]
                row["meas_scale_faults_" + m] = meas[m]["scale_faults"]
                row["pred_scale_faults_" + m] = p["scale_faults"]
                row["meas_load_faults_" + m] = meas[m]["load_faults"]
                row["pred_load_faults_" + m] = p["load_faults"]
            row["ratio_meas"] = meas["read"]["total"] / meas["mmap"]["total"]
            boot = stats.ratio_bootstrap(meas["read"]["all"],
                                         meas["mmap"]["all"])
            row.update(ratio_mean=boot.ratio, ratio_lo=boot.lo,
                       ratio_hi=boot.hi)
            row["ratio_pred"] = (row["pred_total_read"] /
                                 row["pred_total_mmap"])
            row["ratio_err"] = row["ratio_pred"] / row["ratio_meas"] - 1
            rows.append(row)
    return rows


def write_csv(path, rows, fmt="%.6g"):
    keys = list(rows[0].keys()) if rows else ["folder"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: (fmt % v if isinstance(v, float) else v)
                        for k, v in r.items()})


def us(x):
    return "%.0f" % (x / 1e3)


def folder_table(rows):
    """A folder's rows as Markdown: measured -> predicted, us."""
    out = ["| scale | read load | read scale | read release | mmap load "
           "| mmap scale | mmap release | read/mmap measured (mean, 95% CI)"
           " | predicted | error |",
           "|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    for r in rows:
        cells = ["%s → %s" % (us(r["meas_%s_%s" % (ph, m)]),
                              us(r["pred_%s_%s" % (ph, m)]))
                 for m in METHODS for ph in PHASES]
        fmt = "| %d | %s | %.2f (%.2f, %.2f–%.2f) | %.2f | %+.0f%% |"
        out.append(fmt % (
            r["scale"], " | ".join(cells), r["ratio_meas"], r["ratio_mean"],
            r["ratio_lo"], r["ratio_hi"], r["ratio_pred"],
            100 * r["ratio_err"]))
    return out


def phase_bias(rows):
    """Median predicted/measured a phase and method over ROWS."""
    return {(ph, m): stats.median(r["pred_%s_%s" % (ph, m)] /
                                  r["meas_%s_%s" % (ph, m)] for r in rows)
            for m in METHODS for ph in PHASES}


def sun_cases(rows):
    """The target: the warm runs, of every image and page cache."""
    return [r for r in rows if r["modelled"] and r["cache"] == "warm"]


def phase_err(r, ph, m):
    """|predicted / measured - 1| of phase PH (or "total") of method M in
    row R."""
    return abs(r["pred_%s_%s" % (ph, m)] / r["meas_%s_%s" % (ph, m)] - 1)


def error_groups(rows):
    """The modelled rows by (image, cache, page cache), in that order."""
    keys = sorted({(r["geometry"], r["cache"], r["page_cache"])
                   for r in rows if r["modelled"]},
                  key=lambda k: (k[1] != "warm", int(k[0].split("x")[0]),
                                 k[2]))
    return [(k, [r for r in rows if r["modelled"] and
                 (r["geometry"], r["cache"], r["page_cache"]) == k])
            for k in keys]


def error_table(rows):
    """The median absolute error, %, of the ratio, of every phase and of
    each total, a row an image, cache and page cache; the phases' column
    pools the six phases of every case."""
    out = ["| image | cache | page cache | cases | read/mmap | phases | "
           "read load | read scale | read release | mmap load | "
           "mmap scale | mmap release | read total | mmap total |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
           "---:|---:|"]
    for (geo, cache, kind), rs in error_groups(rows):
        pooled = [phase_err(r, ph, m) for r in rs for m in METHODS
                  for ph in PHASES]
        cells = ["%.0f" % (100 * stats.median(phase_err(r, ph, m)
                                               for r in rs))
                 for m in METHODS for ph in PHASES]
        cells += ["%.0f" % (100 * stats.median(phase_err(r, "total", m)
                                               for r in rs))
                  for m in METHODS]
        out.append("| %s | %s | %s | %d | %.0f | %.0f | %s |" % (
            geo, cache, kind, len(rs),
            100 * stats.median(abs(r["ratio_err"]) for r in rs),
            100 * stats.median(pooled), " | ".join(cells)))
    return out


def panel(ax, rows, folders, what):
    """One panel of the figure: ROWS' predicted against measured ratio,
    a marker a folder of FOLDERS, the scale factors as labels."""
    for i, fo in enumerate(folders):
        rs = [r for r in rows if r["folder"] == fo]
        ax.scatter([r["ratio_meas"] for r in rs],
                   [r["ratio_pred"] for r in rs], marker="os^vD<>"[i % 7],
                   color="C%d" % i, label=fo)
        for r in rs:
            ax.annotate("%+d" % r["scale"], (r["ratio_meas"],
                        r["ratio_pred"]), fontsize=7,
                        xytext=(3, 3), textcoords="offset points")
    vals = [r["ratio_meas"] for r in rows] + [r["ratio_pred"] for r in rows]
    lo, hi = min(vals + [1.0]) * 0.9, max(vals + [1.0]) * 1.1
    ax.plot([lo, hi], [lo, hi], color="gray", lw=0.8)
    ax.plot([lo, hi], [1.15 * lo, 1.15 * hi], color="gray", lw=0.5, ls=":")
    ax.plot([lo, hi], [lo / 1.15, hi / 1.15], color="gray", lw=0.5, ls=":")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_title(what, fontsize=9)
    ax.set_xlabel("measured read/mmap (medians)")
    ax.set_ylabel("predicted read/mmap")


def figure(path, rows, threads=()):
    """Predicted against measured ratio, reduce and enlarge apart, the
    cases the model is for (warm) only; THREADS: the runs' thread counts,
    for the title."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in rows if r["modelled"]]
    folders = sorted({r["folder"] for r in rows})
    parts = [(p, [r for r in rows if (r["scale"] < 0) == (p == "reduce")])
             for p in ("reduce", "enlarge")]
    parts = [(p, rs) for p, rs in parts if rs]
    if not parts:
        return
    fig, axes = plt.subplots(1, len(parts), figsize=(5 * len(parts), 5.2),
                             squeeze=False)
    for ax, (what, rs) in zip(axes[0], parts):
        panel(ax, rs, folders, what)
    states = sorted({"%s, %s page cache" % (r["cache"], r["page_cache"])
                     for r in rows})
    images = sorted({r["geometry"] for r in rows})
    fig.suptitle("Cost model against the runs: %s image%s, %s threads; "
                 "%s\ndotted: ±15%%; labels: scale factor" % (
                     ", ".join(images), "s" if len(images) > 1 else "",
                     "/".join(sorted(threads, key=int)) or "?",
                     "; ".join(states)), fontsize=9)
    # every folder in the legend: at most three a row, below the panels
    handles, labels = axes[0][0].get_legend_handles_labels()
    ncol = min(3, len(folders))
    fig.legend(handles, labels, loc="lower center", ncol=ncol,
               fontsize=8, frameon=False)
    nrows = -(-len(folders) // ncol)
    fig.tight_layout(rect=(0, 0.04 + 0.035 * nrows, 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def sun_pages(n):
    """The 8 KiB pages the seed's reduce loop reads by N: one byte a
    pixel (its defect) at i*1280 + j, rows and columns a step N."""
    off = len("P6\n1280 1024\n255\n")
    pages = set()
    for i in range(0, 1024, n):
        pages.add((off + i * 1280) // SUN_PAGE)
        pages.add((off + i * 1280 + 1279) // SUN_PAGE)
    return len(pages)


def sun_2002(table=None):
    """Solve Table 1 (or TABLE, {factor: (read s, mmap s)}) for the
    three costs of the same model: read's fixed cost A (copy + zero-fill
    + free), mmap's cost M a page it touches (fault + madvise + munmap),
    and the loop's cost S an output pixel: read = A + S P(N), mmap =
    M pages(N) + S P(N), least squares."""
    table = table or SUN_2002
    ns = sorted(table)
    px = [len(range(0, 1024, n)) * len(range(0, 1280, n)) for n in ns]
    a_rows, b = [], []
    for n, p in zip(ns, px):
        a_rows.append([1.0, 0.0, p])
        b.append(table[n][0])
        a_rows.append([0.0, sun_pages(n), p])
        b.append(table[n][1])
    (a, m, s), *_ = np.linalg.lstsq(np.array(a_rows), np.array(b),
                                    rcond=None)
    fit = {n: (a + s * p) / (m * sun_pages(n) + s * p)
           for n, p in zip(ns, px)}
    return a, m, s, fit, px


def sun_section(units):
    a, m, s, fit, px = sun_2002()
    raster = 1280 * 1024 * 3
    k = SUN_THREADS  # the assumption: each thread loads, scales, frees once
    copy_ns = a / k / raster * 1e9
    fault_us = m / k * 1e6
    px_ns = s / k * 1e9
    out = ["## 2002: Table 1 fitted, not predicted", "",
           "A fit, not a prediction: the model's three costs are chosen "
           "to match Table 1's %d times (3 parameters, %d degrees of "
           "freedom left), so its agreement with the table is no test of "
           "the model.  A prediction would need the Ultra 30's own "
           "published costs (its clock, memory bandwidth and a page "
           "fault's cost under Solaris 8); the seed names the machine "
           "and the system only, and none of those figures is in this "
           "repository with a source to cite (the %d MHz below, which "
           "turns the fitted costs into cycles, is the clock an Ultra 30 "
           "was sold with, uncited)." % (
               2 * len(SUN_2002), 2 * len(SUN_2002) - 3, SUN_MHZ), "",
           "Table 1 solved, by least squares, for the model's three costs "
           "(read's fixed cost A: the copy, the zero-fill of the buffer's "
           "pages and free(); mmap's cost M a page the scale reads: the "
           "fault, madvise and munmap; the loop's cost S an output pixel), "
           "with the seed's loop as published (one byte a pixel, so it "
           "reads the first %d of 480 8 KiB pages at ÷2 and %d at ÷8):"
           % (sun_pages(2), sun_pages(8)), "",
           "| ÷ | pages read (mmap) | output pixels | 2002 ratio | "
           "model's ratio |", "|---:|---:|---:|---:|---:|"]
    for n, p in zip(sorted(SUN_2002), px):
        out.append("| %d | %d | %d | %.2f | %.2f |" % (
            n, sun_pages(n), p, SUN_RATIOS[n], fit[n]))
    out += ["", "A = %.3f s, M = %.2f ms a page, S = %.2f µs a pixel, "
            "for all the runs' work together.  The seed does not say how "
            "many loads one timed run made; if each of its %d threads "
            "loaded, scaled and freed the image once, a load's copy and "
            "zero-fill cost %.1f ns a byte (%.0f cycles at %d MHz; %.0f "
            "MB/s), a page the mmap path reads %.0f µs (%.0f kcycles), and "
            "the loop %.0f ns an output pixel (%.0f cycles)."
            % (a, m * 1e3, s * 1e6, k, copy_ns,
               copy_ns * SUN_MHZ / 1e3, SUN_MHZ, 1e3 / copy_ns, fault_us,
               fault_us * SUN_MHZ / 1e3, px_ns, px_ns * SUN_MHZ / 1e3),
            "",
            "Here, for comparison (spcost): the fresh buffer's read %.2f ns"
            " a byte, a file fault %.1f µs mapping %.0f pages (large "
            "folios) or %.1f µs mapping %.0f (base pages), the reduce "
            "kernel %.2f ns a pixel." % (
                units["read_process"], units["file_fault_large"] / 1e3,
                units["file_pages_per_fault_large"],
                units["file_fault_small"] / 1e3,
                units["file_pages_per_fault_small"],
                units["reduce2_px"]), "",
            "Plausible?  The per-byte cost is of the order a late-1990s "
            "workstation's memory copy allows (tens to a few hundred "
            "MB/s: an assumption here, not a measured figure) once the "
            "zero-fill of 480 fresh 8 KiB pages is added to the copy.  The "
            "per-pixel cost fits the seed's unoptimised loop, which "
            "divides twice a pixel.  The per-page cost is the doubtful "
            "one: %.0f µs is far more than a minor fault on a cached page "
            "costs even at 296 MHz.  The table cannot tell it from a cost "
            "the mmap path pays once whatever the factor, because the "
            "seed's loop reads nearly the same pages at every factor "
            "(%s): mmap's fixed part, %.0f ms a run, could be faults that "
            "waited for the disk (the seed does not say its cache was "
            "warm) or the mapping's set-up and release.  Read minus mmap "
            "in Table 1 is nearly constant (%s s), as the model says it "
            "must be; the fit misses Table 1's ratios by at most %.0f%%." % (
                fault_us,
                ", ".join(str(sun_pages(n)) for n in sorted(SUN_2002)),
                m * sun_pages(2) / k * 1e3,
                ", ".join("%.2f" % (SUN_2002[n][0] - SUN_2002[n][1])
                          for n in sorted(SUN_2002)),
                100 * max(abs(fit[n] / SUN_RATIOS[n] - 1)
                          for n in SUN_RATIOS))]
    return out


# Why a phase is missed, where the comparison finds it the worst: the
# mechanisms the unit costs leave out, read off the code (work.c,
# input_mmap.c, parallel.c).
REASONS = {
    ("load", "read"): "the copy and the buffer's first faults in a "
    "process just started: spcost's read_process times them in one, but "
    "on a shared machine they swing with what else runs",
    ("scale", "read"): "ten threads on the CPUs the process gets: "
    "spcost times the kernel, the gate and the faults with ten threads "
    "at once, but a run's threads also wake one another item by item, "
    "and an enlarge's scaling shares the CPUs with the output's writer",
    ("scale", "mmap"): "as for read, plus the input's faults of ten "
    "threads at once, which spcost times on a file of its own, and the "
    "finisher's madvise flushing the other CPU's TLB mid-item",
    ("release", "read"): "free() of the raster in a process with ten "
    "threads' stacks and chunks to unmap too",
    ("release", "mmap"): "the madvise calls made during the run, by "
    "whichever thread finishes an item while the others run: each waits "
    "for the other CPU's TLB flush, and the thread may lose its CPU "
    "meanwhile (spcost's madvise_file_*_busy has one busy thread, not "
    "nine); and the last one, which overlaps the workers' exits, each "
    "giving its stack back with a madvise of its own, where spcost's "
    "madvise_file_* gives pages back in a process of one thread",
    ("load", "mmap"): "a few system calls and first touches in a "
    "process just started: spcost times the calls once each in a "
    "process just exec'd (load_open_first, load_map_first), but a "
    "first call's cost swings with what the caches hold",
}


def worst_phase(r):
    """The phase and method whose measured time, put in place of the
    predicted one, brings the predicted ratio nearest the measured."""
    best, best_err = None, r["ratio_err"]
    for m in METHODS:
        for ph in PHASES:
            t = {x: r["pred_total_" + x] for x in METHODS}
            t[m] += r["meas_%s_%s" % (ph, m)] - r["pred_%s_%s" % (ph, m)]
            err = t["read"] / t["mmap"] / r["ratio_meas"] - 1
            if abs(err) < abs(best_err):
                best, best_err = (ph, m), err
    return best, best_err


def failures(rows, limit=0.15):
    """Where the model misses: each phase's median predicted/measured,
    and the cases whose ratio is off by more than LIMIT, each with the
    phase that explains most of it."""
    bias = phase_bias(rows)
    out = ["Median predicted/measured a phase over these cases:", "",
           "| phase | read | mmap |", "|---|---:|---:|"]
    for ph in PHASES:
        out.append("| %s | %.2f | %.2f |" % (ph, bias[(ph, "read")],
                                            bias[(ph, "mmap")]))
    missed = [r for r in rows if abs(r["ratio_err"]) > limit]
    if not missed:
        return out + ["", "Every ratio within %.0f%%." % (100 * limit)]
    out += ["", "Ratios off by more than %.0f%%, and the one phase whose "
            "measured time would bring them nearest:" % (100 * limit), ""]
    seen = set()
    for r in missed:
        found, left = worst_phase(r)
        if found is None:
            out.append("- %+d: %+.0f%%; no one phase explains it" % (
                r["scale"], 100 * r["ratio_err"]))
            continue
        ph, m = found
        seen.add((ph, m))
        out.append("- %+d: %+.0f%%; %s %s predicted %s µs, measured %s "
                   "(with it: %+.0f%%)" % (
                       r["scale"], 100 * r["ratio_err"], m, ph,
                       us(r["pred_%s_%s" % (ph, m)]),
                       us(r["meas_%s_%s" % (ph, m)]),
                       100 * left))
    out += [""] + ["Why %s %s misses: %s." % (m, ph, REASONS[(ph, m)])
                   for ph, m in sorted(seen)]
    return out


def case_of(folder):
    """The case FOLDER's runs are of: its folder_name less the session."""
    return folder_name(folder).split("/")[0]


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else None


def of_case(runs, scale, method):
    return [r for r in runs
            if int(r["scale"]) == scale and r["method"] == method]


def capped(faults, per, size):
    """The bytes FAULTS faults of PER pages each map at most: the pages
    of a file of SIZE bytes at the most; None without PER."""
    if per is None:
        return None
    pages = -(-size // model.PAGE)
    return min(pages, max(faults, 0.0) * per) * model.PAGE


def touched_rows(units, folders, forced=None):
    """A row a case, fault-around and factor: the bytes and pages each
    path touches by the geometry (model.touched; geo_ exact, pred_ with
    spcost's pages a fault) beside the runs' measures (meas_, means of
    the runs, the sessions of a case with one fault_around_pages
    pooled).  The scale's faults count the output chunks' and the
    threads' own besides the input's; the read path's have all but the
    input's, so the difference of the two paths' means is the input's
    (meas_mmap_input_faults).  A fault maps at most fault_around_pages
    pages (measured by sun.sh, spcache faultaround), so the faults
    measured map at most that many, the file's pages at the most."""
    groups = {}
    for folder in folders:
        runs = model.read_runs(folder)
        if not runs:
            continue
        env = model.settings_of(folder)
        fa = env.get("fault_around_pages", "")
        fa = int(fa) if fa.isdigit() else None
        g = groups.setdefault((case_of(folder), fa),
                              {"runs": [], "sessions": 0, "folios": []})
        g["runs"] += runs
        g["sessions"] += 1
        if env.get("folios") and env["folios"] not in g["folios"]:
            g["folios"].append(env["folios"])
    rows = []
    for (case, fa), g in sorted(groups.items(),
                                key=lambda kv: (kv[0][0], kv[0][1] or 0)):
        runs, first = g["runs"], g["runs"][0]
        geo = forced or model.geometry_of(first["image"])
        kind = first.get("page_cache", "large")
        threads = int(first.get("threads") or 10)
        scales = sorted({int(r["scale"]) for r in runs},
                        key=lambda s: (s > 0, abs(s)))
        for s in scales:
            rd, mm = of_case(runs, s, "read"), of_case(runs, s, "mmap")
            if not rd or not mm:
                continue
            t = model.touched(units, geo, s, kind, threads)
            size = t["file_bytes"]
            row = {"case": case, "sessions": g["sessions"],
                   "runs_read": len(rd), "runs_mmap": len(mm),
                   "geometry": "%dx%d" % geo, "page_cache": kind,
                   "scale": s, "fault_around_pages": fa,
                   "folios": " / ".join(g["folios"]),
                   "geo_file_bytes": size,
                   "geo_read_copy_bytes": t["read_copy_bytes"],
                   "geo_read_load_pages": t["read_load_pages"],
                   "geo_read_load_bytes": t["read_load_pages"] * model.PAGE}
            load = {m: mean(float(r["load_minflt"]) for r in rs)
                    for m, rs in (("read", rd), ("mmap", mm))}
            flt = {m: mean(float(r["scale_minflt"]) for r in rs)
                   for m, rs in (("read", rd), ("mmap", mm))}
            row.update(
                meas_read_load_pages=load["read"],
                meas_read_load_bytes=load["read"] * model.PAGE,
                meas_mmap_load_pages=load["mmap"],
                meas_read_buffer_pages=load["read"] - load["mmap"],
                geo_mmap_input_bytes=t["mmap_input_bytes"],
                pred_mmap_input_faults=t["mmap_input_faults"],
                pred_mmap_mapped_pages=t["mmap_mapped_pages"],
                pred_mmap_mapped_bytes=t["mmap_mapped_pages"] * model.PAGE,
                geo_mmap_drop_calls=t["mmap_drop_calls"],
                meas_mmap_scale_faults=flt["mmap"],
                meas_read_scale_faults=flt["read"],
                meas_mmap_input_faults=flt["mmap"] - flt["read"],
                meas_mmap_mapped_bytes_max=capped(flt["mmap"], fa, size),
                meas_mmap_input_mapped_bytes_max=capped(
                    flt["mmap"] - flt["read"], fa, size))
            rows.append(row)
    return rows


def kib(x):
    return "–" if x is None else "%.0f" % (x / 1024)


def touched_table(rows):
    out = ["| scale | read(): copied KiB [G] | read: the load's new pages, "
           "measured / expected [M / G] | mmap: rows read KiB [G] | mmap: "
           "KiB mapped, predicted (faults) [P] | mmap: scale faults "
           "(the input's) [M] | mmap: KiB those map at most (the input's)"
           " [M] |",
           "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append("| %d | %s | %.1f / %d | %s | %s (%d) | %.1f (%.1f) | "
                   "%s (%s) |" % (
                       r["scale"], kib(r["geo_read_copy_bytes"]),
                       r["meas_read_load_pages"], r["geo_read_load_pages"],
                       kib(r["geo_mmap_input_bytes"]),
                       kib(r["pred_mmap_mapped_bytes"]),
                       r["pred_mmap_input_faults"],
                       r["meas_mmap_scale_faults"],
                       r["meas_mmap_input_faults"],
                       kib(r["meas_mmap_mapped_bytes_max"]),
                       kib(r["meas_mmap_input_mapped_bytes_max"])))
    return out


def factors(rows):
    return ", ".join("%+d" % r["scale"] for r in rows)


def touched_notes(units, rows, limit=0.25):
    """Where a case's measures and its geometry disagree, and by how
    much."""
    r0 = rows[0]
    d = [r["meas_read_load_pages"] - r["geo_read_load_pages"] for r in rows]
    buf = mean(r["meas_read_buffer_pages"] for r in rows)
    out = ["- read, the load's new pages: measured − expected from %+.1f "
           "to %+.1f (mean %+.1f); the read runs' minus the mmap runs' "
           "(the buffer's, measured): %.1f, against %d pages of raster." % (
               min(d), max(d), mean(d), buf,
               -(-r0["geo_read_copy_bytes"] // model.PAGE))]
    per = units.get("file_pages_per_fault_" + r0["page_cache"])
    fa = r0["fault_around_pages"]
    if per is not None and fa is not None:
        out.append("- mmap, the pages a fault maps: %.0f in the model "
                   "(spcost's file_pages_per_fault_%s, a mean over a read "
                   "of the whole file), %d in the sessions "
                   "(fault_around_pages, one fault at the file's middle)%s."
                   % (per, r0["page_cache"], fa,
                      "" if abs(per / fa - 1) <= limit else ": they disagree"))
    ratio = [r["pred_mmap_mapped_bytes"] / r["geo_mmap_input_bytes"]
             for r in rows]
    out.append("- mmap maps, as the model has it, %.1f to %.1f times the "
               "bytes its scale reads." % (min(ratio), max(ratio)))
    off = [r for r in rows if abs(r["meas_mmap_input_faults"] -
                                  r["pred_mmap_input_faults"]) >
           max(2, limit * r["pred_mmap_input_faults"])]
    if off:
        out.append("- mmap, the input's faults: measured off the predicted "
                   "by more than %.0f%% (and 2) at %d of %d factors: %s "
                   "(measured, predicted)." % (
                       100 * limit, len(off), len(rows), "; ".join(
                           "%+d: %.1f, %d" % (
                               r["scale"], r["meas_mmap_input_faults"],
                               r["pred_mmap_input_faults"]) for r in off)))
    else:
        out.append("- mmap, the input's faults: measured within %.0f%% "
                   "(or 2) of the predicted at every factor." % (
                       100 * limit))
    if fa is not None:
        short = [r for r in rows if r["meas_mmap_input_mapped_bytes_max"] <
                 r["pred_mmap_mapped_bytes"]]
        whole = -(-r0["geo_file_bytes"] // model.PAGE) * model.PAGE
        full = [r for r in rows
                if r["meas_mmap_input_mapped_bytes_max"] == whole]
        if short:
            out.append("- mmap: the input's faults measured could not map "
                       "the pages predicted at %s." % factors(short))
        out.append("- mmap: the input's faults measured could map the "
                   "whole file at %d of %d factors; a bound, not a count "
                   "of the pages mapped." % (len(full), len(rows)))
    return out


def touched_section(units, rows):
    out = ["## Bytes each path touches", "",
           "Each case's sessions pooled (those with one fault_around_pages)"
           "; measures are means of the runs.  [G]: the code's geometry, "
           "exact; [P]: the model (the geometry, with spcost's pages a "
           "fault); [M]: measured.  read() copies the raster, not the "
           "header (load_read.c seeks past it; both paths' header reader "
           "preads the first %d bytes besides).  The load's new pages are "
           "the read runs' load_minflt; expected: the raster's pages and "
           "the %d the load touches on either path (LOAD_FIRST_TOUCH).  "
           "glibc's malloc gives a buffer this large a mapping of its own "
           "with a 16-byte header before it, so the buffer may span one "
           "page more than the raster's.  The mmap path's scale reads "
           "whole rows, one in N for a reduce by N (within a row, one "
           "pixel in N: in every cache line up to N = 21); the model "
           "maps the aligned window of pages about each page read.  The "
           "scale faults are the mmap runs' scale_minflt; in brackets, "
           "less the read runs' (the output chunks' and the threads' "
           "faults, which both paths take): the input's.  Those map at "
           "most fault_around_pages pages each (measured a session, "
           "env.txt), the file's pages at the most.  bytes.csv has the exact "
           "bytes." % (model.HEADER_BLOCK, model.LOAD_FIRST_TOUCH)]
    for key in sorted({(r["case"], r["fault_around_pages"] or 0)
                       for r in rows}):
        rs = [r for r in rows
              if (r["case"], r["fault_around_pages"] or 0) == key]
        r0 = rs[0]
        out += ["", "### %s" % r0["case"], "",
                "%d session(s), %d runs a path and factor; %s, %s page "
                "cache; fault_around_pages %s; folios (KiB:count) %s; the "
                "file %d bytes." % (
                    r0["sessions"], r0["runs_read"], r0["geometry"],
                    r0["page_cache"], r0["fault_around_pages"] or "?",
                    r0["folios"] or "?", r0["geo_file_bytes"]), ""]
        out += touched_table(rs) + [""] + touched_notes(units, rs)
    return out


def cpus_note(units_paths):
    """Each units file's median cpus, in words."""
    return ", ".join("%s in `%s`" % (
        "%.2f" % u["cpus"] if "cpus" in u else "not measured",
        os.path.basename(p)) for p, u in (
            (p, model.read_units([p])) for p in units_paths))


def held_out_note(units_paths):
    """Which units files stood in for which (model.STAND_INS), in
    words."""
    missing = sorted({k for p in units_paths
                      for k in model.stand_ins(model.read_units([p]))[1]})
    if not missing:
        return ("every unit measured under the runs' conditions (10 "
                "threads at once, madvise with the other CPU busy)")
    return ("these units are an older spcost's, without %s: the model "
            "stands in for them with the single-thread costs shared over "
            "the CPUs (model.STAND_INS), so they are not measured under "
            "the runs' conditions" % ", ".join("`%s`" % k for k in missing))


def write_all(out_dir, units, rows, units_paths, touched=None,
              threads=()):
    write_csv(os.path.join(out_dir, "model.csv"), rows)
    if touched is not None:
        write_csv(os.path.join(out_dir, "bytes.csv"), touched, "%.10g")
    if rows:
        figure(os.path.join(out_dir, "model.png"), rows, threads)
    target = sun_cases(rows)
    lines = ["# The cost model: predicted against measured", "",
             "Unit costs from `%s` (spcost, measured apart from the runs; "
             "a unit's median over the files); "
             "runs from %s.  Times in µs, medians of the runs, measured → "
             "predicted; the ratio is of the median totals (load + scale + "
             "release), beside the mean ratio and its 95%% bootstrap "
             "interval.  Generated by `python3 -m spreport.model`." % (
                 "`, `".join(os.path.basename(u) for u in units_paths),
                 ", ".join(sorted({"`%s`" % r["folder"] for r in rows})))]
    if target:
        errs = [abs(r["ratio_err"]) for r in target]
        pooled = [phase_err(r, ph, m) for r in target for m in METHODS
                  for ph in PHASES]
        err = stats.median(errs)
        lines += ["", "**Median absolute error of the predicted read/mmap "
                  "ratio over the %d warm cases: %.1f%%; of the phases: "
                  "%.1f%%** (target: at most 15%% on the ratio: %s)." % (
                      len(errs), 100 * err, 100 * stats.median(pooled),
                      "met" if err <= 0.15 else "missed")]
    if rows:
        lines += ["", "## Error by image, page cache and phase", "",
                  "Each folder's runs predicted from the units measured "
                  "at the other moments (units-K.csv for a session-N "
                  "folder, K not N: held out; all of them where a folder "
                  "is no session); %s.  Median absolute error, %%, of "
                  "predicted against measured: the read/mmap ratio, the "
                  "six phases of every case pooled, each phase, each "
                  "path's total.  Cold cases are judged where the units "
                  "have the cold file's costs (read_cold)." % (
                      held_out_note(units_paths)), ""]
        lines += error_table(rows)
        lines += ["", "The machine is shared: the share of its CPUs the "
                  "process got while spcost measured (its `cpus`, median "
                  "a file) was %s.  Units measured at one share predict "
                  "runs made at another no better than the share "
                  "agrees." % cpus_note(units_paths)]
    for fo in sorted({r["folder"] for r in rows}):
        rs = [r for r in rows if r["folder"] == fo]
        note = "" if rs[0]["modelled"] else (
            " (cold: these units have no device costs; shown, not "
            "judged)")
        lines += ["", "## %s%s" % (fo, note), ""] + folder_table(rs)
        lines += [""] + failures(rs)
    if touched:
        lines += [""] + touched_section(units, touched)
    lines += ["", "## Unit costs", "", "The model's inputs (spcost, at "
              "the smallest size measured; `thread`, `read_fresh`, "
              "`anon_fault_4k`, `memcpy`, `madvise_anon`, `free_large`, "
              "`file_fault_page_*`, `cpus`, `wake_remote`, `switch_local` "
              "and the single-thread `anon_fault_2m` are measured as "
              "checks and not used: see model.py).", "",
              "| unit | value |", "|---|---:|"]
    lines += ["| %s | %.4g |" % kv for kv in sorted(units.items())]
    lines += [""] + sun_section(units)
    with open(os.path.join(out_dir, "model.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
