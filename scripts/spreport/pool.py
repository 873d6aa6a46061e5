"""Sessions of the suites other than the Sun study (the iobench suites,
paths, durable, peers, threads, batch, compressed, photos, server): each run as
separate invocations, one folder a session.  pool() writes, into one folder, the
sessions' rows together (the suite's own report then reads them as it
reads one session's, its rounds numbered on across the sessions; a
table too large to keep twice is judged but not copied, and its report
reads the sessions' files) and sessions.md/sessions.csv: each
contender's median in each session with that session's min-max,
the spread of the medians between the sessions, and which contender is
best, named only where every session's 95% interval of each other
contender's mean over the best's excludes 1 on the same side (else
"cannot separate"), and when each session ran (sessinfo).

    spreport pool KIND OUT S1 S2 ...    KIND: iobench, paths, durable,
                                        peers, threads, batch,
                                        compressed, photos, server"""
import glob
import os
from dataclasses import dataclass

from . import sessinfo, stats
from .tables import (ReportError, markdown_table, number, read_rows,
                     write_text)


@dataclass
class Table:
    """One data file of a suite: its name (a glob for iobench's one CSV),
    the columns that make a group, the column of the contenders compared
    in a group, the value, the column of the round to number on (None:
    every row is a repeat), and whether the pooled rows are written (a
    table of one row an image is not: its report reads the sessions')."""
    name: str
    group: tuple
    who: str
    value: str
    round: str = None
    sep: str = ","
    written: bool = True
    since: bool = False  # a later file: sessions made before it lack it


KINDS = {
    "iobench": [Table("*.csv", ("experiment", "case", "param", "metric"),
                      "method", "value")],
    "paths": [Table("paths.csv", ("size", "job", "cache"), "io", "wall_ns",
                    "round")],
    "durable": [Table("durable.csv", ("size",), "case", "wall_ns",
                      "round")],
    "peers": [Table("peers.csv", ("size", "job"), "tool", "wall_ns",
                    "round"),
              Table("peers-scale.csv", ("size", "job"), "threads_arg",
                    "scale_ns", "run")],
    "threads": [Table("threads.csv", ("image", "job", "output", "load"),
                      "contender", "wall_ns", "round")],
    "batch": [Table("batch.csv", ("image", "files", "job"), "contender",
                    "wall_ns", "round"),
              Table("batch-set-runs.csv", ("set", "cache"), "load",
                    "wall_ns", "round"),
              Table("batch-set.csv", ("set", "cache"), "load", "span_ns",
                    "round", written=False)],
    "compressed": [Table("compressed.csv",
                         ("input", "format", "job", "cache"), "io",
                         "span_ns", "round")],
    "photos": [Table("photos-thumbs.csv", ("files",), "contender",
                     "wall_ns", "round"),
               Table("photos-encode.csv", ("image",), "contender",
                     "wall_ns", "round")],
    "server": [Table("server.csv", ("set", "cache", "memory", "w"),
                     "contender", "rps", "round"),
               Table("server-latency.csv", ("set",), "contender", "p99_us",
                     "round"),
               Table("server-timing.csv", ("set",), "contender", "job_ms",
                     "round", since=True)],
}

# Files of a session copied from the first session alone: the peers'
# verification (every session verifies; a failure stops its run).
FIRST_ONLY = {"peers": ["peers-verify.tsv"]}
# The photographs' list is the same in every session of a machine.
FIRST_ONLY["photos"] = ["photos.csv"]

# Units whose figure is better when larger; a ratio or a size names no
# winner (their rows are pooled, not judged).
HIGHER = ("GB/s", "MB/s", "ops/s", "req/s")
NO_WINNER = ("x", "B")


def better(unit):
    """+1 when a larger figure in UNIT is better, -1 when a smaller one
    is, 0 when the unit names no winner."""
    if unit in NO_WINNER:
        return 0
    return 1 if unit in HIGHER else -1


def data_file(kind, folder, table):
    """The path of TABLE's file in FOLDER; ReportError when there is not
    exactly one."""
    found = sorted(glob.glob(os.path.join(folder, table.name)))
    if len(found) != 1:
        raise ReportError(f"{folder}: {len(found)} files {table.name} "
                          f"(a {kind} session has one)")
    return found[0]


def pooled_rows(kind, table, folders):
    """The header and the rows of TABLE over FOLDERS, each row with its
    session's index in "_session" and its round numbered on past the
    earlier sessions' rounds."""
    header, rows, offset = None, [], 0
    for k, folder in enumerate(folders, start=1):
        path = data_file(kind, folder, table)
        with open(path, encoding="utf-8") as f:
            first = f.readline().rstrip("\r\n")
        if header is None:
            header = first
        elif first != header:
            raise ReportError(f"{path}: header differs from session 1's")
        got = read_rows(path, table.group + (table.who, table.value)
                        + ((table.round,) if table.round else ()),
                        table.sep)
        last = 0
        for r in got:
            r["_session"] = k
            if table.round:
                n = int(number(r, table.round, path))
                r[table.round] = str(n + offset)
                last = max(last, n)
        offset += last
        rows += got
    return header, rows


def write_pooled(path, header, rows, sep):
    names = header.split(sep)
    lines = [header] + [sep.join(r[n] for n in names) for r in rows]
    write_text(path, "\n".join(lines) + "\n")


