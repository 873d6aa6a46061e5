"""spreport.cells: one figure of a committed file, named by its cell.

A binding is a line of words, split as the shell splits them:

    FILE[#N] [COL=VALUE | COL~REGEX]... [COLUMN[@K]] [AGG] [*F | /F]
    FILE 'REGEX'                  (REGEX written /.../: its first group)

FILE is a path from the repository's root. A .csv or .tsv is read by its
header; a .md by its pipe tables (#N: the N-th table of the file,
#HEADING: the tables under that heading; of those, the first that has
every column named; a row's blank leading cells are the row's above); a .txt (env.txt) as one row whose
columns are the keys of its "key: value" lines. COL=VALUE keeps the rows
whose cell in COL is VALUE, COL~REGEX those where REGEX is found in it (a
cell's text is compared with `*`, backticks and the blanks around it taken
out). COLUMN@K is the K-th number in the cell (the first without @K).
Without AGG exactly one row must be left; AGG is min, max, median, mean or
sum over the rows left whose cell is not blank, or count (the rows left,
with no COLUMN). A word is COLUMN before it is AGG: `median min` is the
least of a column named median. *F and /F scale the value.

Values are Decimals read from the files' text, so that a figure written
with d decimals is compared with its cell rounded half up to d: no binary
rounding decides a last digit."""
import csv
import os
import re
import shlex
from decimal import Decimal, ROUND_HALF_UP

NUMBER = re.compile(r"(?:(?<![\w.])-)?\d+(?:,\d{3})*(?:\.\d+)?"
                    r"(?:[eE][+-]?\d+)?")
AGGREGATES = ("min", "max", "median", "mean", "sum", "count")


class CellError(ValueError):
    pass


def clean(text):
    return text.replace("*", "").replace("`", "").strip()


def numbers(text):
    """The numbers in TEXT, as Decimals."""
    return [Decimal(m.replace(",", "")) for m in NUMBER.findall(text)]


def md_tables(lines):
    """The pipe tables of a Markdown file: a list of (heading, header,
    rows), HEADING the text of the last heading above the table, each row
    a dict by column. A row's blank leading cells are its group's, those
    of the row above (as a table groups rows under its first column)."""
    def split(line):
        s = line.strip()
        s = s[1:] if s.startswith("|") else s
        s = s[:-1] if s.endswith("|") and not s.endswith("\\|") else s
        return [c.replace("\\|", "|")
                for c in re.split(r"(?<!\\)\|", s)]

    tables, i, heading = [], 0, ""
    while i + 1 < len(lines):
        h = re.match(r"#+\s+(.*?)\s*$", lines[i])
        if h:
            heading = h.group(1)
        if (lines[i].lstrip().startswith("|")
                and re.fullmatch(r"\s*\|?[\s:|-]*-[\s:|-]*", lines[i + 1])):
            header = [clean(c) for c in split(lines[i])]
            rows, i, above = [], i + 2, []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                cells = split(lines[i])
                lead = 0
                while lead < len(cells) and not cells[lead].strip():
                    lead += 1
                cells = above[:lead] + cells[lead:]
                rows.append(dict(zip(header, cells)))
                above = cells
                i += 1
            tables.append((heading, header, rows))
        else:
            i += 1
    return tables


class Files:
    """The committed files bindings read, each read once."""

    def __init__(self, root):
        self.root = root
        self.texts = {}

    def text(self, path):
        if path not in self.texts:
            full = os.path.join(self.root, path)
            try:
                with open(full, encoding="utf-8") as f:
                    self.texts[path] = f.read()
            except OSError as e:
                raise CellError(f"{path}: {e.strerror}") from None
        return self.texts[path]

    def table(self, path, index, columns):
        """The rows of PATH's table (see the module's text)."""
        text = self.text(path)
        if path.endswith((".csv", ".tsv")):
            if index is not None:
                raise CellError(f"{path}: #{index} is for .md files")
            delim = "\t" if path.endswith(".tsv") else ","
            rows = list(csv.DictReader(text.splitlines(), delimiter=delim))
            have = set(rows[0]) if rows else set()
        elif path.endswith(".md"):
            tables = md_tables(text.splitlines())
            if isinstance(index, int):
                if not 1 <= index <= len(tables):
                    raise CellError(f"{path} has no table #{index}")
                tables = tables[index - 1:index]
            elif index is not None:
                tables = [t for t in tables if t[0] == index]
                if not tables:
                    raise CellError(f"{path} has no table under a heading "
                                    f"'{index}'")
            fit = [t for t in tables if set(columns) <= set(t[1])]
            if not fit:
                raise CellError(f"{path}: no table has the columns "
                                + ", ".join(columns))
            _, header, rows = fit[0]
            have = set(header)
        elif path.endswith(".txt"):
            row = {}
            for line in text.splitlines():
                k, sep, v = line.partition(":")
                if sep and k.strip() not in row:
                    row[k.strip()] = v.strip()
            rows, have = [row], set(row)
        else:
            raise CellError(f"{path}: a table is a .csv, .tsv, .md or "
                            ".txt; name a value in it with /REGEX/")
        missing = [c for c in columns if c not in have]
        if missing:
            raise CellError(f"{path} has no column " + ", ".join(missing))
        return rows


