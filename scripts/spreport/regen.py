"""Every generated file of results/ made again from the committed raw rows.

    spreport regen [--check [--figures]] [DIR ...]

DIR: a folder of results/ (default: every one).  Its raw rows (each
session's runs.csv or SUITE.csv, env.txt, ...; the model's units-*.csv
and env.txt) are copied into a temporary folder, and there the reports
are made by the same spreport calls, with the same arguments, as
run_experiments.sh, scripts/*.sh and scripts/reference.sh make them:
each session's own report, then the sessions pooled, then the suite's
report of the pooled rows.  An argument that a run took from the machine
at report time (the durable and threads suites' filesystem, the CPUs,
the batch's enlarged outputs, the peers' copy rates and inputs) is read
from the env.txt the same run wrote.

Without DIR, results/stability.md too, where there is one (spreport
stability, against the previous reference's commit it names).

With --check nothing is written: every committed text file of DIR that
is not raw must be byte for byte the one made again, every text file
made again must be committed, and each difference is named (exit 1).
Figures (.png) are not compared, and under --check not drawn: each
report builds its figures, and an empty file stands for the picture
(drawing them is two thirds of the time); with --figures they are drawn
and compared too (the same matplotlib draws the same bytes).  Without
--check the files made again, figures drawn, are copied over DIR's."""
import contextlib
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

from .tables import ReportError

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(SCRIPTS)

# A session's raw files, by suite (an iobench suite's: its NAME.csv,
# NAME-perf.txt under perf, env.txt).  Everything else in a results
# folder is made by spreport (or, the pooled env.txt, by reference.sh).
RAW = {
    "sun": ("runs.csv", "env.txt"),
    "paths": ("paths.csv", "env.txt"),
    "durable": ("durable.csv", "env.txt"),
    "threads": ("threads.csv", "env.txt"),
    "peers": ("peers.csv", "peers-scale.csv", "peers-verify.tsv",
              "env.txt"),
    "batch": ("batch.csv", "batch-set-runs.csv", "batch-set.csv",
              "env.txt"),
    "photos": ("photos.csv", "photos-thumbs.csv", "photos-encode.csv",
               "env.txt"),
    "compressed": ("compressed.csv", "env.txt"),
    "server": ("server.csv", "server-latency.csv", "server-bodies.csv",
               "server-timing.csv", "env.txt"),
    "ab": ("ab-cli.csv", "ab-server.csv", "ab-strace.csv", "env.txt"),
}
# The folders of the runs the cost model is compared with, beside it
# (reference.sh's SP_MODEL_FOLDERS, in the same order).
MODEL_RUNS = tuple(f"{name}/session-*" for name in (
    "sun-1280x1024-cold", "sun-1280x1024-warm-large",
    "sun-1280x1024-warm-small", "big-12000x10000-cold",
    "big-12000x10000-warm-large", "big-12000x10000-warm-small"))
FIGURE = ".png"


def sessions_of(folder):
    """FOLDER's session-N folders in the order bash's glob gives them."""
    return sorted(d for d in glob.glob(os.path.join(folder, "session-*"))
                  if os.path.isdir(d))


def kind_of(folder):
    """(kind, iobench suite name or None) of a results folder."""
    if glob.glob(os.path.join(folder, "units-*.csv")):
        return "model", None
    sessions = sessions_of(folder)
    data = sessions[0] if sessions else folder
    if os.path.exists(os.path.join(data, "runs.csv")):
        return "sun", None
    for kind in ("paths", "durable", "peers", "threads", "batch", "photos",
                 "compressed", "server"):
        if os.path.exists(os.path.join(data, kind + ".csv")):
            return kind, None
    if os.path.exists(os.path.join(data, "ab-cli.csv")):
        return "ab", None
    csvs = glob.glob(os.path.join(data, "*.csv"))
    if len(csvs) == 1:
        return "iobench", os.path.basename(csvs[0])[:-len(".csv")]
    raise ReportError(f"{folder}: no suite's raw rows found")


def raw_names(kind, suite):
    if kind == "iobench":
        return (f"{suite}.csv", f"{suite}-perf.txt", "env.txt")
    return RAW[kind]


def env_value(folder, key):
    """The text after "KEY: " in FOLDER/env.txt."""
    path = os.path.join(folder, "env.txt")
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith(key + ": "):
                return line[len(key) + 2:].rstrip("\n")
    raise ReportError(f"{path}: no line {key!r}")


def setting(folder, name):
    """NAME=VALUE of env.txt's settings line (the sed of reference.sh:
    a value runs to the next space)."""
    m = re.search(r"(?:^| )" + re.escape(name) + r"=([^ ]*)",
                  env_value(folder, "settings"))
    return m.group(1) if m else ""


def filesystem(folder):
    """df -PT's "TYPE on DEVICE" of $TMPDIR, as env.txt recorded it
    ("TYPE on DEVICE at MOUNT")."""
    return env_value(folder, "filesystem of the working copy").split(
        " at ")[0]


def cpus(folder):
    """nproc, as env.txt's "cores: N online" recorded it."""
    return env_value(folder, "cores").split()[0]


