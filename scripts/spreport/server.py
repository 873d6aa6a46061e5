"""spreport.server: the report of run_experiments.sh --suite server.

    spreport server DIR

DIR/server.csv holds a row a cell and round (one session's, or the
sessions' pooled: their rounds numbered on), server-latency.csv a row an
open-loop run.  DIR/server.md: memory against W for each load path and
group of settings; the largest W each path serves with no error; the
one file against the set; the Sun study's image against the command
line forked per request and nginx's image_filter; the open-loop
latencies; and issue 29's targets, each evaluated from those cells and
said met or missed.  Throughput counts 2xx answers only; medians over
the rounds, counts (errors, 503s, OOM kills) summed over them."""
import os

from .stats import median
from .tables import ReportError, markdown_table, number, read_rows, write_text

PATHS = ("read", "mmap", "pread")
MEMORY = ("none", "limit+budget", "limit")
MIB = 1 << 20
# The targets' thresholds (issue 29).
FORK_RATIO = 10
P99_RATIO = 3


def ints(rows, col):
    return sum(int(r[col] or 0) for r in rows)


def killed(rows):
    """Rounds whose server died by a signal (exit above 128) or was
    OOM-killed in its group."""
    return sum(1 for r in rows if int(r["server_exit"] or 0) > 128
               or int(r["oom_kills"] or 0) > 0)


class Cell:
    """The rounds of one cell (set, cache, memory, contender, W)."""

    def __init__(self, rows, path):
        self.rows = rows
        self.n = len(rows)

        def med(col, scale=1.0):
            vals = [number(r, col, path) for r in rows if r[col] != ""]
            return median(vals) / scale if vals else None
        self.rps = med("rps")
        self.p50, self.p99 = med("p50_us", 1e3), med("p99_us", 1e3)
        self.peak = self.growth = None
        if all(r["peak_bytes"] and r["start_bytes"] for r in rows):
            self.growth = median(float(r["peak_bytes"])
                                 - float(r["start_bytes"])
                                 for r in rows) / MIB
        self.start, self.peak = med("start_bytes", MIB), med("peak_bytes", MIB)
        self.answered = ints(rows, "requests") - ints(rows, "non2xx")
        self.hwm = med("hwm_kb", 1024)
        self.anon = med("rss_delta", MIB)
        self.majflt = med("pgmajfault_delta")
        self.s503 = ints(rows, "s503") or ints(rows, "non2xx")
        self.errors = ints(rows, "errors") + ints(rows, "timeouts")
        self.non2xx = ints(rows, "non2xx")
        self.ooms = ints(rows, "oom_kills")
        self.killed = killed(rows)

    def failures(self):
        """Errors, timeouts, non-2xx answers and kills, and a cell with
        no 2xx answer in its time counts as one."""
        return (self.errors + self.non2xx + self.ooms + self.killed
                + (self.answered == 0))


def load(d):
    path = os.path.join(d, "server.csv")
    need = ("set", "cache", "memory", "contender", "w", "rps", "peak_bytes",
            "start_bytes", "errors", "non2xx", "oom_kills", "server_exit")
    groups = {}
    for r in read_rows(path, need):
        key = (r["set"], r["cache"], r["memory"], r["contender"], int(r["w"]))
        groups.setdefault(key, []).append(r)
    cells = {k: Cell(v, path) for k, v in groups.items()}
    lat = read_rows(os.path.join(d, "server-latency.csv"),
                    ("set", "contender", "rate", "p50_us", "p99_us",
                     "mismatched"))
    return cells, lat


def f(v, digits=1):
    return "" if v is None else f"{v:.{digits}f}"


def f3(v):
    """Three significant digits (ms and req/s)."""
    if v is None:
        return ""
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def ws_of(cells, set_, cache, memory):
    return sorted({k[4] for k in cells if k[:3] == (set_, cache, memory)})