def parse(line):
    """A binding's words, as a dict."""
    try:
        words = shlex.split(line)
    except ValueError as e:
        raise CellError(f"'{line}': {e}") from None
    if not words:
        raise CellError("an empty binding")
    path, _, index = words[0].partition("#")
    b = {"path": path,
         "index": int(index) if index.isdigit() else (index or None),
         "filters": [], "column": None, "k": 1, "agg": None,
         "scale": Decimal(1), "regex": None}
    for w in words[1:]:
        m = re.fullmatch(r"([^=~]+)([=~])(.*)", w)
        if len(w) > 1 and w.startswith("/") and w.endswith("/"):
            b["regex"] = w[1:-1]
        elif w in AGGREGATES and (b["column"] or w == "count"):
            b["agg"] = w
        elif re.fullmatch(r"[*/]\d+(?:\.\d+)?(?:e\d+)?", w):
            f = Decimal(w[1:])
            b["scale"] = f if w[0] == "*" else 1 / f
        elif m and b["column"] is None:
            b["filters"].append((m.group(1), m.group(2), m.group(3)))
        elif b["column"] is None:
            col, _, k = w.rpartition("@") if re.search(r"@\d+$", w) \
                else (w, "", "")
            b["column"], b["k"] = col, int(k) if k else 1
        else:
            raise CellError(f"'{line}': '{w}' is not a filter, a column, "
                            "an aggregate or a scale")
    if b["regex"] is None and b["column"] is None and b["agg"] != "count":
        raise CellError(f"'{line}': no column")
    return b


def rows_of(files, b):
    """The rows a binding's filters leave."""
    cols = [f[0] for f in b["filters"]]
    if b["column"]:
        cols.append(b["column"])
    rows = files.table(b["path"], b["index"], cols)
    for col, op, val in b["filters"]:
        if op == "=":
            rows = [r for r in rows if clean(r.get(col) or "") == val]
        else:
            rows = [r for r in rows
                    if re.search(val, clean(r.get(col) or ""))]
    return rows


def value(files, line):
    """The Decimal a binding names."""
    b = parse(line)
    if b["regex"] is not None:
        m = re.search(b["regex"], files.text(b["path"]))
        if not m:
            raise CellError(f"'{line}': /{b['regex']}/ is not in {b['path']}")
        nums = numbers(m.group(1) if m.groups() else m.group(0))
        if len(nums) < b["k"]:
            raise CellError(f"'{line}': no number {b['k']} in '{m.group(0)}'")
        return nums[b["k"] - 1] * b["scale"]
    rows = rows_of(files, b)
    if b["agg"] == "count":
        return Decimal(len(rows)) * b["scale"]
    if not rows:
        raise CellError(f"'{line}': no row")
    if b["agg"] is None and len(rows) > 1:
        raise CellError(f"'{line}': {len(rows)} rows, and no aggregate")
    if b["agg"]:
        # an aggregate is over the rows that have the figure
        rows = [r for r in rows if clean(r[b["column"]] or "")]
        if not rows:
            raise CellError(f"'{line}': every cell is blank")
    vals = []
    for r in rows:
        nums = numbers(r[b["column"]] or "")
        if len(nums) < b["k"]:
            raise CellError(f"'{line}': no number {b['k']} in "
                            f"'{r[b['column']]}'")
        vals.append(nums[b["k"] - 1])
    vals.sort()
    agg = b["agg"] or "min"
    if agg == "min":
        v = vals[0]
    elif agg == "max":
        v = vals[-1]
    elif agg == "sum":
        v = sum(vals)
    elif agg == "mean":
        v = sum(vals) / len(vals)
    else:
        n = len(vals)
        v = vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2
    return v * b["scale"]


def verdict(files, line):
    """'FILTERS... COLUMN is|has TEXT': an error, or None where every row
    left (at least one) holds TEXT in COLUMN."""
    words = shlex.split(line)
    if len(words) < 4 or words[-2] not in ("is", "has"):
        raise CellError(f"'verdict {line}': ends COLUMN is|has TEXT")
    op, text = words[-2], words[-1]
    b = parse(shlex.join(words[:-2]))
    if b["agg"] or b["regex"] is not None or not b["column"]:
        raise CellError(f"'verdict {line}': rows and a column, no more")
    rows = rows_of(files, b)
    if not rows:
        return f"no row of {b['path']} is left by the verdict's filters"
    for r in rows:
        cell = clean(r[b["column"]] or "")
        if (cell != text) if op == "is" else (text not in cell):
            keys = ", ".join(f"{c}{o}{v}" for c, o, v in b["filters"])
            return (f"{b['path']} ({keys}) has '{cell}' in {b['column']}, "
                    f"not '{text}'")
    return None


def cause(files, line):
    """'FILE [/REGEX/]': an error, or None where the file is there (and
    REGEX found in it)."""
    words = shlex.split(line)
    if not words or len(words) > 2:
        raise CellError(f"'cause {line}': FILE [/REGEX/]")
    text = files.text(words[0])
    if len(words) == 2:
        w = words[1]
        if not (len(w) > 1 and w.startswith("/") and w.endswith("/")):
            raise CellError(f"'cause {line}': the pattern is written /.../")
        if not re.search(w[1:-1], text):
            return f"{w} is not in {words[0]}"
    return None


def render(v, written):
    """V written as WRITTEN is: its decimals, and its thousands commas."""
    plain = written.replace(",", "")
    d = len(plain.split(".")[1]) if "." in plain else 0
    q = v.quantize(Decimal(1).scaleb(-d), rounding=ROUND_HALF_UP)
    if q == 0:
        q = abs(q)
    return f"{q:,.{d}f}" if "," in written else f"{q:.{d}f}"
