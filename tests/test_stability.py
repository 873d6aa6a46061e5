"""spreport stability: a reference's verdicts against a previous one's,
on the committed results (against themselves: nothing flips) and on a
doctored copy (the flips planted are the flips counted)."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from spreport import stability

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "results")


def spreport(*args):
    p = subprocess.run([sys.executable, "-m", "spreport", "stability",
                        *args], capture_output=True, text=True,
                       cwd=os.path.join(ROOT, "scripts"))
    return p.returncode, p.stdout + p.stderr


def copy_verdicts(dest):
    """DEST: every results/ folder's sessions.md and session-1/env.txt."""
    for d in os.listdir(RESULTS):
        src = os.path.join(RESULTS, d, "sessions.md")
        if not os.path.isfile(src):
            continue
        os.makedirs(os.path.join(dest, d, "session-1"))
        shutil.copy(src, os.path.join(dest, d, "sessions.md"))
        env = os.path.join(RESULTS, d, "session-1", "env.txt")
        if os.path.isfile(env):
            shutil.copy(env, os.path.join(dest, d, "session-1", "env.txt"))


def replace(path, old, new):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert old in text, f"{path}: no {old!r}"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace(old, new, 1))


class Words(unittest.TestCase):
    def test_winner(self):
        self.assertEqual(stability.winner("mmap faster"), "mmap")
        self.assertEqual(stability.winner("read faster"), "read")
        self.assertEqual(stability.winner("pread best in every session"),
                         "pread")
        for none in ("cannot separate", "cannot separate: a, a, b",
                     "sessions disagree", "not in every session", ""):
            self.assertEqual(stability.winner(none), "", none)

    def test_cells(self):
        md = ["## peers.csv: wall_ns by tool", "",
              "| group | tool | verdict |", "|---|---|---|",
              "| 8x8 r2 | a | a best in every session |", "| | b | |",
              "", "| scale | s1 | verdict |", "|---:|---:|---|",
              "| -2* | 1.1 | mmap faster |", "| 3 | 0.9 | read faster |"]
        self.assertEqual(stability.verdicts(md),
                         {"peers.csv 8x8 r2": "a best in every session",
                          "÷2": "mmap faster", "×3": "read faster"})


class Committed(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.prev = os.path.join(self.dir.name, "prev")
        self.out = os.path.join(self.dir.name, "stability.md")
        copy_verdicts(self.prev)

    def tearDown(self):
        self.dir.cleanup()

    def test_against_themselves(self):
        rc, err = spreport("--previous", self.prev, "--out", self.out)
        self.assertEqual((rc, err), (0, ""))
        with open(self.out, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("In all: 0 of ", text)
        self.assertIn("0 to the opposite winner", text)
        self.assertNotIn("## The flipped cells", text)

    def test_doctored(self):
        # two flips planted: a winner to the other one (the Sun study),
        # a winner to none (a pooled suite), and another machine
        sun = os.path.join(self.prev, "sun-1280x1024-warm-large")
        with open(os.path.join(sun, "sessions.md"), encoding="utf-8") as f:
            lines = f.read().splitlines(keepends=True)
        i = next(i for i, ln in enumerate(lines)
                 if ln.startswith("| -2*"))
        was = lines[i].split("|")[-3].strip()
        lines[i] = lines[i].replace(
            f"| {was} |", "| read faster |" if was == "mmap faster"
            else "| mmap faster |")
        with open(os.path.join(sun, "sessions.md"), "w",
                  encoding="utf-8") as f:
            f.writelines(lines)
        peers = os.path.join(self.prev, "peers", "sessions.md")
        replace(peers, "| scaleppm best in every session |",
                "| cannot separate: scaleppm, gm, scaleppm |")
        env = os.path.join(sun, "session-1", "env.txt")
        with open(env, encoding="utf-8") as f:
            has_machine = "\nmachine: " in f.read()
        if has_machine:  # the identity line a remade env.txt has
            replace(env, "\nmachine: ", "\nmachine: another, ")
        else:
            replace(env, "kernel: ", "machine: another\nkernel: ")
        rc, err = spreport("--previous", self.prev, "--out", self.out)
        self.assertEqual((rc, err), (0, ""))
        with open(self.out, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("In all: 2 of ", text)
        self.assertIn("1 to the opposite winner", text)
        self.assertIn("differ in sun-1280x1024-warm-large: there, a "
                      "comparison across identities", text)
        self.assertIn("| sun-1280x1024-warm-large | ÷2 |", text)
        self.assertIn("| peers | peers.csv 1280x1024 reduce2 | cannot "
                      "separate: scaleppm, gm, scaleppm |", text)

    def test_check_against_a_revision(self):
        rc, err = spreport("--rev", "HEAD", "--results", self.prev,
                           "--out", self.out)
        self.assertEqual((rc, err), (0, ""))
        rc, err = spreport("--check", "--results", self.prev, "--out",
                           self.out)
        self.assertEqual((rc, err), (0, ""))
        replace(self.out, "In all: ", "In all:  ")
        rc, err = spreport("--check", "--results", self.prev, "--out",
                           self.out)
        self.assertEqual(rc, 1)
        self.assertIn("is not what the verdicts make", err)


if __name__ == "__main__":
    unittest.main()