def group_table(cells, set_, cache, memory):
    rows = []
    for w in ws_of(cells, set_, cache, memory):
        for p in PATHS:
            c = cells.get((set_, cache, memory, f"scaleppm-{p}", w))
            if c is None:
                continue
            rows.append([p, w, f3(c.rps), f3(c.p50), f3(c.p99), f(c.start),
                         f(c.peak), f(c.growth), f(c.hwm), f(c.anon),
                         f(c.majflt, 0), c.s503, c.errors, c.ooms, c.killed,
                         c.n])
    return markdown_table(
        ["path", "W", "req/s", "p50 ms", "p99 ms", "start MiB", "peak MiB",
         "growth MiB", "HWM MiB", "anon MiB", "major faults", "503",
         "errors", "OOM kills", "killed", "rounds"], "lr" + "r" * 14, rows)


GROUP_TEXT = {
    ("one", "warm", "none"): "One file, warm, no limit",
    ("one", "cold", "none"): "One file, evicted before each cell, no limit",
    ("one", "warm", "limit+budget"):
        "One file, warm, cgroup limit and --max-memory",
    ("one", "warm", "limit"): "One file, warm, cgroup limit alone",
    ("set", "warm", "none"): "The set, warm, no limit",
    ("set", "warm", "limit+budget"):
        "The set, warm, cgroup limit and --max-memory",
}


def memory_table(cells):
    """The cgroup's growth and the 2xx throughput against W, a column
    a path, for each group without a limit."""
    rows = []
    for key in [k for k in GROUP_TEXT if k[2] == "none"]:
        for w in ws_of(cells, *key):
            cs = [cells.get(key + (f"scaleppm-{p}", w)) for p in PATHS]
            rows.append([key[0], key[1], w]
                        + [f(c.growth) if c else "" for c in cs]
                        + [f3(c.rps) if c else "" for c in cs])
    return markdown_table(
        ["set", "cache", "W"] + [f"{p} growth MiB" for p in PATHS]
        + [f"{p} req/s" for p in PATHS], "llr" + "r" * 6, rows)


def largest_w(cells, set_, cache, memory, p):
    """The largest W up to which every cell of path P had no failure;
    0 when W = 1 failed."""
    best = 0
    for w in ws_of(cells, set_, cache, memory):
        c = cells.get((set_, cache, memory, f"scaleppm-{p}", w))
        if c is None or c.failures():
            break
        best = w
    return best


def largest_table(cells):
    rows = []
    for key in GROUP_TEXT:
        if not ws_of(cells, *key):
            continue
        for p in PATHS:
            top = max(ws_of(cells, *key))
            c = cells.get(key + (f"scaleppm-{p}", top))
            if c is None:
                continue
            lw = largest_w(cells, *key, p)
            rows.append([key[0], key[1], key[2], p, lw or "none", top,
                         f3(c.rps), c.answered, c.s503, c.errors, c.ooms,
                         c.killed])
    return markdown_table(
        ["set", "cache", "memory", "path", "largest W", "top W",
         "req/s at top W", "2xx at top W", "503 at top W", "errors at top W",
         "OOM kills at top W", "killed at top W"], "llllrrrrrrrr", rows)


def sets_table(cells):
    rows = []
    for memory in ("none", "limit+budget"):
        for w in ws_of(cells, "set", "warm", memory):
            for p in PATHS:
                a = cells.get(("one", "warm", memory, f"scaleppm-{p}", w))
                b = cells.get(("set", "warm", memory, f"scaleppm-{p}", w))
                if a is None or b is None:
                    continue
                rows.append([memory, p, w, f3(a.rps), f3(b.rps), f(a.growth),
                             f(b.growth), f(a.majflt, 0), f(b.majflt, 0)])
    return markdown_table(
        ["memory", "path", "W", "one req/s", "set req/s", "one growth MiB",
         "set growth MiB", "one major faults", "set major faults"],
        "llrrrrrrr", rows)


