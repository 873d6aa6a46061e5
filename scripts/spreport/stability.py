"""spreport.stability: how far a reference's verdicts survive a rerun.

    spreport stability [--check] [--out FILE] [--results DIR]
                       (--rev REV | --previous DIR)

Every verdict of this reference (each results/*/sessions.md under
--results, default the repository's results/) against the same cell of a
previous one: the committed reference at git revision REV (its
results/, read by `git show`), or the folder DIR.  A cell is a Sun-study
folder's factor, or a pooled suite's table and group; its verdict names
a winner (read or mmap, a contender) or none ("cannot separate", the
sessions disagree, not in every session).  A cell flips where the two
references name different winners, or one names a winner and the other
none; "to the opposite winner" counts those where both name one.

FILE (default DIR/stability.md) gets a table a folder (cells in both,
flipped, to the opposite winner, the machine identities of the two
references' first sessions where they differ), the totals, and every
flipped cell.  With --check nothing is written: FILE must be what would
be written, the previous reference taken from the revision FILE names
(exit 1 otherwise)."""
import argparse
import os
import re
import subprocess
import sys

from . import cells, sessinfo
from .tables import ReportError, markdown_table, write_text

NAME = "stability.md"
AGAINST = re.compile(r"^Previous reference: results/ at commit ([0-9a-f]+)")


def winner(verdict):
    """The winner a verdict names, or "" where it names none."""
    v = cells.clean(verdict)
    if v in ("mmap faster", "read faster"):
        return v.split()[0]
    m = re.fullmatch(r"(.+) best in every session", v)
    return m.group(1) if m else ""


def verdicts(lines):
    """{cell: verdict} of one sessions.md's LINES: a Sun-study table's
    cells are its scales; a pooled one's, its section and group (the
    verdict sits in a group's first row)."""
    out = {}
    for heading, head, rows in cells.md_tables(lines):
        if "verdict" not in head:
            continue
        for r in rows:
            if "scale" in head:
                key = f"÷{cells.clean(r['scale']).lstrip('-')}" \
                    if cells.clean(r["scale"]).startswith("-") \
                    else f"×{cells.clean(r['scale'])}"
            else:
                key = f"{heading.split(':')[0]} {cells.clean(r['group'])}"
            v = cells.clean(r.get("verdict", ""))
            if key not in out or v:
                out[key] = v
    return {k: v for k, v in out.items() if v}


class Source:
    """A reference's files: a folder, or results/ at a git revision."""

    def __init__(self, folder=None, rev=None, root=None):
        self.folder, self.rev, self.root = folder, rev, root

    def folders(self):
        if self.folder is not None:
            return sorted(d for d in os.listdir(self.folder)
                          if os.path.isfile(os.path.join(self.folder, d,
                                                         "sessions.md")))
        got = self.git("ls-tree", "--name-only", f"{self.rev}:results/")
        return sorted(d for d in got.splitlines()
                      if self.read(d, "sessions.md") is not None)

    def git(self, *args):
        p = subprocess.run(["git", "-C", self.root, *args],
                           capture_output=True, text=True)
        if p.returncode:
            raise ReportError(f"git {' '.join(args)}: "
                              f"{p.stderr.strip()}")
        return p.stdout

    def read(self, folder, name):
        """FOLDER/NAME's text, None where it is not there."""
        if self.folder is not None:
            try:
                with open(os.path.join(self.folder, folder, name),
                          encoding="utf-8") as f:
                    return f.read()
            except FileNotFoundError:
                return None
        try:
            return self.git("show", f"{self.rev}:results/{folder}/{name}")
        except ReportError:
            return None

    def identity(self, folder):
        text = self.read(folder, "session-1/env.txt") or ""
        env = {}
        for line in text.splitlines():
            k, sep, v = line.partition(": ")
            if sep and k not in env:
                env[k] = v
        return sessinfo.identity(env)


