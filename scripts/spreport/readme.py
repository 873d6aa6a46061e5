"""spreport.readme: the documents say only what the committed files hold.

    python3 -m spreport readme [--check] (--all | FILE...)

FILE is a Markdown document or a roff manual page; --all is every
document of the repository that has prose: each README.md, docs/*.md and
man/*.1 (the .md files spreport generates under results/ are checked by
`spreport regen`, which makes them again from their raw rows).

Figures. A figure is a number with a decimal point, a whole number of
time or of a ratio (ms, µs, us, ns, s, min, %, x, ×), or either number of
"N of M" ("11 of the 38 jobs"); sizes (4 KiB), factors (÷3, ×8), image
sizes and code spans are not figures. Every figure is bound to the cell it
comes from by a cells comment right after its paragraph, one binding a
line, the k-th binding for the k-th figure (spreport.cells: the grammar):

    On the large image read took 4.46 to 5.29 ms.
    <!-- cells
    results/paths/paths.md path=read span_ms min
    results/paths/paths.md path=read span_ms max
    -->

In a manual page a binding is a comment line `.\\" cells: BINDING` in the
paragraph. Without --check each figure is rewritten from its cell at the
precision it is written, and the generated blocks from their files; with
--check nothing is written and every difference is an error: a figure
that is not its cell's value at its precision, a figure with no binding,
a binding with no figure.

Verdicts and causes, lines of the same comment:

    verdict FILE FILTERS... COLUMN is|has TEXT
        every row the filters leave (at least one) has TEXT in COLUMN
    cause FILE [/REGEX/]
        the committed measurement that shows a cause

A paragraph that says who is faster, slower, wins, beats, loses, is
ahead, that sessions disagree or cannot separate, needs a verdict line (or is a generated block);
one that says "because" needs a cause line or calls itself a hypothesis.

Generated blocks, between `<!-- generated: SPEC -->` and
`<!-- end generated -->`:

  include FILE [HEADING]   FILE's lines, or those of its section HEADING
  sessions SCALES DIR...   a row a Sun-study case DIR, a column a factor:
                           the lowest to the highest session's read/mmap
                           ratio, † where they cannot separate read and
                           mmap (an interval holds 1, or they disagree)
  verdicts DIR...          a sentence a case: its factors grouped by the
                           verdict of DIR/sessions.md
  provenance DIR           the commits DIR's env.txt files name, and
                           whether src/ at HEAD differs from them"""
import csv
import os
import re
import subprocess
import sys

from . import cells

GEN = re.compile(r"<!-- generated: (.*?) -->")
END = "<!-- end generated -->"
CELLS_OPEN = "<!-- cells"
ROFF_CELLS = re.compile(r'^\.\\"\s*cells:\s*(.*)$')
ROFF_BREAK = re.compile(r"^\.(PP|LP|P|TP|IP|HP|SH|SS|TH)\b")
LEAD = r"(?<![\w./#@])(?<![\s(`\[]-)"
FIGURE = re.compile(
    LEAD + r"(\d+(?:,\d{3})*\.\d+)(?!\d|\.\d)"
    r"|" + LEAD + r"(\d+(?:,\d{3})*)"
    r"(?=\s?(?:ms|µs|us|ns|s|min|%|×|x)(?!\w))")
COUNT = re.compile(LEAD + r"(\d+(?:,\d{3})*)\s+of\s+(?:the\s+|all\s+)?"
                   r"(\d+(?:,\d{3})*)(?![\w]|\.\d)")
VERDICT = re.compile(r"\b(faster|slower|fastest|slowest|wins?|won|beats?|"
                     r"loses?|ahead of|(?:is|are|was|were|stays?) ahead|"
                     r"disagrees?|cannot separate)\b", re.I)
BECAUSE = re.compile(r"\bbecause\b", re.I)
HYPOTHESIS = re.compile(r"\bhypothes[ie]s\b", re.I)


def root():
    return os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))


def read_lines(path):
    with open(os.path.join(root(), path), encoding="utf-8") as f:
        return f.read().splitlines()


# ---- generated blocks

def include(path, heading=None):
    """PATH's lines, or those of its section HEADING."""
    lines = read_lines(path)
    if heading is None:
        return lines
    for i, line in enumerate(lines):
        m = re.match(r"(#+) (.*)", line)
        if m and m.group(2).strip() == heading:
            level = len(m.group(1))
            out = []
            for nxt in lines[i + 1:]:
                n = re.match(r"(#+) ", nxt)
                if n and len(n.group(1)) <= level:
                    break
                out.append(nxt)
            while out and not out[0].strip():
                out.pop(0)
            while out and not out[-1].strip():
                out.pop()
            return out
    raise ValueError(f"{path}: no heading '{heading}'")