def spreport(argv):
    from .__main__ import main
    if main(list(argv)) != 0:
        raise ReportError("spreport " + " ".join(argv) + " failed")


def peers_report(out, rates, specs):
    """scripts/peers.sh's peers_report OUT RATES SPECS..., as the suite
    and reference.sh call it: bash runs it with its spreport calls
    caught (their arguments, and the commands table it wrote, kept), and
    the call is made here."""
    fd, cmds = tempfile.mkstemp(prefix="spreport-regen.", suffix=".tsv")
    os.close(fd)
    script = ('. "$1/report.sh" && . "$1/peers.sh" && SP_REGEN_COPY=$2 && '
              'shift 2 && spreport() { local a prev=; for a; do '
              '[[ $prev == --commands ]] && { cp -- "$a" "$SP_REGEN_COPY"; '
              'a=$SP_REGEN_COPY; }; printf "%s\\0" "$a"; prev=$a; done; } && '
              'peers_report "$@"')
    try:
        r = subprocess.run(["bash", "-c", script, "bash", SCRIPTS, cmds,
                            out, rates] + specs, capture_output=True)
        if r.returncode != 0:
            raise ReportError(f"peers_report {out}: "
                              + r.stderr.decode(errors="replace").strip())
        argv = r.stdout.decode().split("\0")[:-1]
        if argv[:1] != ["peers"] or cmds not in argv:
            raise ReportError(f"peers_report {out}: no spreport peers call")
        spreport(argv)
    finally:
        os.unlink(cmds)


def session_report(kind, suite, d):
    """The report a session's own run made (run_experiments.sh, sun.sh,
    paths.sh, durable.sh, threads.sh, batch.sh, peers.sh)."""
    if kind == "sun":
        spreport(["sun", "--quiet", d])
    elif kind == "peers":
        peers_report(d, setting(d, "memcpy_bytes_per_s"),
                     setting(d, "specs").split(","))
    else:
        suite_report(kind, suite, d, d)


def suite_report(kind, suite, d, env):
    """A suite's report of the rows in D (reference_other's), with what
    the run took from the machine read from ENV's env.txt."""
    if kind == "iobench":
        spreport(["iobench", suite] + [os.path.join(d, suite + ext)
                                       for ext in (".csv", ".md", ".png")])
    elif kind in ("paths", "compressed"):
        spreport([kind, os.path.join(d, kind + ".csv"),
                  os.path.join(d, kind + ".md")])
    elif kind in ("photos", "server", "ab"):
        spreport([kind, d])
    elif kind == "durable":
        spreport(["durable", "--filesystem", filesystem(env), d])
    elif kind == "threads":
        spreport(["threads", "--cpus", cpus(env), "--disk",
                  filesystem(env), d])
    elif kind == "batch":
        where = setting(env, "enlarged_outputs") or "?"
        spreport(["batch", "--outputs", f"tmpfs; enlarged: {where}", d])
    else:
        raise ReportError(f"no report of {kind}")


def pooled_env(d, sessions):
    """reference_other's env.txt of a pooled folder."""
    n = len(sessions)
    with open(os.path.join(sessions[0], "env.txt"), encoding="utf-8") as f:
        text = f.read()
    text += (f"sessions: {n} separate invocations, session-1 to "
             f"session-{n} (each its own env.txt; above: session 1's); "
             "the rows here are theirs together\n")
    with open(os.path.join(d, "env.txt"), "w", encoding="utf-8") as f:
        f.write(text)


def make(folder, work):
    """FOLDER's files made again in WORK from its raw ones; returns its
    kind and the raw files' paths relative to FOLDER."""
    if not os.path.isdir(folder):
        raise ReportError("not a folder")
    kind, suite = kind_of(folder)
    raw = []

    def copy(rel):
        src = os.path.join(folder, rel)
        if os.path.exists(src):
            os.makedirs(os.path.dirname(os.path.join(work, rel)),
                        exist_ok=True)
            shutil.copyfile(src, os.path.join(work, rel))
            raw.append(rel)

    os.makedirs(work, exist_ok=True)
    if kind == "model":
        units = sorted(glob.glob(os.path.join(folder, "units-*.csv")))
        for u in units:
            copy(os.path.basename(u))
        copy("env.txt")  # reference.sh's, where the folder has one
        runs = [r for pattern in MODEL_RUNS for r in sorted(glob.glob(
            os.path.join(os.path.dirname(os.path.abspath(folder)),
                         pattern)))]
        if not runs:
            raise ReportError(f"{folder}: no {' or '.join(MODEL_RUNS)} "
                              "beside it")
        spreport(["model", "--units"]
                 + [os.path.join(work, os.path.basename(u)) for u in units]
                 + ["--out", work] + runs)
        return kind, raw
    sessions = [os.path.basename(s) for s in sessions_of(folder)]
    for s in sessions or [""]:
        for name in raw_names(kind, suite):
            copy(os.path.join(s, name))
    if not sessions:  # one session is the folder (the perf profile)
        session_report(kind, suite, work)
        return kind, raw
    dirs = [os.path.join(work, s) for s in sessions]
    for d in dirs:
        session_report(kind, suite, d)
    if kind == "sun":
        spreport(["sun", "--quiet", "--sessions", work] + dirs)
        return kind, raw
    spreport(["pool", kind, work] + dirs)
    pooled_env(work, dirs)
    if kind == "peers":
        rates = ",".join(setting(d, "memcpy_bytes_per_s") for d in dirs)
        peers_report(work, rates, setting(dirs[0], "specs").split(","))
    else:
        suite_report(kind, suite, work, dirs[0])
    return kind, raw


