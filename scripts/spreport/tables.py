"""Reading the experiments' raw files and writing Markdown: the one CSV
reader every report uses (columns found by name, CRLF and blank lines
ignored, a short or long row an error) and the one table writer."""
import os


class ReportError(Exception):
    """A report cannot be made: the message names the file and why."""


def read_rows(path, need=(), sep=","):
    """The rows of the delimited file PATH, each a dict keyed by the
    header's names, in file order.  ReportError when the file cannot be
    read, has no header, lacks a column of NEED, or a row has another
    number of fields than the header."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ReportError(f"{path}: {e.strerror}") from None
    if not lines or not lines[0].strip():
        raise ReportError(f"{path}: no header line")
    names = lines[0].split(sep)
    missing = [n for n in need if n not in names]
    if missing:
        raise ReportError(f"{path}: needs columns {', '.join(need)}")
    rows = []
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split(sep)
        if len(fields) != len(names):
            raise ReportError(f"{path}:{lineno}: {len(fields)} fields, "
                              f"header has {len(names)}")
        row = dict(zip(names, fields))
        row["_line"] = lineno
        rows.append(row)
    return rows


def number(row, name, path):
    """ROW's field NAME as a finite float; ReportError naming PATH and the
    line when it is not one."""
    text = row.get(name, "")
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if v != v or v in (float("inf"), float("-inf")):
        raise ReportError(f"{path}:{row['_line']}: {name} is not a number: "
                          f"\"{text}\"")
    return v


def markdown_table(header, align, rows):
    """The Markdown lines of a table: HEADER the column names, ALIGN one
    of "l"/"r" a column, ROWS lists of cells (already formatted)."""
    def line(cells):
        # an empty cell is "| |", as the tables have always had it
        return "|" + "|".join(f" {c} " if str(c) else " "
                              for c in cells) + "|"
    out = [line(header),
           "|" + "|".join("---:" if a == "r" else "---" for a in align)
           + "|"]
    out += [line(r) for r in rows]
    return out


def replace_whole(path, write):
    """PATH made by WRITE(tmp), which writes a file beside it that is then
    renamed over PATH, so that a failed report leaves no half file.
    ReportError on failure."""
    tmp = f"{path}.tmp.{os.getpid()}{os.path.splitext(path)[1]}"
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise ReportError(f"{path}: {e.strerror}") from None


def write_text(path, text):
    """TEXT into PATH, replaced whole; ReportError on failure."""
    def write(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
    replace_whole(path, write)


def fmt_g(v):
    """V as awk's print shows a number (six significant digits)."""
    return f"{v:.6g}"
