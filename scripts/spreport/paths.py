"""spreport.paths: the tables of run_experiments.sh --suite paths.

    python3 -m spreport.paths PATHS_CSV PATHS_MD

For each image, cache state and job: the median over the rounds of the
study's span (load + scale + release) for read, mmap and pread, the two
ratios that choose between them, and each path's median peak RSS."""
import csv
import sys
from collections import defaultdict

from .stats import median

PATHS = ("read", "mmap", "pread")


def load(path):
    """The rows of PATHS_CSV grouped by (size, cache, job), then by io."""
    cases = defaultdict(lambda: defaultdict(list))
    order = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["size"], row["cache"], row["job"])
            if key not in cases:
                order.append(key)
            cases[key][row["io"]].append(row)
    return cases, order


def pixels(size):
    w, h = size.split("x")
    return int(w) * int(h)


def image_label(size):
    n = pixels(size) * 3
    if n >= 1 << 20:
        return f"{size} ({n / (1 << 20):.2f} MiB)"
    return f"{size} ({n / 1024:.0f} KiB)"


def ms(ns):
    v = ns / 1e6
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def mb(kb):
    return f"{kb / 1024:.1f}"


def table(cases, order, cache, whole):
    """The Markdown table of one cache state; WHOLE adds the whole
    process's time (fork to wait4) for each path."""
    lines = [
        "| input | job | read ms | mmap ms | pread ms | read/mmap "
        "| mmap/pread | peak RSS MiB read | mmap | pread |"
        + (" process ms read | mmap | pread |" if whole else "")
        + " rounds |",
        "|---|---|" + "---:|" * (9 + (3 if whole else 0)),
    ]
    last = None
    for key in order:
        size, c, job = key
        if c != cache:
            continue
        runs = cases[key]
        span = {p: median(float(r["span_ns"]) for r in runs[p])
                for p in PATHS}
        rss = {p: median(float(r["maxrss_kb"]) for r in runs[p])
               for p in PATHS}
        wall = {p: median(float(r["wall_ns"]) for r in runs[p])
                for p in PATHS}
        label = image_label(size) if size != last else ""
        last = size
        lines.append(
            f"| {label} | {job} | {ms(span['read'])} | {ms(span['mmap'])} "
            f"| {ms(span['pread'])} | {span['read'] / span['mmap']:.2f} "
            f"| {span['mmap'] / span['pread']:.2f} | {mb(rss['read'])} "
            f"| {mb(rss['mmap'])} | {mb(rss['pread'])} "
            + (f"| {ms(wall['read'])} | {ms(wall['mmap'])} "
               f"| {ms(wall['pread'])} " if whole else "")
            + f"| {len(runs['read'])} |")
    return lines


def report(csv_path, md_path):
    cases, order = load(csv_path)
    threads = sorted({r["threads"] for k in order for p in PATHS
                      for r in cases[k][p]})
    out = [
        "# paths: read, mmap and pread on the same jobs",
        "",
        "The study's span (load + scale + release, from `--timings`) and",
        "the process's peak RSS (`sprun`), medians over the rounds; in each",
        "round the three paths run once each, in an order rotated by one a",
        f"round. Output to `/dev/null`, {', '.join(threads)} threads. "
        "Raw rows: `paths.csv`.",
        "",
        "## Input in the page cache",
        "",
    ]
    out += table(cases, order, "warm", False)
    if any(k[1] == "cold" for k in order):
        out += ["", "## Input evicted before every run", "",
                "The span, and the whole process from fork to wait4.", ""]
        out += table(cases, order, "cold", True)
    with open(md_path, "w") as f:
        f.write("\n".join(out) + "\n")


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: spreport.paths PATHS_CSV PATHS_MD\n")
        return 2
    report(argv[0], argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
