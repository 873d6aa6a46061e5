"""spreport regen: a results folder's generated files are made again from
its raw rows, and --check fails where a committed one differs by a digit,
is missing, or is made by no report.  On a temporary copy of
results/durable (the smallest folder of sessions) and of one session of
results/sun-1280x1024-cold.  Run: PYTHONPATH=scripts /usr/bin/python3 -m
unittest tests/test_regen.py (ctest's spreport_regen does this)."""
import contextlib
import glob
import io
import os
import re
import shutil
import tempfile
import unittest

from spreport import regen

RESULTS = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "results")


def run(*argv):
    """regen's exit status and what it wrote on stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), \
            contextlib.redirect_stdout(io.StringIO()):
        code = regen.main(list(argv))
    return code, err.getvalue()


def change_digit(path, line_re, sep, field):
    """The first digit of field FIELD (split on SEP) of the first line of
    PATH matching LINE_RE made another digit."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        if not re.search(line_re, line):
            continue
        cells = line.split(sep)
        m = re.search(r"\d", cells[field])
        assert m, f"{path}: {line!r}: no digit in field {field}"
        d = str((int(m.group()) + 1) % 10)
        cells[field] = cells[field][:m.start()] + d + cells[field][m.end():]
        lines[i] = sep.join(cells)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        return
    raise AssertionError(f"{path}: no line {line_re!r}")


class Regen(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="test-regen.")
        self.dir = os.path.join(self.tmp, "durable")
        shutil.copytree(os.path.join(RESULTS, "durable"), self.dir)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def read(self, rel):
        with open(os.path.join(self.dir, rel), "rb") as f:
            return f.read()

    def assert_fails_on(self, rel, code_err, why="differs"):
        code, err = code_err
        self.assertEqual(code, 1, err)
        self.assertIn(f"{os.path.join(self.dir, rel)}: {why}", err)

    def test_committed_copy_passes(self):
        code, err = run("--check", self.dir)
        self.assertEqual((code, err), (0, ""))

    def test_digit_in_report_fails(self):
        change_digit(os.path.join(self.dir, "durable.md"),
                     r"^\| 1280x1024", "|", 4)
        self.assert_fails_on("durable.md", run("--check", self.dir))

    def test_digit_in_session_report_fails(self):
        change_digit(os.path.join(self.dir, "session-2", "durable.md"),
                     r"^\| 12000x10000", "|", 6)
        self.assert_fails_on(os.path.join("session-2", "durable.md"),
                             run("--check", self.dir))

    def test_digit_in_pooled_rows_fails(self):
        change_digit(os.path.join(self.dir, "durable.csv"),
                     r"^1280x1024,", ",", 3)
        self.assert_fails_on("durable.csv", run("--check", self.dir))

    def test_digit_in_sessions_table_fails(self):
        change_digit(os.path.join(self.dir, "sessions.csv"),
                     r"^durable", ",", 5)
        self.assert_fails_on("sessions.csv", run("--check", self.dir))

    def test_missing_generated_file_fails(self):
        os.unlink(os.path.join(self.dir, "sessions.md"))
        self.assert_fails_on("sessions.md", run("--check", self.dir),
                             "made, but not committed")

    def test_file_no_report_makes_fails(self):
        with open(os.path.join(self.dir, "notes.md"), "w") as f:
            f.write("made by hand\n")
        self.assert_fails_on("notes.md", run("--check", self.dir),
                             "not made by any report")

    def test_raw_rows_changed_fail(self):
        """A raw row changed: the reports made from it no longer match."""
        change_digit(os.path.join(self.dir, "session-1", "durable.csv"),
                     r"^12000x10000,replace,", ",", 3)
        self.assert_fails_on("durable.csv", run("--check", self.dir))

    def test_without_check_writes_back(self):
        want = self.read("durable.md")
        change_digit(os.path.join(self.dir, "durable.md"),
                     r"^\| 1280x1024", "|", 4)
        self.assertNotEqual(self.read("durable.md"), want)
        self.assertEqual(run(self.dir), (0, ""))
        self.assertEqual(self.read("durable.md"), want)
        self.assertEqual(run("--check", self.dir), (0, ""))


class RegenSun(unittest.TestCase):
    """A Sun-study session's table1.md and summary.csv (sun.sh's report)
    and the sessions' table, on a copy of the cold 1280x1024 folder."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="test-regen.")
        self.dir = os.path.join(self.tmp, "sun")
        src = os.path.join(RESULTS, "sun-1280x1024-cold")
        shutil.copytree(src, self.dir)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_committed_copy_passes(self):
        self.assertEqual(run("--check", self.dir), (0, ""))

    def test_digit_in_table1_fails(self):
        change_digit(os.path.join(self.dir, "session-3", "table1.md"),
                     r"^\| -4", "|", 3)
        code, err = run("--check", self.dir)
        self.assertEqual(code, 1, err)
        self.assertIn(os.path.join(self.dir, "session-3", "table1.md")
                      + ": differs, line 9", err)
        self.assertNotIn("sessions.md", err)


class RegenOneSession(unittest.TestCase):
    """A folder of one session, its raw rows beside its table (the
    compressed suite's): the committed copy passes, a digit changed in
    the table or in the raw rows fails."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="test-regen.")
        self.dir = os.path.join(self.tmp, "compressed")
        shutil.copytree(os.path.join(RESULTS, "compressed"), self.dir)
        self.md = os.path.join(self.dir, "compressed.md")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_committed_copy_passes(self):
        self.assertEqual(run("--check", self.dir), (0, ""))

    def test_digit_in_table_fails(self):
        change_digit(self.md, r"^\| sun", "|", 4)
        code, err = run("--check", self.dir)
        self.assertEqual(code, 1, err)
        self.assertIn(self.md + ": differs", err)

    def test_raw_rows_changed_fail(self):
        # a session's raw rows: the pooled rows and the tables made from
        # them differ from the committed ones
        change_digit(os.path.join(self.dir, "session-1", "compressed.csv"),
                     r"^sun,jpeg,", ",", 7)
        code, err = run("--check", self.dir)
        self.assertEqual(code, 1, err)
        self.assertIn(os.path.join(self.dir, "compressed.csv") + ": differs",
                      err)


if __name__ == "__main__":
    unittest.main()


class RegenModel(unittest.TestCase):
    """The cost model's folder beside the runs it is compared with: its
    env.txt (reference.sh writes one) is raw, not a file no report
    makes."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="test-regen.")
        # the model and every Sun-study folder it is compared with
        # (regen.MODEL_RUNS)
        names = ["model"] + sorted(
            os.path.basename(d) for pattern in ("sun-*", "big-*")
            for d in glob.glob(os.path.join(RESULTS, pattern)))
        for name in names:
            shutil.copytree(os.path.join(RESULTS, name),
                            os.path.join(self.tmp, name))
        self.dir = os.path.join(self.tmp, "model")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_env_txt_is_raw(self):
        with open(os.path.join(self.dir, "env.txt"), "w",
                  encoding="utf-8") as f:
            f.write("commit: 0\nsettings: suite=model\n")
        self.assertEqual(run("--check", self.dir), (0, ""))