def sun_table(cells):
    rows = []
    for w in sorted({k[4] for k in cells if k[0] == "sun"}):
        cgi = cells.get(("sun", "warm", "none", "cgi", w))
        for who in [f"scaleppm-{p}" for p in PATHS] + [
                "cgi", "nginx-image-filter", "nginx-static"]:
            c = cells.get(("sun", "warm", "none", who, w))
            if c is None:
                continue
            ratio = (c.rps / cgi.rps if cgi and cgi.rps and c.rps is not None
                     else None)
            rows.append([who, w, f3(c.rps), f3(c.p50), f3(c.p99),
                         f(c.growth), f(ratio, 2), c.non2xx, c.errors, c.n])
    return markdown_table(
        ["contender", "W", "req/s", "p50 ms", "p99 ms", "growth MiB", "/ cgi",
         "non-2xx", "errors", "rounds"], "lrrrrrrrrr", rows)


def load_phases(d):
    """server-timing.csv's rows by contender (a session made before the
    file existed has none: {})."""
    path = os.path.join(d, "server-timing.csv")
    if not os.path.exists(path):
        return {}
    out = {}
    for r in read_rows(path, ("contender", "load_ms", "scale_ms",
                              "release_ms", "write_ms", "job_ms")):
        out.setdefault(r["contender"], []).append(r)
    return out


def phases_table(phases, cells, path):
    """A request's phases by load path (medians over the requests); the
    study's span (load, scale, release) and the whole job (and the write),
    each request's own sum; and the rate each alone would allow on one
    CPU over the CGI's rate at W = 8."""
    cgi = cells.get(("sun", "warm", "none", "cgi", 8))

    def over_cgi(ms):
        return (1e3 / ms / cgi.rps if ms > 0 and cgi and cgi.rps
                else None)
    rows = []
    for who, got in phases.items():
        def med(col):
            return median(number(r, col, path) for r in got)
        span = median(sum(number(r, c, path) for c in
                          ("load_ms", "scale_ms", "release_ms"))
                      for r in got)
        job = med("job_ms")
        rows.append([who, len(got), f3(med("load_ms")), f3(med("scale_ms")),
                     f3(med("release_ms")), f3(med("write_ms")), f3(span),
                     f3(job), f(over_cgi(span), 2), f(over_cgi(job), 2)])
    return markdown_table(
        ["contender", "requests", "load ms", "scale ms", "release ms",
         "write ms", "span ms", "job ms", "span-bound / cgi",
         "job-bound / cgi"], "lrrrrrrrrr", rows)


def lat_groups(lat, path):
    out = {}
    for r in lat:
        out.setdefault((r["set"], r["contender"]), []).append(r)
    res = []
    for (s, who), rows in out.items():
        def med(col):
            return median(number(r, col, path) for r in rows)
        p50, p99 = med("p50_us") / 1e3, med("p99_us") / 1e3
        res.append({"set": s, "who": who, "rate": med("rate"),
                    "done": ints(rows, "done"), "due": ints(rows, "due"),
                    "errors": ints(rows, "errors"),
                    "timeouts": ints(rows, "timeouts"),
                    "s503": ints(rows, "s503"), "p50": p50,
                    "p90": med("p90_us") / 1e3, "p99": p99,
                    "p999": med("p999_us") / 1e3,
                    "max": med("max_us") / 1e3,
                    "lag": (med("lag_p99_us") / 1e3
                            if all(r.get("lag_p99_us") for r in rows)
                            else None),
                    "waited": (ints(rows, "waited")
                               if all(r.get("waited") for r in rows)
                               else None),
                    "ratio": p99 / p50 if p50 > 0 else None,
                    "bodies": ints(rows, "bodies"),
                    "bad": ints(rows, "mismatched"), "n": len(rows)})
    return res