@contextlib.contextmanager
def figures_undrawn():
    """matplotlib's savefig writes an empty file in place of the picture
    while in this block."""
    try:
        from matplotlib.figure import Figure
    except ImportError:  # no report here can make a figure
        yield
        return
    real = Figure.savefig

    def touch(self, fname, *args, **kwargs):
        with open(fname, "wb"):
            pass
    Figure.savefig = touch
    try:
        yield
    finally:
        Figure.savefig = real


def files_under(top):
    out = set()
    for d, _, names in os.walk(top):
        for n in names:
            out.add(os.path.relpath(os.path.join(d, n), top))
    return out


def first_difference(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb), start=1):
        if x != y:
            return f"line {i}: committed {x[:100]!r}, made {y[:100]!r}"
    return f"{len(la)} lines committed, {len(lb)} made"


def compare(folder, work, raw, figures=False):
    """The differences between FOLDER's generated files and WORK's, and
    the files found the same: the text files (and FIGURES, the .png)."""
    made = files_under(work) - set(raw)
    # a folder's README.md is prose, written by hand and checked by
    # spreport readme
    committed = files_under(folder) - set(raw) - {"README.md"}
    problems, same = [], []
    for rel in sorted(committed | made):
        if rel.endswith(FIGURE) and not figures:
            continue
        path = os.path.join(folder, rel)
        if rel not in made:
            problems.append(f"{path}: not made by any report")
            continue
        if rel not in committed:
            problems.append(f"{path}: made, but not committed")
            continue
        with open(path, "rb") as f:
            a = f.read()
        with open(os.path.join(work, rel), "rb") as f:
            b = f.read()
        if a == b:
            same.append(rel)
        else:
            problems.append(f"{path}: differs, " + (
                "not the same picture" if rel.endswith(FIGURE) else
                first_difference(a.decode("utf-8", "replace"),
                                 b.decode("utf-8", "replace"))))
    return problems, same


def default_dirs():
    top = os.path.join(ROOT, "results")
    return sorted(d for d in glob.glob(os.path.join(top, "*"))
                  if os.path.isdir(d))


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="spreport regen", description=__doc__,
                                 formatter_class=argparse
                                 .RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true",
                    help="write nothing; a difference is an error")
    ap.add_argument("--figures", action="store_true",
                    help="with --check: draw the figures and compare "
                    "them too (slower)")
    ap.add_argument("dirs", nargs="*", metavar="DIR")
    a = ap.parse_args(argv)
    dirs = a.dirs or default_dirs()
    bad = 0
    with tempfile.TemporaryDirectory(prefix="spreport-regen.") as tmp, \
            (figures_undrawn() if a.check and not a.figures
             else contextlib.nullcontext()):
        for i, folder in enumerate(dirs):
            folder = os.path.normpath(folder)
            work = os.path.join(tmp, str(i), os.path.basename(
                os.path.abspath(folder)))
            try:
                kind, raw = make(folder, work)
            except (ReportError, OSError) as e:
                print(f"spreport regen: {folder}: {e}", file=sys.stderr)
                bad += 1
                continue
            if not a.check:
                for rel in sorted(files_under(work) - set(raw)):
                    dest = os.path.join(folder, rel)
                    os.makedirs(os.path.dirname(dest), exist_ok=True)
                    shutil.copyfile(os.path.join(work, rel), dest)
                print(f"{folder}: {kind}, made again")
                continue
            problems, same = compare(folder, work, raw, a.figures)
            for p in problems:
                print(f"spreport regen: {p}", file=sys.stderr)
            bad += bool(problems)
            print(f"{folder}: {kind}, {len(same)} generated files identical"
                  + (f", {len(problems)} not" if problems else ""))
    if not a.dirs:
        bad += stability_again(a.check)
    return 1 if bad else 0


def stability_again(check):
    """results/stability.md (where there is one) made again, or checked,
    against the previous reference's commit it names: 1 on a failure."""
    from . import stability
    path = os.path.join(ROOT, "results", stability.NAME)
    if not os.path.isfile(path):
        return 0
    try:
        args = ["--check"] if check else ["--rev", stability.against_of(path)]
    except ReportError as e:
        print(f"spreport regen: {e}", file=sys.stderr)
        return 1
    rc = stability.main(args)
    print(f"{path}: stability, "
          + ("identical" if check and rc == 0 else
             "made again" if rc == 0 else "failed"))
    return 1 if rc else 0
