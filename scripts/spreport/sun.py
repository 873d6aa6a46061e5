"""The Sun 2002 study's report: from a run folder's runs.csv (one row a
scaleppm run, as run_experiments.sh writes it) its summary.csv, table1.md
and figure1.png; and, from several folders of the same case run in
independent sessions, the table of how far the sessions agree.

A run's time is load + scale + release (the study's read/scale/free
against mmap/scale/free); write is kept apart, and in the study's case
(runs.csv's output none) there is none: scaleppm --no-output.  The ratio of a scale is
mean(read) / mean(mmap) with its 95% bootstrap interval (stats.py)."""
import os
from dataclasses import dataclass, field

from . import figures, sessinfo, stats
from .tables import (ReportError, markdown_table, number, read_rows,
                     write_text)

METHODS = ("read", "mmap")

# The per-run fields kept: their runs.csv names; times are in ns there and
# in ms in summary.csv, where their names end _ms.
FIELDS = ("load_ns", "scale_ns", "release_ns", "write_ns",
          "load_minflt", "load_majflt", "scale_minflt", "scale_majflt",
          "release_minflt", "release_majflt", "write_minflt", "write_majflt")
TIMES = FIELDS[:4]
NEED = ("scale", "method", "load_ns", "scale_ns", "release_ns")
CONTEXT = ("image", "cache", "page_cache", "threads", "output", "cpus")

# What a run wrote (runs.csv's output column, since issue 30): the case's
# words in tables and titles.  Older runs have no such column (each wrote
# a file), and their reports are made as they were.
OUTPUT_WORDS = {"none": "no output written, as 2002",
                "file": "output written to a file"}
OUTPUT_SENTENCE = {
    "none": "No output was written (scaleppm --no-output): every row was "
            "scaled and dropped, so the span is the study's, with no write "
            "in it or beside it.",
    "file": "Each run wrote its output to a file: the write (write ms) is "
            "timed apart, but it overlaps the scale."}

# The 2002 study, Table 1: reduce factor -> read s, mmap s, read/mmap.
SUN2002 = {-2: (5.48, 4.79, 1.14), -3: (3.11, 2.44, 1.28),
           -4: (2.25, 1.52, 1.48), -8: (1.26, 0.62, 2.03)}


def label(name):
    return name[:-3] + "_ms" if name in TIMES else name


@dataclass
class Case:
    """One scale factor's runs: per method, per field, the values."""
    scale: int
    runs: dict = field(default_factory=lambda: {m: {f: [] for f in FIELDS}
                                                for m in METHODS})

    def totals(self, method):
        r = self.runs[method]
        return [a + b + c for a, b, c in
                zip(r["load_ns"], r["scale_ns"], r["release_ns"])]

    def n(self, method):
        return len(self.runs[method]["load_ns"])

    def mean(self, method, name):
        v = self.runs[method][name]
        return sum(v) / len(v)

    def summary(self, method):
        return stats.summarize(self.totals(method)) if self.n(method) else None

    def ratio(self):
        """The read/mmap Ratio, or None where a method has no runs or
        mmap's mean is 0."""
        if not self.n("read") or not self.n("mmap"):
            return None
        try:
            return stats.ratio_bootstrap(self.totals("read"),
                                         self.totals("mmap"))
        except ValueError:
            return None


@dataclass
class Runs:
    path: str
    cases: list      # Case, in the order their scales first appear
    context: dict    # CONTEXT's columns (and folio) from the first run

    @property
    def cache(self):
        return self.context.get("cache", "?")

    @property
    def folio(self):
        """The folio size of the cached input: measured (runs.csv's
        folio_kib, the size holding most of the input's bytes) where
        known, else how the input was written."""
        kib = self.context.get("folio_kib", "?")
        if kib not in ("", "?"):
            return f"{kib} KiB"
        return self.context.get("page_cache", "?")

    def describe(self):
        return ", ".join(f"{k}={self.context[k]}" for k in CONTEXT
                         if k in self.context)


def read_runs(path):
    """runs.csv at PATH as Runs; ReportError when it has no runs, lacks a
    column of NEED, or a row has a bad method or number."""
    rows = read_rows(path, NEED)
    if not rows:
        raise ReportError(f"{path}: no runs")
    cases = {}
    for row in rows:
        method = row["method"]
        if method not in METHODS:
            raise ReportError(f"{path}:{row['_line']}: bad method "
                              f"\"{method}\"")
        scale = int(number(row, "scale", path))
        case = cases.setdefault(scale, Case(scale))
        for f in FIELDS:
            case.runs[method][f].append(number(row, f, path)
                                        if f in row else 0.0)
    context = {k: rows[0][k] for k in CONTEXT + ("folio_kib",)
               if k in rows[0]}
    return Runs(path, sorted(cases.values(), key=lambda c: scale_key(c.scale)),
                context)