SUN2002 = {-2: "1.14", -3: "1.28", -4: "1.48", -8: "2.03"}


def folder_label(path):
    """sun-1280x1024-warm-large -> "1280x1024, warm, large folios"."""
    parts = os.path.basename(os.path.normpath(path)).split("-")[1:]
    words = {"large": "large folios", "small": "4 KiB pages"}
    return ", ".join(words.get(p, p) for p in parts)


def factor(scale):
    return f"÷{-scale}" if scale < 0 else f"×{scale}"


def sessions(scales, dirs):
    """The sessions table (see the module's text)."""
    from . import stats
    cols = [int(x) for x in scales.split(",")]
    out = ["| case | " + " | ".join(factor(c) for c in cols) + " |",
           "|---|" + "---:|" * len(cols),
           "| Sun 2002 (Ultra 30) | "
           + " | ".join(SUN2002.get(c, "") for c in cols) + " |"]
    for d in dirs:
        ratios, intervals = {}, {}
        with open(os.path.join(root(), d, "sessions.csv")) as f:
            for row in csv.DictReader(f):
                ratios.setdefault(int(row["scale"]), []).append(
                    float(row["ratio"]))
                intervals.setdefault(int(row["scale"]), []).append(
                    (row["ratio_lo"], row["ratio_hi"]))
        row = []
        for c in cols:
            if c not in ratios:
                row.append("")
                continue
            sp = stats.between_sessions(ratios[c])
            row.append(f"{sp.lo:.2f}–{sp.hi:.2f}"
                       + (" †" if stats.separated(intervals[c]) == 0
                          else ""))
        out.append(f"| {folder_label(d)} | " + " | ".join(row) + " |")
    return out


def listing(items):
    return items[0] if len(items) == 1 else \
        ", ".join(items[:-1]) + " and " + items[-1]


def verdicts(dirs):
    """A sentence a case: its factors grouped by their verdict."""
    out = []
    for d in dirs:
        tables = cells.md_tables(read_lines(os.path.join(d, "sessions.md")))
        fit = [rows for _, head, rows in tables
               if "scale" in head and "verdict" in head]
        if not fit:
            raise ValueError(f"{d}/sessions.md has no scale and verdict")
        groups = {}
        for r in fit[0]:
            groups.setdefault(cells.clean(r["verdict"]), []).append(
                int(cells.clean(r["scale"])))
        parts = []
        for v in ("mmap faster", "read faster", "cannot separate"):
            if v in groups:
                at = listing([factor(s) for s in sorted(
                    groups.pop(v), key=lambda s: (s > 0, abs(s)))])
                parts.append(f"the sessions cannot separate them at {at}"
                             if v == "cannot separate"
                             else f"{v} in every session at {at}")
        if groups:
            raise ValueError(f"{d}/sessions.md: verdict "
                             f"'{next(iter(groups))}' is not known")
        out.append(f"{folder_label(d)}: " + "; ".join(parts) + ".")
    return [("- " + s if len(out) > 1 else s) for s in out]


def git(*args):
    return subprocess.run(["git", "-C", root(), *args],
                          capture_output=True, text=True)


def provenance(d):
    """Where DIR's results come from, and whether src/ moved since."""
    commits, dates = set(), set()
    for dirpath, _, files in os.walk(os.path.join(root(), d)):
        if "env.txt" not in files:
            continue
        with open(os.path.join(dirpath, "env.txt")) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k == "commit":
                    commits.add(v.strip())
                elif k == "date":
                    dates.add(v.split()[0])
    if not commits:
        raise ValueError(f"{d}: no env.txt names a commit")
    short = sorted(c[:7] for c in commits)
    moved = []
    for c in sorted(commits):
        r = git("diff", "--quiet", c, "HEAD", "--", "src/")
        if r.returncode not in (0, 1):
            return [f"Made at commit {listing(short)}; whether `src/` has "
                    "changed since cannot be told here (no git history)."]
        moved.append(r.returncode == 1)
    when = min(dates) if len(dates) == 1 else \
        f"{min(dates)} to {max(dates)}"
    head = (f"Made at commit{'s' if len(short) > 1 else ''} "
            f"{listing(short)} ({when}). ")
    if any(moved):
        return [head + "`src/` at HEAD differs from it: until the reference "
                "is made again, these figures describe the code of that "
                "commit."]
    return [head + "`src/` at HEAD is the same."]


def generate(spec):
    words = spec.split()
    if words[0] == "include" and len(words) >= 2:
        parts = spec.split(None, 2)
        return include(parts[1], parts[2] if len(parts) > 2 else None)
    if words[0] == "sessions" and len(words) >= 3:
        return sessions(words[1], words[2:])
    if words[0] == "verdicts" and len(words) >= 2:
        return verdicts(words[1:])
    if words[0] == "provenance" and len(words) == 2:
        return provenance(words[1])
    raise ValueError(f"unknown generator: {spec}")