def compare(now, before):
    """[(folder, compared, flipped, opposite, identities, [(cell, before,
    now)])] for the folders of NOW that BEFORE has too."""
    out = []
    old = set(before.folders())
    for d in now.folders():
        if d not in old:
            continue
        a = verdicts(before.read(d, "sessions.md").splitlines())
        b = verdicts(now.read(d, "sessions.md").splitlines())
        both = [c for c in b if c in a]
        flips = [(c, a[c], b[c]) for c in both
                 if winner(a[c]) != winner(b[c])]
        opposite = sum(1 for _, x, y in flips if winner(x) and winner(y))
        ids = (before.identity(d), now.identity(d))
        out.append((d, len(both), flips, opposite,
                    ids if ids[0] != ids[1] else None))
    return out


def pct(a, b):
    return f"{100 * a / b:.0f}%" if b else ""


def text(result, against):
    """stability.md's text of COMPARE's RESULT against AGAINST (words)."""
    total = sum(r[1] for r in result)
    flipped = sum(len(r[2]) for r in result)
    opposite = sum(r[3] for r in result)
    across = [r[0] for r in result if r[4]]
    out = ["# Stability: this reference's verdicts against the previous",
           "", f"Previous reference: {against}.", "",
           "Each verdict of a folder's sessions.md (a Sun-study factor; a "
           "pooled suite's table and group) against the same cell of the "
           "previous reference. A cell flips where the two name different "
           "winners, or one names a winner and the other none (\"cannot "
           "separate\", the sessions disagree); \"to the opposite winner\": "
           "both name one, not the same.", "",
           f"In all: {flipped} of {total} cells flipped ({pct(flipped, total)}),"
           f" {opposite} to the opposite winner."
           + (" The machine identities of the two references differ in "
              + ", ".join(across) + ": there, a comparison across "
              "identities." if across else " Both references ran on one "
              "machine identity in every folder."), ""]
    rows = [[d, str(n), str(len(f)), pct(len(f), n), str(o),
             "differs" if ids else "same"]
            for d, n, f, o, ids in result]
    out += markdown_table(["folder", "cells", "flipped", "share",
                           "to the opposite winner", "machine identity"],
                          "lrrrrl", rows)
    pairs = {}
    for d, _, _, _, ids in result:
        if ids:
            pairs.setdefault(ids, []).append(d)
    for (was, now), where in pairs.items():
        out += ["", f"Machine identity in {', '.join(where)}: previous "
                f"{was}; now {now}."]
    changed = [[d, c, x, y] for d, _, f, _, _ in result for c, x, y in f]
    if changed:
        out += ["", "## The flipped cells", ""]
        out += markdown_table(["folder", "cell", "previous", "now"],
                              "llll", changed)
    return "\n".join(out) + "\n"


def repo_root():
    return os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))


def against_of(path):
    """The revision a committed stability.md names; ReportError if none."""
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = AGAINST.match(line)
                if m:
                    return m.group(1)
    except FileNotFoundError:
        pass
    raise ReportError(f"{path}: names no previous reference's commit")


def main(argv):
    ap = argparse.ArgumentParser(prog="spreport stability",
                                 description=__doc__,
                                 formatter_class=argparse
                                 .RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--results")
    ap.add_argument("--rev")
    ap.add_argument("--previous", metavar="DIR")
    a = ap.parse_args(argv)
    root = repo_root()
    results = a.results or os.path.join(root, "results")
    out = a.out or os.path.join(results, NAME)
    try:
        rev = a.rev
        if a.check and not rev and not a.previous:
            rev = against_of(out)
        if a.previous:
            before = Source(folder=a.previous)
            against = f"the folder {os.path.basename(a.previous.rstrip('/'))}"
        else:
            before = Source(rev=rev or "HEAD", root=root)
            full = before.git("rev-parse", "--verify",
                              f"{rev or 'HEAD'}^{{commit}}").strip()
            before.rev = full
            against = f"results/ at commit {full[:12]}"
        made = text(compare(Source(folder=results), before), against)
        if a.check:
            with open(out, encoding="utf-8") as f:
                if f.read() != made:
                    print(f"spreport stability: {out} is not what the "
                          "verdicts make", file=sys.stderr)
                    return 1
            return 0
        write_text(out, made)
    except (ReportError, OSError) as e:
        print(f"spreport stability: {e}", file=sys.stderr)
        return 1
    return 0
