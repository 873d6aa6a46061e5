"""spreport.readme: no number in the READMEs without its data.

    python3 -m spreport.readme [--check] FILE.md...

Two marks tie a README's figures to committed files (paths from the
repository's root):

  <!-- generated: include FILE [HEADING] -->
  ...
  <!-- end generated -->
      The lines between are FILE's (a Markdown file under results/), or
      those of its section HEADING (up to the next heading of that level
      or above), copied: the block is rewritten from the file.

  <!-- generated: sessions SCALES DIR... -->
      A table of the Sun-study folders DIR (each with the sessions.csv of
      its sessions): a row a folder, a column a factor of SCALES (comma-
      separated), each cell the smallest to the largest of the sessions'
      read/mmap ratios, marked where the sessions disagree on which path
      is faster; the 2002 figures in the first row.

  <!-- numbers: FILE [FILE...] -->
      Ends a paragraph (or a list, or a table) whose figures come from
      those files: every figure in it must appear, as written, in one of
      them.

A figure is a number with a decimal point, or a whole number of time or
a ratio (ms, µs, s, min, %, x, ×): sizes such as 4 KiB are settings.
Outside code, a figure in a paragraph with neither mark is an error.
Without --check the generated blocks are rewritten in place; with it,
nothing is written and any difference, and every figure that is not
found, is an error (exit 1)."""
import csv
import os
import re
import sys

GEN = re.compile(r"<!-- generated: (.*?) -->")
END = "<!-- end generated -->"
NUMBERS = re.compile(r"<!-- numbers: (.*?) -->")
FIGURE = re.compile(
    r"(?<![\w./])(?<![\s(`]-)(\d+(?:,\d{3})*\.\d+|\d+(?:,\d{3})*"
    r"(?=\s?(?:ms|µs|us|ns|s|min|%|×|x)(?![\w/])))")


def root():
    return os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))


def read_lines(path):
    with open(os.path.join(root(), path)) as f:
        return f.read().splitlines()


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


def sessions(scales, dirs):
    """The sessions table (see the module's text)."""
    from . import stats
    cols = [int(x) for x in scales.split(",")]
    head = ["case"] + [f"÷{-c}" if c < 0 else f"×{c}" for c in cols]
    out = ["| " + " | ".join(head) + " |",
           "|---|" + "---:|" * len(cols),
           "| Sun 2002 (Ultra 30) | "
           + " | ".join(SUN2002.get(c, "") for c in cols) + " |"]
    for d in dirs:
        ratios = {}
        with open(os.path.join(root(), d, "sessions.csv")) as f:
            for row in list(csv.DictReader(f)):
                ratios.setdefault(int(row["scale"]), []).append(
                    float(row["ratio"]))
        cells = []
        for c in cols:
            if c not in ratios:
                cells.append("")
                continue
            sp = stats.between_sessions(ratios[c])
            cells.append(f"{sp.lo:.2f}–{sp.hi:.2f}"
                         + (" †" if sp.agree == 0 else ""))
        out.append(f"| {folder_label(d)} | " + " | ".join(cells) + " |")
    return out


def generate(spec):
    words = spec.split()
    if words[0] == "include" and len(words) >= 2:
        parts = spec.split(None, 2)
        return include(parts[1], parts[2] if len(parts) > 2 else None)
    if words[0] == "sessions" and len(words) >= 3:
        return sessions(words[1], words[2:])
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


def figures(text):
    """The figures in TEXT, code spans left out."""
    return FIGURE.findall(re.sub(r"`[^`]*`", "", text))


def blocks(lines):
    """The paragraphs of LINES outside code fences and generated blocks,
    as (first line number, text, sources or None)."""
    out, cur, start, fence, gen = [], [], 0, False, False
    for n, line in enumerate(lines + [""], 1):
        s = line.strip()
        if s.startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        if GEN.search(s):
            gen = True
        if gen:
            gen = s != END
            continue
        m = NUMBERS.search(s)
        if m:
            out.append((start, "\n".join(cur), m.group(1).split()))
            cur = []
        elif s == "":
            if cur:
                out.append((start, "\n".join(cur), None))
            cur = []
        else:
            if not cur:
                start = n
            cur.append(line)
    return out


def check_numbers(name, lines):
    """Errors: figures with no source, and figures not in their sources."""
    errors = []
    for start, text, sources in blocks(lines):
        found = figures(text)
        if not found:
            continue
        if sources is None:
            errors.append(f"{name}:{start}: figures with no source: "
                          + ", ".join(found[:5]))
            continue
        data = "\n".join("\n".join(read_lines(s)) for s in sources)
        for fig in found:
            if fig not in data:
                errors.append(f"{name}:{start}: {fig} is not in "
                              + " ".join(sources))
    return errors


def main(argv):
    check = bool(argv) and argv[0] == "--check"
    files = argv[1:] if check else argv
    if not files:
        sys.stderr.write("usage: spreport.readme [--check] FILE.md...\n")
        return 2
    errors = []
    for name in files:
        with open(name) as f:
            lines = f.read().splitlines()
        try:
            new = regenerate(lines)
        except (ValueError, OSError) as e:
            errors.append(f"{name}: {e}")
            continue
        if check and new != lines:
            errors.append(f"{name}: a generated block differs from its "
                          "files (run spreport.readme without --check)")
        elif not check and new != lines:
            with open(name, "w") as f:
                f.write("\n".join(new) + "\n")
        errors += check_numbers(name, new)
    for e in errors:
        sys.stderr.write(e + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