def lat_table(groups):
    """The open-loop runs; with the generator's send lag where the rows
    have it (sessions before spload recorded it have not)."""
    lag = all(g["lag"] is not None and g["waited"] is not None
              for g in groups)
    rows = [[g["set"], g["who"], f3(g["rate"]), g["due"], g["done"],
             g["errors"], g["timeouts"], g["s503"], f3(g["p50"]),
             f3(g["p90"]), f3(g["p99"]), f3(g["p999"]), f3(g["max"]),
             f(g["ratio"], 2)] + ([f3(g["lag"]), g["waited"]] if lag else [])
            + [g["bodies"], g["bad"], g["n"]]
            for g in groups]
    return markdown_table(
        ["set", "contender", "rate req/s", "due", "answered", "errors",
         "timeouts", "503", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms",
         "max ms", "p99 / p50"] + (["send lag p99 ms", "waited"]
                                   if lag else [])
        + ["answers checked", "differing", "rounds"],
        "llrrrrrrrrrrrr" + ("rr" if lag else "") + "rrr", rows)


def targets(cells, groups):
    """[target, cell, figure, threshold, met] rows of issue 29's
    targets; a target with no cell is "not measured"."""
    out = []
    cgi = cells.get(("sun", "warm", "none", "cgi", 8))
    for p in PATHS:
        c = cells.get(("sun", "warm", "none", f"scaleppm-{p}", 8))
        if c is None or cgi is None or not cgi.rps:
            continue
        r = c.rps / cgi.rps
        out.append(["throughput / fork per request", f"sun W=8 {p}",
                    f"{r:.1f}", f"≥ {FORK_RATIO}", r >= FORK_RATIO])
    for s in ("one", "set"):
        key = (s, "warm", "limit+budget")
        for p in PATHS:
            rows = [c for k, c in cells.items()
                    if k[:3] == key and k[3] == f"scaleppm-{p}"]
            if not rows:
                continue
            n = sum(c.ooms + c.killed for c in rows)
            out.append(["no OOM kill under the limit", f"{s} {p}", n, "0",
                        n == 0])
    for p in ("mmap", "pread"):
        c = cells.get(("one", "warm", "limit+budget", f"scaleppm-{p}", 32))
        if c is not None:
            out.append(["W=32 on one file, no error, under the limit",
                        f"one {p}", c.failures(), "0", c.failures() == 0])
    rows = [c for k, c in cells.items()
            if k[:3] == ("one", "warm", "limit+budget")
            and k[3] == "scaleppm-read"]
    if rows:
        s503 = sum(c.s503 for c in rows)
        dead = sum(c.ooms + c.killed for c in rows)
        out.append(["read turned away with 503, not killed", "one read",
                    f"{s503} 503s, {dead} killed", "503s > 0, 0 killed",
                    s503 > 0 and dead == 0])
    for g in groups:
        if g["ratio"] is None:
            continue
        out.append(["p99 within 3x the median at 80%",
                    f"{g['set']} {g['who'].replace('scaleppm-', '')}",
                    f"{g['ratio']:.2f}", f"≤ {P99_RATIO}",
                    g["ratio"] <= P99_RATIO])
    bad = sum(g["bad"] for g in groups)
    checked = sum(g["bodies"] for g in groups)
    if checked:
        out.append(["answers differing from the command line's bytes",
                    f"{checked} distinct answers", bad, "0", bad == 0])
    return out


