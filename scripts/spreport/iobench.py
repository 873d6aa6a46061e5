"""The iobench suites' report (syscall-vs-mmap, zero-page, random-access,
copy, and whatever experiments iobench grows): from its CSV rows
(experiment,case,param,method,metric,value,unit,seed,check, and since
issue 30 file_bytes,threads; see src/experiments/iobench/bench.h) a
Markdown table and a figure.

A measurement is the tuple (experiment, case, param, method, metric); it
may come on several rows, one a repeat.  The report gives its median and
the min-max over the repeats, beside the seed's figure (the source
document's, same unit) where there is one.  Nothing here knows the list of
experiments or methods: it reports whatever rows there are."""
import os
from dataclasses import dataclass, field

from . import figures, stats
from .tables import (ReportError, fmt_g, markdown_table, number, read_rows,
                     write_text)

NEED = ("experiment", "case", "param", "method", "metric", "value", "unit",
        "seed")

# Optional columns of the page cache's state, named in the figure's title
# where the rows have them; else the title says the case names carry it.
STATE = ("cache", "folio")

# Optional columns of what the measurement read and ran on (iobench writes
# them since issue 30; older rows have neither): the file's size in bytes,
# empty where it read none, and the threads.  Where the rows have them the
# figure's title names them; rows without keep the older title.
INPUT = ("file_bytes", "threads")

# The page cache's state, by experiment, for the title where the rows have
# no column for it: as src/experiments/iobench/exp_*.c set it up.
CACHE_WORDS = {
    "syscall-vs-mmap": "-warm, bandwidth: file in the page cache (what a "
                       "-memlimit limit leaves of it); -cold: evicted "
                       "before each pass",
    "zero-page": "anonymous memory: no file, no page cache",
    "random-access": "file cached; write-nonresident: evicted first",
    "copy": "source evicted before each copy",
    "cdb": "database cached (warm) or evicted before each lookup (cold)",
}

# The figure's metric of the suites that have one to prefer; any other
# experiment shows its first metric that is not a ratio.
MAIN_METRIC = {"syscall-vs-mmap": "throughput", "zero-page": "time",
               "random-access": "latency", "copy": "real",
               "cdb": "latency"}


# Where a seed's figure comes from, by (experiment, case): a case whose
# seed figure was measured elsewhere than the others' gets its own marker
# and label; None: the seed measured another condition than the case (the
# figure stays in the table, beside its label, but is not drawn beside
# these bars).  A case not named here: "the seed's figure", a diamond.
SEED_SOURCE = {
    # exp_zero.c: the set-up and the touched rounds hold the seed's Linux
    # VM figures, the untouched rounds its Solaris 11 figures
    ("zero-page", "setup"): "the seed's figure, Linux VM",
    ("zero-page", "round"): "the seed's figure, Linux VM",
    ("zero-page", "round-notouch"): "the seed's figure, Solaris 11",
    # exp_cdb.c: the seed's lookups were of a cached database
    ("cdb", "cold"): None,
    # exp_copy.c: the seed's copies ended without fsync
    ("copy", "copy"): None,
}
SEED_DEFAULT = "the seed's figure"
SEED_MARKERS = {SEED_DEFAULT: "D", "the seed's figure, Linux VM": "D",
                "the seed's figure, Solaris 11": "^"}


def seed_label(m):
    """The legend's label of M's seed figure, or None where it is not to
    be drawn (no figure, or one of another condition)."""
    if m.seed is None:
        return None
    return SEED_SOURCE.get((m.experiment, m.case), SEED_DEFAULT)


@dataclass
class Measurement:
    experiment: str
    case: str
    param: str
    method: str
    metric: str
    unit: str
    seed: float = None       # the seed's figure, or None
    values: list = field(default_factory=list)
    checked: bool = True     # every repeat's data was verified
    state: set = field(default_factory=set)  # "cache warm", "folio 2M"
    # INPUT's values over the repeats, by column; None: rows without them
    read: dict = None

    @property
    def group(self):
        """Its place on the figure's x axis: case, and param unless 0."""
        return self.case if self.param in ("0", "") else \
            f"{self.case}:{self.param}"


