"""The durable-replacement suite's report: from durable.csv (size, case,
round, wall_ns, rss_kb; case "new" or "replace") durable.md, the median
of each size and case and their difference."""
import os

from . import stats
from .tables import (ReportError, markdown_table, number, read_rows,
                     write_text)

NEED = ("size", "case", "round", "wall_ns")


def ppm_bytes(size):
    """The bytes of a binary PPM of SIZE ("WxH") as scaleppm writes it:
    "P6\\nW H\\n255\\n" then 3 bytes a pixel."""
    w, h = (int(x) for x in size.split("x"))
    return w * h * 3 + len(f"{w} {h}") + 8


def report(folder, filesystem):
    """FOLDER/durable.md from FOLDER/durable.csv; FILESYSTEM says where
    the outputs went.  ReportError on a bad file or a size that lacks a
    case."""
    path = os.path.join(folder, "durable.csv")
    walls = {}
    for row in read_rows(path, NEED):
        if row["case"] not in ("new", "replace"):
            raise ReportError(f"{path}:{row['_line']}: bad case "
                              f"\"{row['case']}\"")
        walls.setdefault(row["size"], {"new": [], "replace": []})[
            row["case"]].append(number(row, "wall_ns", path))
    rows = []
    for size, by in sorted(walls.items(), key=lambda kv: ppm_bytes(kv[0])):
        if not by["new"] or not by["replace"]:
            raise ReportError(f"{path}: {size} lacks new or replace rounds")
        new = stats.median(by["new"]) / 1e6
        rep = stats.median(by["replace"]) / 1e6
        rows.append([size, ppm_bytes(size), len(by["replace"]),
                     f"{new:.1f}", f"{rep:.1f}", f"{rep - new:.1f}",
                     f"{rep / new:.2f}"])
    text = ["# Durable replacement: its cost", "",
            f"`scaleppm -s 1 IN OUT` into {filesystem}, warm input, a sync "
            "before each run;",
            "medians of the rounds (`durable.csv`). \"new\": OUT did not "
            "exist (no",
            "fsync); \"replace\": OUT existed, so the new file is fsynced "
            "before the",
            "rename and the directory after.", ""]
    text += markdown_table(["output", "bytes", "rounds", "new (ms)",
                            "replace (ms)", "replace - new (ms)",
                            "replace / new"], "lllllll", rows)
    text = "\n".join(text) + "\n"
    write_text(os.path.join(folder, "durable.md"), text)
    return text