def scale_key(scale):
    """Reduces first, by factor, then enlarges: the order of the tables,
    whatever order the factors ran in."""
    return (scale > 0, abs(scale))


def summary_csv(runs, ratios):
    head = ["scale"]
    for m in METHODS:
        head += [f"{m}_n"] + [f"{m}_{s}_ms" for s in
                              ("mean", "sd", "median", "min", "max")]
        head += [f"{m}_{label(f)}_mean" for f in FIELDS]
    head += ["ratio", "ratio_lo", "ratio_hi", "ratio_2002"]
    lines = [",".join(head)]
    for case, r in zip(runs.cases, ratios):
        cells = [str(case.scale)]
        for m in METHODS:
            s = case.summary(m)
            if s is None:
                cells += ["0"] + [""] * (5 + len(FIELDS))
                continue
            cells += [str(s.n)] + [f"{v / 1e6:.4f}" for v in
                                   (s.mean, s.sd, s.median, s.min, s.max)]
            cells += [f"{case.mean(m, f) / 1e6:.4f}" if f in TIMES
                      else f"{case.mean(m, f):.1f}" for f in FIELDS]
        cells += ([f"{r.ratio:.4f}", f"{r.lo:.4f}", f"{r.hi:.4f}"] if r
                  else ["", "", ""])
        cells.append(f"{SUN2002[case.scale][2]:.2f}"
                     if case.scale in SUN2002 else "")
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


def ms_cell(s):
    if s is None:
        return ""
    return f"{s.mean / 1e6:.3f} ± {s.sd / 1e6:.3f} ({s.median / 1e6:.3f})"


def span(runs_list):
    """What RUNS_LIST's runs wrote and the CPUs they ran on, for a title:
    a list of words, empty for runs that record neither."""
    parts = []
    outs = sorted({r.context.get("output", "") for r in runs_list})
    if outs != [""]:
        parts.append("/".join(OUTPUT_WORDS.get(o, o or "?") for o in outs))
    cpus = sorted({r.context.get("cpus", "") for r in runs_list})
    if cpus != [""]:
        parts.append(f"{'/'.join(c or '?' for c in cpus)} "
                     f"CPU{'' if cpus == ['1'] else 's'}")
    return parts


def span_sentences(runs):
    """RUNS's case in words for table1.md: what each run wrote, and the
    CPUs its threads shared; "" for runs that record neither."""
    text = ""
    if runs.context.get("output") in OUTPUT_SENTENCE:
        text += " " + OUTPUT_SENTENCE[runs.context["output"]]
    if runs.context.get("cpus"):
        text += (f" The {runs.context.get('threads', '?')} threads ran on "
                 f"{runs.context['cpus']} CPU"
                 f"{'' if runs.context['cpus'] == '1' else 's'}"
                 + (", as on the Ultra 30, which had one."
                    if runs.context["cpus"] == "1" else "."))
    return text


def table1_md(runs, ratios):
    case = "; ".join(span([runs]))
    out = ["# Table 1: read/scale/free vs mmap/scale/free"
           + (f" ({case})" if case else ""), "",
           f"{runs.describe()}.{span_sentences(runs)} "
           "Times are load + scale + release, in ms: "
           "mean ± sample standard deviation (median) over n runs. The "
           "ratio's interval is a 95% percentile bootstrap "
           f"({stats.BOOT_ITERS} resamples). Negative scales reduce, "
           "positive enlarge; * marks the study's factors. The 2002 "
           "columns are the Sun study's, in seconds, on a 296 MHz Ultra "
           "30.", ""]
    rows = []
    for case, r in zip(runs.cases, ratios):
        sun = SUN2002.get(case.scale)
        rows.append([f"{case.scale}{'*' if sun else ''}",
                     f"{case.n('read')}/{case.n('mmap')}",
                     ms_cell(case.summary("read")),
                     ms_cell(case.summary("mmap")),
                     f"{r.ratio:.2f}" if r else "",
                     f"{r.lo:.2f}–{r.hi:.2f}" if r else ""]
                    + ([f"{v:.2f}" for v in sun] if sun else ["", "", ""]))
    out += markdown_table(
        ["scale", "n read/mmap", "read (ms)", "mmap (ms)", "read/mmap",
         "95% CI", "2002 read (s)", "2002 mmap (s)", "2002 read/mmap"],
        "rrrrrlrrr", rows)
    out += ["", "## Page faults per run (mean), by phase", ""]
    rows = []
    for case in runs.cases:
        for m in METHODS:
            if not case.n(m):
                continue
            rows.append([str(case.scale), m]
                        + [f"{case.mean(m, f):.1f}" for f in
                           ("load_minflt", "load_majflt", "scale_minflt",
                            "scale_majflt", "release_minflt")]
                        + [f"{case.mean(m, f) / 1e6:.3f}" for f in TIMES])
    out += markdown_table(
        ["scale", "method", "load minor", "load major", "scale minor",
         "scale major", "release minor", "load ms", "scale ms",
         "release ms", "write ms"], "rlrrrrrrrrr", rows)
    return "\n".join(out) + "\n"