def read_measurements(path):
    """PATH's rows gathered into Measurements, in the order they first
    appear; ReportError on a bad file, a bad number, or repeats of one
    measurement that disagree on its unit."""
    rows = read_rows(path, NEED)
    check = "check" if rows and "check" in rows[0] else "checked"
    got = {}
    for row in rows:
        key = tuple(row[k] for k in NEED[:5])
        m = got.get(key)
        if m is None:
            m = got[key] = Measurement(*key, unit=row["unit"])
        elif m.unit != row["unit"]:
            raise ReportError(f"{path}:{row['_line']}: unit {row['unit']}, "
                              f"an earlier repeat has {m.unit}")
        m.values.append(number(row, "value", path))
        if row["seed"].strip() and m.seed is None:
            m.seed = number(row, "seed", path)
        m.checked = m.checked and row.get(check, "") == "ok"
        m.state |= {f"{k} {row[k]}" for k in STATE if row.get(k)}
        if all(k in row for k in INPUT):
            m.read = m.read or {k: set() for k in INPUT}
            for k in INPUT:
                m.read[k].add(row[k].strip())
    return list(got.values())


def table_md(name, csv_name, ms):
    out = [f"# {name}", "",
           f"Raw rows: {csv_name}. \"ours\" is the median over the "
           "repeats (n), \"min–max\" their range; \"seed\" is the source "
           "document's figure, \"ours/seed\" the ratio of our median to "
           "it; \"checked\": the data was verified in every repeat (bytes "
           "read equal the file's, copies equal, zeroed pages zero).", ""]
    rows = []
    for m in ms:
        s = stats.summarize(m.values)
        ratio = (f"{s.median / m.seed:.2f}" if m.seed not in (None, 0)
                 else "")
        rows.append([m.case, m.param, m.method, m.metric, fmt_g(s.median),
                     f"{fmt_g(s.min)}–{fmt_g(s.max)}" if s.n > 1 else "",
                     s.n, "" if m.seed is None else fmt_g(m.seed), ratio,
                     m.unit, "yes" if m.checked else "no"])
    experiments = list(dict.fromkeys(m.experiment for m in ms))
    if len(experiments) > 1:
        for r, m in zip(rows, ms):
            r.insert(0, m.experiment)
        head, align = ["experiment"], "l"
    else:
        head, align = [], ""
    out += markdown_table(head + ["case", "param", "method", "metric",
                                  "ours", "min–max", "n", "seed",
                                  "ours/seed", "unit", "checked"],
                          align + "lrllrrrrrll", rows)
    return "\n".join(out) + "\n"


def main_metric(experiment, ms):
    metrics = list(dict.fromkeys(m.metric for m in ms))
    want = MAIN_METRIC.get(experiment)
    if want in metrics:
        return want
    plain = [x for x in metrics if x != "ratio"]
    return plain[0] if plain else metrics[0]


def size_words(n):
    """N bytes in words: "16 MiB" where a whole number of MiB or KiB,
    else "N bytes"."""
    for unit, b in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= b and n % b == 0:
            return f"{n // b} {unit}"
    return f"{n} bytes"


def input_words(ms):
    """What MS read and on how many threads, for a title ("file 16 MiB,
    1 thread"), or None where a row lacks the columns (older rows)."""
    if not ms or any(m.read is None for m in ms):
        return None
    sizes = sorted({int(v) for m in ms for v in m.read["file_bytes"] if v})
    threads = sorted({v for m in ms for v in m.read["threads"]},
                     key=lambda v: (len(v), v))
    files = ("no file read" if not sizes else
             ("file " if len(sizes) == 1 else "files ") +
             ", ".join(size_words(n) for n in sizes))
    plural = "" if threads == ["1"] else "s"
    return f"{files}, {'/'.join(threads)} thread{plural}"