def regenerate(lines):
    """LINES with every generated block rewritten."""
    out, i = [], 0
    while i < len(lines):
        m = GEN.search(lines[i])
        out.append(lines[i])
        i += 1
        if not m:
            continue
        while i < len(lines) and lines[i].strip() != END:
            i += 1
        if i == len(lines):
            raise ValueError(f"'{m.group(0)}' has no '{END}'")
        out += generate(m.group(1))
        out.append(lines[i])
        i += 1
    return out


# ---- paragraphs

class Paragraph:
    def __init__(self, first, mask):
        self.first = first      # its first line's number, from 1
        self.lines = []         # (index into the document, text)
        self.mask = mask        # its text with what is no prose blanked
        self.bindings = []      # figure bindings, in order
        self.verdicts = []
        self.causes = []
        self.where = None       # the line of its cells comment

    def bind(self, line, n):
        line = line.strip()
        if not line:
            return
        self.where = self.where or n
        word, _, rest = line.partition(" ")
        if word == "verdict":
            self.verdicts.append(rest)
        elif word == "cause":
            self.causes.append(rest)
        else:
            self.bindings.append(line)

    def text(self):
        """The paragraph's prose, the same length as its lines joined."""
        return self.mask("\n".join(t for _, t in self.lines))

    def figures(self):
        """(line index, start, end, text) of each figure, in order."""
        text, starts, pos = self.text(), [], 0
        for idx, t in self.lines:
            starts.append((pos, idx))
            pos += len(t) + 1
        found = []
        for m in FIGURE.finditer(text):
            g = 1 if m.group(1) else 2
            found.append((m.start(g), m.end(g)))
        for m in COUNT.finditer(text):
            found += [(m.start(1), m.end(1)), (m.start(2), m.end(2))]
        found.sort()
        out, last = [], -1
        for s, e in found:
            if s < last:
                continue
            last = e
            base, idx = max(p for p in starts if p[0] <= s)
            out.append((idx, s - base, e - base, text[s:e]))
        return out


def blank(m):
    return " " * len(m.group(0))


def mask_md(line):
    """LINE (or lines) with what holds no prose blanked out, at the same
    length: a code span or a comment may go on over a line's end."""
    line = re.sub(r"<!--.*?-->", blank, line, flags=re.S)
    line = re.sub(r"`[^`]*`", blank, line)
    line = re.sub(r"\]\([^)]*\)", lambda m: "]" + blank(m)[1:], line)
    return re.sub(r"https?://\S+", blank, line)


ROFF_ESC = {r"\-": " -", r"\(mu": "   ×", r"\(di": "   ÷", r"\(em": "   —",
            r"\(en": "   –", r"\~": "  ", r"\&": "  ", r"\e": " \\",
            r"\(aq": "   '"}


def mask_roff(line):
    line = re.sub(r"\\f(?:\(..|\[[^]]*\]|.)", blank, line)
    line = re.sub(r"\\\(..|\\.", lambda m: ROFF_ESC.get(
        m.group(0), " " * len(m.group(0))), line)
    if line.startswith("."):
        # a macro's name is no prose; its arguments are
        line = re.sub(r"^\.\S*", blank, line)
    return line


def paragraphs_md(lines, errors, name):
    out, cur, fence, gen, i = [], None, False, False, 0
    while i < len(lines):
        line, s, n = lines[i], lines[i].strip(), i + 1
        i += 1
        if s.startswith("```"):
            fence, cur = not fence, None
            continue
        if fence:
            continue
        if GEN.search(s):
            gen, cur = True, None
        if gen:
            gen = s != END
            continue
        if s.startswith("<!-- numbers:"):
            errors.append(f"{name}:{n}: 'numbers:' names files, not cells: "
                          "bind each figure in a cells comment")
            continue
        if s.startswith(CELLS_OPEN):
            if cur is None or cur.where is not None:
                errors.append(f"{name}:{n}: a cells comment with no "
                              "paragraph right above it")
                cur = Paragraph(n, mask_md)
            body = [s[len(CELLS_OPEN):]]
            while "-->" not in body[-1] and i < len(lines):
                body.append(lines[i])
                i += 1
            body[-1] = body[-1].split("-->")[0]
            for k, b in enumerate(body):
                cur.bind(b.lstrip(":"), n + k)
            cur.where = cur.where or n
            cur = None
            continue
        if s == "":
            cur = None
            continue
        if cur is None:
            cur = Paragraph(n, mask_md)
            out.append(cur)
        cur.lines.append((n - 1, line))
    return out


