"""The threads suite's report: from threads.csv (image, job, output,
load, contender, round, wall_ns, rss_kb) threads.md: the default thread
count's median against each -t's and the best of them, for every image,
job, output and load; and issue 16's two pipe targets against vips zoom
and pamenlarge."""
import os

from . import stats
from .tables import (ReportError, markdown_table, number, read_rows,
                     write_text)

NEED = ("image", "job", "output", "load", "contender", "round", "wall_ns")
VARIANTS = ("default", "t1", "t2", "t4", "t8")
SLACK = 1.10        # the default may be this much slower than the best -t
# The pipe targets: image, job, peer, the most scaleppm / peer may be.
TARGETS = (("12000x10000", "2", "vips-zoom", 0.6),
           ("1280x1024", "2", "pamenlarge", 0.5))
QUICK = {"12000x10000": "2000x1500", "1280x1024": "320x256"}
# What the pipe alone costs (sppipe), for the large target's job.
FLOORS = ("floor-vmsplice", "floor-write")
OUTPUTS = ("pipe", "tmpfs", "disk")


def job_label(job):
    """"reduce 2" for -2, "enlarge 2" for 2, "box 2" for box-2."""
    if job.startswith("box-"):
        return f"box {job[4:]}"
    return f"reduce {job[1:]}" if job.startswith("-") else f"enlarge {job}"


def pixels(size):
    w, h = (int(x) for x in size.split("x"))
    return w * h


def medians(path):
    """{(image, job, output, load): {contender: (median ms, rounds)}}."""
    walls = {}
    for row in read_rows(path, NEED):
        key = (row["image"], row["job"], row["output"], row["load"])
        walls.setdefault(key, {}).setdefault(row["contender"], []).append(
            number(row, "wall_ns", path) / 1e6)
    return {k: {c: (stats.median(v), len(v)) for c, v in by.items()}
            for k, by in walls.items()}


def ms(v):
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def target_rows(med):
    """The pipe targets' rows, for the images there are (the quick run's
    smaller images stand in for theirs)."""
    rows = []
    images = {k[0] for k in med}
    for image, job, peer, most in TARGETS:
        if image not in images:
            image = QUICK[image]
        by = med.get((image, job, "pipe", "quiet"), {})
        if "default" not in by or peer not in by:
            continue
        sp, pe = by["default"][0], by[peer][0]
        ratio = sp / pe
        rows.append([image, job_label(job), ms(sp), peer, ms(pe),
                     f"{ratio:.2f}", f"≤ {most}",
                     "yes" if ratio <= most else "**no**"])
        for floor in FLOORS:
            if floor in by:
                fl = by[floor][0]
                rows.append([image, job_label(job), ms(sp), floor, ms(fl),
                             f"{sp / fl:.2f}", "", ""])
    return rows


def report(folder, cpus, disk):
    """FOLDER/threads.md from FOLDER/threads.csv; CPUS the busy loops of
    the loaded runs, DISK the filesystem of the "disk" output.
    ReportError on a bad file or a case without every variant."""
    path = os.path.join(folder, "threads.csv")
    med = medians(path)
    rows, met, rounds = [], 0, set()
    order = sorted(med, key=lambda k: (pixels(k[0]), k[3] != "quiet",
                                       OUTPUTS.index(k[2]) if k[2] in OUTPUTS
                                       else 9, job_label(k[1])))
    for key in order:
        by = med[key]
        missing = [v for v in VARIANTS if v not in by]
        if missing:
            raise ReportError(f"{path}: {'/'.join(key)} lacks "
                              f"{', '.join(missing)}")
        best = min(VARIANTS[1:], key=lambda v: by[v][0])
        ratio = by["default"][0] / by[best][0]
        ok = ratio <= SLACK
        met += ok
        rounds.add(by["default"][1])
        rows.append([key[0], job_label(key[1]), key[2], key[3]]
                    + [ms(by[v][0]) for v in VARIANTS]
                    + [f"-t {best[1:]}", f"{ratio:.2f}",
                       "yes" if ok else "**no**"])
    n = "/".join(str(r) for r in sorted(rounds))
    text = ["# threads: the default thread count, and the pipe targets", "",
            "scaleppm's default threads (one per CPU it may use) against "
            "`-t 1`, `-t 2`,",
            "`-t 4` and `-t 8`,",
            f"whole process timed by `sprun`, medians of {n} rounds, the",
            "contenders' order rotated by one each round (`threads.csv`).",
            f"This machine has {cpus} CPUs. \"loaded\": a busy loop on every "
            "CPU the",
            "while. Outputs: \"pipe\", `| cat >/dev/null` (the pipeline "
            "timed whole);",
            f"\"tmpfs\", a file in /dev/shm; \"disk\", a file on {disk}; a "
            "file output",
            "is removed, and a sync made, before each run. Inputs warm.", "",
            "## Into a pipe: against the peers (issue 16's targets)", "",
            "Enlarge by 2, quiet machine, the pipeline as above: scaleppm "
            "with its",
            "defaults against `vips zoom IN .ppm 2 2` (12000x10000) and "
            "`pamenlarge 2`",
            "(1280x1024), in the same rounds; and against the floor, "
            "`sppipe`: as many",
            "bytes of rows into the same pipe, nothing scaled, from a ring "
            "of buffers larger",
            "than the pipe, by vmsplice (the pipe takes the pages) and by "
            "writev (the",
            "kernel copies them).", ""]
    text += markdown_table(["image", "job", "scaleppm ms", "peer",
                            "peer ms", "scaleppm / peer", "target",
                            "met?"], "llrlrrll", target_rows(med))
    text += ["", "## The default against the best `-t`", "",
             f"The default is within {round((SLACK - 1) * 100)}% of the "
             f"best `-t` in {met} of {len(rows)} cases",
             f"(\"default / best\" ≤ {SLACK:.2f}).", ""]
    text += markdown_table(["image", "job", "output", "load",
                            "default ms", "-t 1 ms", "-t 2 ms", "-t 4 ms",
                            "-t 8 ms", "best", "default / best", "met?"],
                           "llllrrrrrlrl", rows)
    text = "\n".join(text) + "\n"
    write_text(os.path.join(folder, "threads.md"), text)
    return text