def cache_folio(runs_list):
    """The cache state and folio size of RUNS_LIST: one value each where
    all agree, else every value, joined by /."""
    cache = "/".join(sorted({r.cache for r in runs_list}))
    folio = "/".join(sorted({r.folio for r in runs_list}))
    return f"{cache} cache, folio {folio}"


def state(runs_list):
    """The cache state and folio size of RUNS_LIST, for a title
    (cache_folio's), then span's words, where the runs record them."""
    return cache_folio(runs_list) + "".join(
        "; " + p for p in span(runs_list))


def title_of(runs_list):
    """A figure's title for RUNS_LIST: the image (its name carries its
    size), the threads, the cache state and folio size; on a line of its
    own, span's words, where the runs record them."""
    image = "/".join(sorted({r.context.get("image", "?") for r in runs_list}))
    threads = "/".join(sorted({r.context.get("threads", "?")
                               for r in runs_list}))
    words = span(runs_list)
    return (f"{image}, {threads} threads, {cache_folio(runs_list)}"
            + ("\n" + "; ".join(words) if words else ""))


def ratio_figure(path, series, title):
    """PATH: read/mmap against the factor, one panel for reduce (beside
    the 2002 ratios) and one for enlarge, each only where some series has
    a ratio there.  SERIES: (label, {scale: Ratio}) pairs; every panel's
    title carries TITLE (title_of's: image, threads, cache state and folio
    size)."""
    kinds = []
    for name, sign in (("reduce", -1), ("enlarge", 1)):
        if any(s * sign > 0 for _, rs in series for s in rs):
            kinds.append((name, sign))
    if not kinds:
        kinds = [("reduce", -1)]  # the 2002 ratios alone: still data
    fig, axes = figures.panels(len(kinds))
    width = 0.5 / max(len(series), 1)
    for ax, (name, sign) in zip(axes, kinds):
        for i, (lab, rs) in enumerate(series):
            pts = sorted((s * sign, r) for s, r in rs.items()
                         if s * sign > 0)
            if not pts:
                continue
            off = (i - (len(series) - 1) / 2) * width
            xs = [x + off for x, _ in pts]
            ys = [r.ratio for _, r in pts]
            err = [[r.ratio - r.lo for _, r in pts],
                   [r.hi - r.ratio for _, r in pts]]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=4, lw=2,
                        color=figures.COLOURS[i % len(figures.COLOURS)],
                        label=lab)
        if sign < 0:
            sx = sorted(-s for s in SUN2002)
            ax.plot(sx, [SUN2002[-x][2] for x in sx], "s--", lw=2,
                    color="black", label="Sun 2002 (Ultra 30, Solaris 8)")
        ax.axhline(1, color="gray", lw=1)
        ax.set_xlabel(f"{name} factor N (output is "
                      f"{'1/N by 1/N' if sign < 0 else 'N by N'})")
        ax.set_ylabel("read time / mmap time")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.4)
        ax.set_title(f"{name}: read/scale/free ÷ mmap/scale/free\n{title}")
        figures.legend_below(ax, ncol=2)
    figures.save(fig, path)