def panel(ax, experiment, metric, ms):
    """One experiment's METRIC: a bar a method in each group (its
    median), the repeats as points and their range as an error bar, the
    seed's figure as a black marker (one a source, seed_label) on the bar
    it belongs to where the seed measured the bar's condition."""
    groups = list(dict.fromkeys(m.group for m in ms))
    methods = list(dict.fromkeys(m.method for m in ms))
    # each group's bars packed side by side: a group has only some methods
    slots = {g: [m for m in ms if m.group == g] for g in groups}
    width = 0.8 / max(len(v) for v in slots.values())
    labelled = set()
    positive = []
    for gi, g in enumerate(groups):
        mine = slots[g]
        for k, m in enumerate(mine):
            x = gi + width * (k - (len(mine) - 1) / 2)
            j = methods.index(m.method)
            s = stats.summarize(m.values)
            ax.bar(x, s.median, width, alpha=0.85, edgecolor="black",
                   lw=0.5, color=figures.COLOURS[j % len(figures.COLOURS)],
                   label="_" if m.method in labelled else m.method)
            labelled.add(m.method)
            if s.n > 1:
                ax.errorbar(x, s.median, yerr=[[s.median - s.min],
                                               [s.max - s.median]],
                            color="black", capsize=3, lw=1)
                ax.plot([x] * s.n, m.values, ".", color="black", ms=3)
            seed = seed_label(m)
            if seed is not None:
                ax.plot(x, m.seed, SEED_MARKERS.get(seed, "D"),
                        color="black", ms=6,
                        label="_" if seed in labelled else seed)
                labelled.add(seed)
                positive += [m.seed] if m.seed > 0 else []
            positive += [v for v in m.values if v > 0]
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=35, ha="right")
    unit = ms[0].unit
    ax.set_ylabel(f"{metric} ({unit})")
    if metric == "latency" or (positive and
                               max(positive) > 100 * min(positive)):
        ax.set_yscale("log")
    ax.grid(True, axis="y", alpha=0.4)
    n = sorted({len(m.values) for m in ms})
    reps = f"{n[0]}" if len(n) == 1 else f"{n[0]}-{n[-1]}"
    state = sorted(set().union(*(m.state for m in ms)))
    state = (", ".join(state) if state else
             CACHE_WORDS.get(experiment, "cache state, folio size: not in "
                                         "the rows (see the cases)"))
    read = input_words(ms)
    # rows that name what they read: it on the first line, the cache
    # state on a line of its own
    state = state if read is None else f"{read}\n{state}"
    seeds = [lab for lab in SEED_MARKERS if lab in labelled]
    marks = {"D": "◆", "^": "▲"}
    seeds = "".join(f"; {marks[SEED_MARKERS[lab]]} {lab}" for lab in seeds)
    ax.set_title(f"{experiment}: {metric} ({unit}); {state}\nbars: "
                 f"median of {reps} repeat(s), whiskers min–max{seeds}")


def figure(path, ms):
    experiments = list(dict.fromkeys(m.experiment for m in ms))
    width = max(6.0, 0.35 * len({m.group for m in ms}) *
                len({m.method for m in ms}) ** 0.5 + 3)
    fig, axes = figures.panels(len(experiments), width=width, height=5)
    for ax, e in zip(axes, experiments):
        mine = [m for m in ms if m.experiment == e]
        metric = main_metric(e, mine)
        panel(ax, e, metric, [m for m in mine if m.metric == metric])
        figures.legend_below(ax, ncol=4)
        # the rotated group names sit under the axis: the legend below them
        leg = ax.get_legend()
        if leg is not None:
            leg.set_bbox_to_anchor((0.5, -0.32))
    figures.save(fig, path)


def report(name, csv, md, png):
    """MD and PNG from the iobench rows in CSV (NAME: the suite, for the
    heading).  ReportError when CSV is bad or holds no rows."""
    ms = read_measurements(csv)
    if not ms:
        raise ReportError(f"{csv}: no rows")
    text = table_md(name, os.path.basename(csv), ms)
    write_text(md, text)
    figure(png, ms)
    return text
