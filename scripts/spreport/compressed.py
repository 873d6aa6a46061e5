"""spreport.compressed: the tables of run_experiments.sh --suite compressed.

    spreport compressed COMPRESSED_CSV COMPRESSED_MD

For each input (the Sun study's image, the largest photo), format (PPM,
JPEG, PNG), cache state and job: the median over the rounds of the
study's span (load + scale + release, the decode in the load) for read,
mmap and pread, the load's share of mmap's span, read against mmap as a
ratio of the means with its 95% bootstrap interval (above 1: mmap
faster), mmap against pread, and each path's median peak RSS."""
from collections import defaultdict

from . import stats
from .paths import mb, ms
from .tables import ReportError, markdown_table, number, read_rows, \
    write_text

PATHS = ("read", "mmap", "pread")
NEED = ("input", "format", "size", "job", "cache", "io", "span_ns",
        "load_ns", "maxrss_kb", "io_used")


def cases_of(path):
    """The rows grouped by (input, format, size, cache, job), then io."""
    cases = defaultdict(lambda: defaultdict(list))
    for row in read_rows(path, NEED):
        key = (row["input"], row["format"], row["size"], row["cache"],
               row["job"])
        cases[key][row["io"]].append(row)
    return cases


def rows_of(cases, cache, path):
    out, last = [], None
    for key, runs in cases.items():
        name, fmt, size, c, job = key
        if c != cache:
            continue
        if set(runs) != set(PATHS):
            raise ReportError(f"{path}: {key}: not every path ran")
        span = {p: [number(r, "span_ns", path) for r in runs[p]]
                for p in PATHS}
        med = {p: stats.median(span[p]) for p in PATHS}
        load = stats.median(number(r, "load_ns", path) / number(
            r, "span_ns", path) for r in runs["mmap"])
        rss = {p: stats.median(number(r, "maxrss_kb", path)
                               for r in runs[p]) for p in PATHS}
        used = sorted({r["io_used"] for r in runs["mmap"]})
        r = stats.ratio_bootstrap(span["read"], span["mmap"])
        label = f"{name} {size}" if (name, size) != last else ""
        last = (name, size)
        out.append([label, fmt, job, ms(med["read"]), ms(med["mmap"]),
                    ms(med["pread"]), f"{100 * load:.0f}",
                    f"{r.ratio:.2f}", f"{r.lo:.2f}–{r.hi:.2f}",
                    f"{med['mmap'] / med['pread']:.2f}", mb(rss["read"]),
                    mb(rss["mmap"]), mb(rss["pread"]), "/".join(used),
                    len(runs["read"])])
    return out


def report(csv_path, md_path):
    cases = cases_of(csv_path)
    out = [
        "# compressed: read, mmap and pread on PPM, JPEG and PNG inputs",
        "",
        "The study's span (load + scale + release from `--timings`, the "
        "decode of a JPEG or PNG inside the load) and the process's peak "
        "RSS (`sprun`), medians over the rounds; in each round the three "
        "paths run once each, in an order rotated by one a round, after "
        "a warm-up round. \"load %\": the load's share of mmap's span. "
        "\"read/mmap\": the ratio of the mean spans, above 1 mmap faster, "
        "with its 95% bootstrap interval. \"mmap used\": the path mmap's "
        "records name. Output to `/dev/null`. Raw rows: "
        "`compressed.csv`.",
    ]
    header = ["input", "format", "job", "read ms", "mmap ms", "pread ms",
              "load %", "read/mmap", "95%", "mmap/pread",
              "peak RSS MiB read", "mmap", "pread", "mmap used", "rounds"]
    align = "lllrrrrrrrrrrlr"
    for cache, title in (("warm", "Input in the page cache"),
                         ("cold", "Input evicted before every run")):
        rows = rows_of(cases, cache, csv_path)
        if rows:
            out += ["", f"## {title}", ""]
            out += markdown_table(header, align, rows)
    write_text(md_path, "\n".join(out) + "\n")
