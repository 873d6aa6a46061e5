"""spreport.ab: the report of scripts/ab.sh, two builds of scaleppm against
each other in one session (issue 38's targets).

    spreport ab DIR

From DIR/ab-cli.csv: for each image size and job, the median wall time of
the old and the new build's whole processes and new/old as a ratio of the
means with its 95% bootstrap interval; the verdict holds when every
ratio's interval reaches below 1.03 (the new build within 3%).  From
DIR/ab-server.csv: each load path's requests a second at W = 8, medians
over the rounds, and new/old; the target is 1.25.  From DIR/ab-strace.csv:
the system calls a request costs, each build, and the calls that create,
link or unlink a file."""
from collections import defaultdict

from . import stats
from .tables import ReportError, markdown_table, number, read_rows, \
    write_text

CLI_WITHIN = 1.03
SERVER_TARGET = 1.25
# The system calls that create, link or unlink a file.
FILE_CALLS = ("creat", "link", "linkat", "unlink", "unlinkat", "rename",
              "renameat", "renameat2")


def cli_table(path):
    runs = defaultdict(lambda: defaultdict(list))
    for row in read_rows(path, ("build", "size", "job", "wall_ns")):
        runs[(row["size"], row["job"])][row["build"]].append(
            number(row, "wall_ns", path))
    rows, worst = [], 0.0
    for (size, job), b in runs.items():
        if set(b) != {"old", "new"}:
            raise ReportError(f"{path}: {size} {job}: a build is missing")
        r = stats.ratio_bootstrap(b["new"], b["old"])
        worst = max(worst, r.lo)
        rows.append([size, job, f"{stats.median(b['old']) / 1e6:.1f}",
                     f"{stats.median(b['new']) / 1e6:.1f}", f"{r.ratio:.3f}",
                     f"{r.lo:.3f}–{r.hi:.3f}", len(b["new"])])
    if not rows:
        raise ReportError(f"{path}: no rows")
    return rows, worst < CLI_WITHIN


def server_table(path):
    rate = defaultdict(lambda: defaultdict(list))
    for row in read_rows(path, ("build", "io", "requests", "duration_us",
                                "errors")):
        if number(row, "errors", path) != 0:
            raise ReportError(f"{path}:{row['_line']}: a cell had errors")
        rate[row["io"]][row["build"]].append(
            number(row, "requests", path) * 1e6
            / number(row, "duration_us", path))
    rows, met = [], True
    for io, b in rate.items():
        if set(b) != {"old", "new"}:
            raise ReportError(f"{path}: {io}: a build is missing")
        r = stats.ratio_bootstrap(b["new"], b["old"])
        met = met and r.ratio >= SERVER_TARGET
        rows.append([io, f"{stats.median(b['old']):.0f}",
                     f"{stats.median(b['new']):.0f}", f"{r.ratio:.2f}",
                     f"{r.lo:.2f}–{r.hi:.2f}", len(b["new"])])
    if not rows:
        raise ReportError(f"{path}: no rows")
    return rows, met


def strace_table(path):
    calls = defaultdict(dict)
    n = {}
    for row in read_rows(path, ("build", "requests", "syscall", "calls")):
        calls[row["build"]][row["syscall"]] = number(row, "calls", path)
        n[row["build"]] = number(row, "requests", path)
    if set(calls) != {"old", "new"}:
        raise ReportError(f"{path}: a build is missing")
    names = sorted({s for b in calls.values() for s in b} - {"total"},
                   key=lambda s: -calls["old"].get(s, 0))
    rows = [[s, f"{calls['old'].get(s, 0) / n['old']:.2f}",
             f"{calls['new'].get(s, 0) / n['new']:.2f}"]
            for s in ["total"] + names]
    files = sum(calls["new"].get(s, 0) for s in FILE_CALLS) / n["new"]
    return rows, files, int(n["new"])


def report(d):
    cli, cli_ok = cli_table(f"{d}/ab-cli.csv")
    srv, srv_ok = server_table(f"{d}/ab-server.csv")
    sys_rows, files, n = strace_table(f"{d}/ab-strace.csv")
    text = ["# Two builds against each other (scripts/ab.sh)", "",
            "Old and new builds in one session, alternating; whole "
            "processes for the command line, a fresh server a cell for "
            "the server.", "",
            "## The command line: the peers' jobs", "",
            f"Verdict: the new build is within 3% of the old on every job: "
            f"**{'yes' if cli_ok else 'no'}**.", ""]
    text += markdown_table(["size", "job", "old ms", "new ms", "new/old",
                            "95% interval", "runs"],
                           "llrrrrr", cli)
    text += ["", "## The server: the Sun study's image reduced by 4, W = 8",
             "",
             f"Verdict: the new server answers at least 1.25 times the old "
             f"one's rate on every load path: "
             f"**{'yes' if srv_ok else 'no'}**.", ""]
    text += markdown_table(["load path", "old req/s", "new req/s",
                            "new/old", "95% interval", "rounds"],
                           "lrrrrr", srv)
    text += ["", f"## System calls a request ({n} requests, mmap)", "",
             f"Files created, linked, renamed or unlinked a request by the "
             f"new server: **{files:.2f}**.", ""]
    text += markdown_table(["system call", "old", "new"], "lrr", sys_rows)
    write_text(f"{d}/ab.md", "\n".join(text) + "\n")