def report(folder):
    """FOLDER's summary.csv, table1.md and figure1.png from its
    runs.csv.  ReportError when runs.csv cannot be read or a file cannot
    be written (nothing is written then, or only whole files)."""
    runs = read_runs(os.path.join(folder, "runs.csv"))
    ratios = [c.ratio() for c in runs.cases]
    summary = summary_csv(runs, ratios)
    table = table1_md(runs, ratios)
    write_text(os.path.join(folder, "summary.csv"), summary)
    write_text(os.path.join(folder, "table1.md"), table)
    ratio_figure(os.path.join(folder, "figure1.png"),
                 [("this machine (95% CI)",
                   {c.scale: r for c, r in zip(runs.cases, ratios) if r})],
                 title_of([runs]))
    return table


VERDICT = {1: "mmap faster", -1: "read faster", 0: "cannot separate"}


def sessions(out, folders):
    """OUT/sessions.md, sessions.csv and sessions.png from FOLDERS, each
    the runs.csv of one independent session of the same case: per scale,
    each session's ratio and its 95% interval, the spread between the
    sessions, and a winner named only where every session's interval
    excludes 1 on the same side (else "cannot separate").  ReportError
    when the sessions are not of one case (image, cache, page cache,
    threads), or fewer than two."""
    if len(folders) < 2:
        raise ReportError("--sessions needs two or more session folders")
    all_runs = [read_runs(os.path.join(f, "runs.csv")) for f in folders]
    # Sessions of different cases would make the verdict meaningless.
    for k in CONTEXT:
        seen = {r.context.get(k) for r in all_runs}
        if len(seen) > 1:
            raise ReportError(f"--sessions: not one case: {k} is "
                              + " in one, ".join(sorted(map(str, seen)))
                              + " in another")
    os.makedirs(out, exist_ok=True)
    names = [os.path.basename(os.path.abspath(f)) for f in folders]
    if len(set(names)) < len(names):  # a column each: number them
        names = [f"{i}: {n}" for i, n in enumerate(names, start=1)]
    ratios = [{c.scale: c.ratio() for c in r.cases} for r in all_runs]
    scales = sorted({c.scale for r in all_runs for c in r.cases},
                    key=scale_key)
    csv = ["scale,session,ratio,ratio_lo,ratio_hi"]
    rows, verdicts = [], []
    for s in scales:
        cells = [f"{s}{'*' if s in SUN2002 else ''}"]
        got, intervals = [], []
        for name, rs in zip(names, ratios):
            r = rs.get(s)
            cells.append(f"{r.ratio:.2f} ({r.lo:.2f}–{r.hi:.2f})" if r
                         else "")
            if r:
                got.append(r.ratio)
                intervals.append((r.lo, r.hi))
                csv.append(f"{s},{name},{r.ratio:.6f},{r.lo:.6f},"
                           f"{r.hi:.6f}")
        if len(got) == len(folders):
            spread = stats.between_sessions(got)
            cells.append(f"{spread.lo:.2f}–{spread.hi:.2f}")
            verdict = VERDICT[stats.separated(intervals)]
        else:
            cells.append("")
            verdict = "not in every session"
        cells.append(verdict)
        cells.append(f"{SUN2002[s][2]:.2f}" if s in SUN2002 else "")
        rows.append(cells)
        verdicts.append(verdict)
    text = ["# Table 1 across sessions: read/mmap", "",
            f"{len(folders)} independent sessions of one case "
            f"({state(all_runs)}; "
            + "; ".join(f"{n}: {r.describe()}"
                        for n, r in zip(names, all_runs))
            + "). Each session's read/mmap ratio of load + scale + release"
            " with its 95% percentile bootstrap interval within that "
            "session; \"between sessions\": the smallest and largest of "
            "the sessions' ratios. The verdict names the faster path "
            "only where every session's 95% interval excludes 1 on the "
            "same side; otherwise \"cannot separate\" (an interval "
            "contains 1, or the sessions fall on opposite sides). * marks the study's factors; "
            "2002: the Sun study's ratio.", ""]
    text += markdown_table(["scale"] + names + ["between sessions",
                                                "verdict", "2002"],
                           "r" + "r" * len(names) + "rlr", rows)
    text += [""] + sessinfo.section(names, folders)
    write_text(os.path.join(out, "sessions.csv"), "\n".join(csv) + "\n")
    write_text(os.path.join(out, "sessions.md"), "\n".join(text) + "\n")
    ratio_figure(os.path.join(out, "sessions.png"),
                 [(f"{n} (95% CI)",
                   {s: r for s, r in rs.items() if r})
                  for n, rs in zip(names, ratios)],
                 title_of(all_runs))
    return "\n".join(text) + "\n"