def judge(table, rows, nsessions, path):
    """Per group and contender, each session's values; per group the best
    contender of each session.  Returns [(group, unit, {who: [[values]
    a session]}, verdict)] in the order groups first appear."""
    groups = {}
    for r in rows:
        g = tuple(r[c] for c in table.group)
        per = groups.setdefault(g, {"unit": r.get("unit", "ns"), "who": {}})
        vals = per["who"].setdefault(r[table.who],
                                     [[] for _ in range(nsessions)])
        vals[r["_session"] - 1].append(number(r, table.value, path))
    out = []
    for g, per in groups.items():
        sign = better(per["unit"])
        complete = {w: v for w, v in per["who"].items() if all(v)}
        verdict = ""
        if sign and len(complete) > 1:
            verdict = verdict_of(complete, sign, nsessions)
        out.append((g, per["unit"], per["who"], verdict))
    return out


def verdict_of(complete, sign, nsessions):
    """The verdict of one group: COMPLETE {who: [values a session]}, SIGN
    better()'s.  The contender best by median in every session is named
    only where, in every session, the 95% interval of every other
    contender's mean over its mean excludes 1 on its side (a session of
    one repeat has no interval); otherwise the data cannot separate them,
    and each session's best by median is listed."""
    best = []
    for s in range(nsessions):
        best.append(max(complete, key=lambda w, s=s: sign *
                        stats.median(complete[w][s])))
    win = best[0]
    # one value has no interval: a session of one repeat names no winner
    if len(set(best)) == 1 and all(len(v[s]) > 1 for v in complete.values()
                                   for s in range(nsessions)):
        intervals = []
        try:
            for w, vals in complete.items():
                for s in range(nsessions) if w != win else ():
                    r = stats.ratio_bootstrap(vals[s], complete[win][s])
                    intervals.append((r.lo, r.hi))
        except ValueError:  # a mean of 0: no ratio, no winner
            intervals = [(1.0, 1.0)]
        # smaller is better (sign -1): the others' ratios lie above 1
        if stats.separated(intervals) == -sign:
            return f"{win} best in every session"
    return "cannot separate: " + ", ".join(best)


def shown(table, unit):
    """How TABLE's values are shown: (divisor, unit); ns as ms."""
    if table.value.endswith("_ns"):
        return 1e6, "ms"
    return 1, unit


def sig3(v):
    return f"{v:.3g}"


def sessions_tables(kind, tables, nsessions):
    """sessions.md's text and sessions.csv's lines from the judged
    tables [(file name, Table, judged)]."""
    cols = [f"session {k}" for k in range(1, nsessions + 1)]
    md = [f"# {kind}: across sessions", "",
          f"{nsessions} independent sessions (separate invocations). Each "
          "session's median with, in brackets, the min–max of its "
          "repeats; \"between\": the smallest and largest of the "
          "sessions' medians. A contender is named best only where it is "
          "best by median in every session and, in every session, the 95% "
          "bootstrap interval of each other contender's mean over its "
          "mean excludes 1 on its side (a session of one repeat has no "
          "interval); otherwise \"cannot separate\", with each session's "
          "best by median. A ratio or a size names none.", ""]
    csv = ["table,group,who,session,n,median,min,max"]
    for name, table, judged in tables:
        md += [f"## {name}: {table.value} by {table.who}", ""]
        rows = []
        for g, unit, who, verdict in judged:
            label = " ".join(g)
            div, unit = shown(table, unit)
            for i, (w, per) in enumerate(who.items()):
                cells = [label if i == 0 else "", w]
                meds = []
                for k, v in enumerate(per, start=1):
                    if not v:
                        cells.append("")
                        continue
                    s = stats.summarize(v)
                    meds.append(s.median / div)
                    cells.append(f"{sig3(s.median / div)} "
                                 f"({sig3(s.min / div)}–"
                                 f"{sig3(s.max / div)})")
                    csv.append(f"{name},{label},{w},{k},{s.n},"
                               f"{s.median:.6g},{s.min:.6g},{s.max:.6g}")
                cells.append(f"{sig3(min(meds))}–{sig3(max(meds))}"
                             if meds else "")
                cells += [unit, verdict if i == 0 else ""]
                rows.append(cells)
        md += markdown_table(["group", table.who] + cols
                             + ["between", "unit", "verdict"],
                             "ll" + "r" * nsessions + "rll", rows)
        md.append("")
    return md, csv


def pool(kind, out, folders):
    """OUT: the data files of KIND's suite pooled over the session
    FOLDERS, and sessions.md and sessions.csv."""
    if kind not in KINDS:
        raise ReportError(f"pool: no suite kind {kind}")
    if len(folders) < 2:
        raise ReportError("pool needs two or more session folders")
    os.makedirs(out, exist_ok=True)
    judged = []
    for table in KINDS[kind]:
        if table.since and not any(
                glob.glob(os.path.join(f, table.name)) for f in folders):
            continue
        header, rows = pooled_rows(kind, table, folders)
        path = data_file(kind, folders[0], table)
        if table.written:
            write_pooled(os.path.join(out, os.path.basename(path)), header,
                         rows, table.sep)
        judged.append((os.path.basename(path), table,
                       judge(table, rows, len(folders), path)))
    for name in FIRST_ONLY.get(kind, []):
        src = os.path.join(folders[0], name)
        with open(src, encoding="utf-8") as f:
            write_text(os.path.join(out, name), f.read())
    md, csv = sessions_tables(kind, judged, len(folders))
    md += sessinfo.section([f"session {k}" for k in
                            range(1, len(folders) + 1)], folders) + [""]
    write_text(os.path.join(out, "sessions.md"), "\n".join(md) + "\n")
    write_text(os.path.join(out, "sessions.csv"), "\n".join(csv) + "\n")