def report(d):
    cells, lat = load(d)
    if not cells:
        raise ReportError(f"{d}/server.csv: no rows")
    groups = lat_groups(lat, os.path.join(d, "server-latency.csv"))
    tg = targets(cells, groups)
    met = sum(1 for t in tg if t[4])
    one = next(iter(cells.values())).rows[0]
    big = next((c.rows[0] for k, c in cells.items() if k[0] == "one"), one)
    lim = next((c.rows[0] for k, c in cells.items()
                if k[2] == "limit+budget"), None)
    out = [
        "# server: memory contention in `scaleppm serve`", "",
        "Each cell a fresh server on one CPU, wrk on the other (closed "
        "loop, W connections, one thread); throughput counts 2xx answers. "
        f"Large images: {int(big['image_bytes']) / MIB:.1f} MiB each, "
        "reduced by 8; \"one\": one file, \"set\": "
        f"{next((c.rows[0]['files'] for k, c in cells.items() if k[0] == 'set'), '?')}"
        " files requested in turn. \"start\" and \"peak\": the "
        "server's memory cgroup's usage at the cell's start and its peak "
        "(page cache included), \"growth\" the one less the other; "
        "\"HWM\": the server's peak resident set (pages of a file mapped "
        "by several requests counted once a mapping); \"anon\": "
        "memory.stat's rss at the load's end less at its start; \"killed\": rounds whose server died by a signal or an "
        "OOM kill. Medians over the rounds, counts summed.", ""]
    if lim is not None:
        out += [f"Limit: a cgroup of {int(lim['limit_bytes']) / MIB:.0f} "
                f"MiB; budget: --max-memory {int(lim['max_memory']) / MIB:.0f}"
                " MiB.", ""]
    out += [f"Targets met: {met} of {len(tg)}.", "", "## Targets", ""]
    out += markdown_table(["target", "cell", "figure", "threshold", "met?"],
                          "llrll", [t[:4] + ["yes" if t[4] else "missed"]
                                    for t in tg])
    out += ["", "## Memory against W", "",
            "No limit: the growth of the server's cgroup over each cell "
            "(page cache included) and the 2xx throughput, by load path.",
            ""] + memory_table(cells)
    for key, text in GROUP_TEXT.items():
        if ws_of(cells, *key):
            out += ["", f"## {text}", ""] + group_table(cells, *key)
    out += ["", "## The largest W served with no error", "",
            "The largest W up to which every cell of the path had no error, "
            "timeout, non-2xx answer or kill, and some 2xx answer in its "
            "time.", ""] + largest_table(cells)
    out += ["", "## One file against the set", ""] + sets_table(cells)
    out += ["", "## The Sun study's image reduced by 4", "",
            "scaleppm serve on each load path, the command line forked per "
            "request (lighttpd's CGI running a shell script that execs "
            "scaleppm), and nginx's image_filter (libgd) resizing a JPEG of "
            "the image to JPEG: another format and filter, a peer server, "
            "not the same job" + (
                "; and nginx serving the command line's answer for this "
                "job from a file (made once, before the cell): the cost of "
                "HTTP and of the bytes with no job"
                if any(k[3] == "nginx-static" for k in cells) else "")
            + ".", ""]
    out += sun_table(cells)
    phases = load_phases(d)
    if phases:
        out += ["", "## Where a request's time goes", "",
                "A fresh server answering the Sun study's image reduced by "
                "4 one request at a time, W = 1: the medians of its "
                "Server-Timing header (the job's phases, each request's "
                "own) over the requests. \"span\": load + scale + "
                "release, the study's span, request by request; \"job\": "
                "the span and the write of the answer to the server's "
                "private file. A bound: one CPU doing nothing but the span "
                "(or the job) answers 1000 / ms requests a second; "
                "\"span-bound / cgi\" is that rate over the CGI's at W = 8, "
                "the most a server that loads, scales and releases each "
                "request's image as the study does could reach against the "
                "fork per request, with HTTP and the answer's bytes free.",
                ""]
        out += phases_table(phases, cells,
                            os.path.join(d, "server-timing.csv"))
    out += ["", "## Open loop (spload)", "",
            "Requests due at a fixed rate, 80% of the best throughput of "
            "the path on that set, warm, no limit; latency from each "
            "request's due time" + (
                "; \"send lag\": how late spload sent a request that "
                "found a connection free after it was due (the client's own "
                "delay, which the latencies include); \"waited\": the "
                "requests that found all of its connections busy"
                if groups and all(g["lag"] is not None for g in groups)
                else "") + ". Every distinct answer's body hash "
            "compared with the command line's output for the same file and "
            "options.", ""] + lat_table(groups)
    write_text(os.path.join(d, "server.md"), "\n".join(out) + "\n")