def paragraphs_roff(lines, errors, name):
    out, cur, nofill = [], None, False
    for i, line in enumerate(lines):
        n = i + 1
        m = ROFF_CELLS.match(line)
        if m:
            if cur is None:
                errors.append(f"{name}:{n}: a cells comment with no "
                              "paragraph")
                continue
            cur.bind(m.group(1), n)
            continue
        if line.startswith(('.\\"', "'\\\"")):
            continue
        if re.match(r"^\.(nf|EX)\b", line):
            nofill = True
        elif re.match(r"^\.(fi|EE)\b", line):
            nofill = False
            continue
        if nofill:
            continue
        if ROFF_BREAK.match(line) or cur is None:
            cur = Paragraph(n, lambda text: text)
            out.append(cur)
        cur.lines.append((i, mask_roff(line)))
    return out


def paragraphs(name, lines, errors):
    if re.search(r"\.\d$", name):
        return paragraphs_roff(lines, errors, name)
    return paragraphs_md(lines, errors, name)


def check_paragraph(name, files, p, lines):
    """(errors, figures that differ from their cells) of paragraph P; the
    figures in LINES rewritten from their cells where they can be."""
    errors, differ = [], []
    at = f"{name}:{p.first}"
    figs = p.figures()
    text = p.text()
    if figs and not p.bindings:
        errors.append(f"{at}: figures with no cell: "
                      + ", ".join(f[3] for f in figs[:5]))
    elif len(figs) != len(p.bindings):
        errors.append(f"{at}: {len(figs)} figures ("
                      + ", ".join(f[3] for f in figs)
                      + f") and {len(p.bindings)} cells")
    else:
        edits = []
        for (idx, s, e, written), b in zip(figs, p.bindings):
            try:
                v = cells.value(files, b)
            except cells.CellError as err:
                errors.append(f"{at}: {err}")
                continue
            want = cells.render(v, written)
            if want.replace(",", "") != written.replace(",", ""):
                differ.append(f"{at}: {written} is {want} in {b}")
                edits.append((idx, s, e, want))
        for idx, s, e, want in sorted(edits, key=lambda x: (x[0], -x[1])):
            lines[idx] = lines[idx][:s] + want + lines[idx][e:]
    for kind, lines_of, test in (("verdict", p.verdicts, cells.verdict),
                                 ("cause", p.causes, cells.cause)):
        for line in lines_of:
            try:
                err = test(files, line)
            except cells.CellError as e:
                err = str(e)
            if err:
                errors.append(f"{at}: {kind}: {err}")
    m = VERDICT.search(text)
    if m and not p.verdicts:
        errors.append(f"{at}: '{m.group(0)}' is a verdict with no verdict "
                      "line")
    if BECAUSE.search(text) and not p.causes and not HYPOTHESIS.search(text):
        errors.append(f"{at}: a 'because' with no cause line, and not "
                      "called a hypothesis")
    return errors, differ


def check(name, lines):
    """(errors, figures that differ from their cells, LINES with their
    figures and generated blocks made again)."""
    errors, differ = [], []
    try:
        made = regenerate(lines)
    except (ValueError, OSError) as e:
        return [f"{name}: {e}"], [], lines
    if made != lines:
        differ.append(f"{name}: a generated block differs from its files")
    lines = list(made)
    files = cells.Files(root())
    for p in paragraphs(name, lines, errors):
        e, d = check_paragraph(name, files, p, lines)
        errors += e
        differ += d
    return errors, differ, lines


def documents():
    """Every document with prose: each README.md, docs/*.md, man/*.1."""
    top = root()
    out = []
    for dirpath, dirs, files in os.walk(top):
        rel = os.path.relpath(dirpath, top)
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build"))
                         and not (rel == "." and d == "runs"))
        for f in sorted(files):
            path = os.path.normpath(os.path.join(rel, f))
            if f == "README.md" or re.fullmatch(r"docs/.*\.md", path) \
                    or re.fullmatch(r"man/[^/]+\.\d", path):
                out.append(path)
    return out


def main(argv):
    check_only = "--check" in argv
    files = [a for a in argv if a not in ("--check", "--all")]
    if "--all" in argv:
        files += [os.path.join(root(), d) for d in documents()]
    if not files:
        sys.stderr.write("usage: spreport readme [--check] "
                         "(--all | FILE...)\n")
        return 2
    errors = []
    for name in files:
        with open(name, encoding="utf-8") as f:
            old = f.read().splitlines()
        shown = os.path.relpath(name, root()) \
            if os.path.isabs(name) else name
        errs, differ, new = check(shown, old)
        if check_only:
            errors += errs + differ
            if differ:
                errors.append(f"{shown}: `spreport readme {shown}` makes "
                              "its figures and blocks again")
        else:
            errors += errs
            if new != old:
                with open(name, "w", encoding="utf-8") as f:
                    f.write("\n".join(new) + "\n")
    for e in errors:
        sys.stderr.write(e + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
