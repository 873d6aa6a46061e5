"""spreport.readme: a figure passes only as the value of the cell it
names, a verdict only as its file's, and the checker fails on each error
that a substring lookup let through."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from spreport import cells, readme

PATHS = """# paths

| path | span_ms | faults |
|---|---:|---:|
| read | 4.46 | 120 |
| mmap | 5.29 | 31 |
| pread | 4.81 | 2 |
"""

MODEL = """# model

Median error 51% (target 15%); ratio 1.19 at the worst.

| case | error_pct |
|---|---:|
| warm | 51 |
| scale | 1.19 |
"""

SESSIONS = """# sessions

| scale | session-1 | verdict | 2002 |
|---:|---:|---|---:|
| -2* | 0.85 (0.78–0.93) | read faster | 1.14 |
| -3* | 1.81 (1.63–2.05) | mmap faster | 1.28 |
| -7 | 1.01 (0.80–1.31) | cannot separate | |
| 2 | 0.90 (0.85–0.95) | read faster | |
"""

JOBS = "job,best\nreduce2,scaleppm\nreduce4,scaleppm\nenlarge4,vips\n"

GOOD = """# doc

Read took 4.46 to 5.29 ms, pread 4.81 ms; scaleppm was the fastest at
2 of the 3 jobs.
<!-- cells
results/paths/paths.md path=read span_ms
results/paths/paths.md path=mmap span_ms
results/paths/paths.md path=pread span_ms
verdict results/peers/jobs.csv job=reduce2 best is scaleppm
verdict results/peers/jobs.csv job=reduce4 best is scaleppm
results/peers/jobs.csv best=scaleppm count
results/peers/jobs.csv count
-->

The model's median error is 51%.
<!-- cells
results/model/model.md case=warm error_pct
-->

At ÷7 the sessions cannot separate them.
<!-- cells
verdict results/big-cold/sessions.md scale=-7 verdict is "cannot separate"
-->

<!-- generated: verdicts results/big-cold -->
<!-- end generated -->

`-s 4` of a 1280x1024 image in 4 KiB pages: no figure here.
"""


class Tree(unittest.TestCase):
    """A repository of its own: the files above, and GOOD made whole."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        for path, text in (("results/paths/paths.md", PATHS),
                           ("results/model/model.md", MODEL),
                           ("results/big-cold/sessions.md", SESSIONS),
                           ("results/peers/jobs.csv", JOBS)):
            full = os.path.join(self.root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        self.saved = readme.root
        readme.root = lambda: self.root
        self.good = readme.regenerate(GOOD.splitlines())

    def tearDown(self):
        readme.root = self.saved
        self.dir.cleanup()

    def errors(self, lines, name="doc.md"):
        errs, differ, _ = readme.check(name, lines)
        return errs + differ

    def planted(self, old, new):
        """GOOD with OLD replaced by NEW (once): its errors."""
        text = "\n".join(self.good)
        self.assertIn(old, text)
        return self.errors(text.replace(old, new, 1).splitlines())


class Planted(Tree):
    def test_good_passes(self):
        self.assertEqual(self.errors(self.good), [])
        self.assertIn("cold: mmap faster in every session at ÷3; read "
                      "faster in every session at ÷2 and ×2; the sessions "
                      "cannot separate them at ÷7.", self.good)

    def test_a_digit_changed(self):
        errs = self.planted("4.46 to", "4.47 to")
        self.assertEqual(len(errs), 1)
        self.assertIn("4.47 is 4.46 in results/paths/paths.md path=read",
                      errs[0])

    def test_a_figure_only_inside_a_longer_number(self):
        # "19" is in model.md only inside "1.19": as a cell it is not 19
        errs = self.planted("error is 51%", "error is 19%")
        self.assertEqual(len(errs), 1)
        self.assertIn("19 is 51", errs[0])
        errs = self.planted("case=warm error_pct", "case=scale error_pct")
        self.assertIn("51 is 1 in", errs[0])

    def test_a_figure_from_another_row(self):
        errs = self.planted("pread 4.81 ms", "pread 5.29 ms")
        self.assertEqual(len(errs), 1)
        self.assertIn("5.29 is 4.81", errs[0])

    def test_a_count_off_by_one(self):
        self.assertEqual(len(self.planted("2 of the 3", "3 of the 3")), 1)
        self.assertEqual(len(self.planted("2 of the 3", "2 of the 4")), 1)
        self.assertEqual(len(self.planted("2 of the 3", "1 of 3")), 1)

    def test_a_factor_moved_from_faster_to_disagree(self):
        # in a generated sentence
        errs = self.planted("read faster in every session at ÷2 and ×2; ",
                            "read faster in every session at ×2; ")
        self.assertNotEqual(errs, [])
        _, _, made = readme.check("doc.md", "\n".join(self.good).replace(
            "at ÷2 and ×2", "at ×2").splitlines())
        self.assertEqual(made, self.good)
        # in a verdict line checked against the sessions file
        errs = self.planted('scale=-7 verdict is "cannot separate"',
                            'scale=-2 verdict is "cannot separate"')
        self.assertEqual(len(errs), 1)
        self.assertIn("has 'read faster' in verdict", errs[0])

    def test_a_range_names_both_ends(self):
        errs = self.planted("results/paths/paths.md path=mmap span_ms\n", "")
        self.assertIn("5 figures (4.46, 5.29, 4.81, 2, 3) and 4 cells", errs[0])

    def test_a_figure_with_no_cell(self):
        errs = self.errors(["took 3.5 ms", "", "no figure here"])
        self.assertEqual(len(errs), 1)
        self.assertIn("doc.md:1: figures with no cell: 3.5", errs[0])

    def test_a_cell_with_no_figure(self):
        errs = self.errors(["no figure", "<!-- cells",
                            "results/paths/paths.md path=read span_ms",
                            "-->"])
        self.assertIn("0 figures () and 1 cells", errs[0])

    def test_a_cell_that_is_not_there(self):
        for binding, want in (("path=write span_ms", "no row"),
                              ("span_ms", "3 rows, and no aggregate"),
                              ("path=read nosuch", "no table has"),
                              ("path=read span_ms@2", "no number 2")):
            errs = self.errors(["took 3.5 ms", "<!-- cells",
                                "results/paths/paths.md " + binding, "-->"])
            self.assertIn(want, errs[0], binding)

    def test_a_verdict_word_needs_a_verdict_line(self):
        errs = self.planted(
            '<!-- cells\nverdict results/big-cold/sessions.md scale=-7 '
            'verdict is "cannot separate"\n-->', "")
        self.assertEqual(len(errs), 1)
        self.assertIn("'cannot separate' is a verdict with no verdict line", errs[0])

    def test_because_needs_a_cause(self):
        errs = self.errors(["mmap wins because it copies nothing.",
                            "<!-- cells", "verdict results/peers/jobs.csv "
                            "job=reduce2 best is scaleppm", "-->"])
        self.assertEqual(len(errs), 1)
        self.assertIn("'because' with no cause", errs[0])
        ok = ["It copies nothing, because it maps.", "<!-- cells",
              "cause results/paths/paths.md '/\\| mmap \\| 5.29 \\| 31 \\|/'",
              "-->", "", "Because it maps, we think (a hypothesis)."]
        self.assertEqual(self.errors(ok), [])
        ok[2] = "cause results/paths/paths.md /nothing-like-this/"
        self.assertIn("is not in", self.errors(ok)[0])

    def test_old_numbers_mark_is_refused(self):
        errs = self.errors(["took 4.46 ms",
                            "<!-- numbers: results/paths/paths.md -->"])
        self.assertTrue(any("'numbers:'" in e for e in errs))

    def test_render_rewrites_figures_from_cells(self):
        text = "\n".join(self.good).replace("4.46 to", "9.99 to")
        _, differ, new = readme.check("doc.md", text.splitlines())
        self.assertEqual(len(differ), 1)
        self.assertEqual(new, self.good)

    def test_roff(self):
        page = [".TH X 1", ".SH RESULTS", "Reading took",
                ".B 4.46",
                "ms; see", r'.\" cells: results/paths/paths.md path=read '
                'span_ms', ".PP", "A size of 4\\~KiB, \\-s \\-4.", ".nf",
                "took 7.5 ms", ".fi"]
        self.assertEqual(self.errors(page, "x.1"), [])
        page[3] = ".B 4.4"
        self.assertIn("4.4 is 4.5 in", self.errors(page, "x.1")[0])
        del page[5]
        self.assertIn("figures with no cell", self.errors(page, "x.1")[0])


class Pieces(unittest.TestCase):
    def test_figures(self):
        p = readme.Paragraph(1, readme.mask_md)
        text = ("-s -4 of 1280x1024 took 1-1.5 ms, 2.87 (2.61-3.16); 4 KiB, "
                "60 s, 3x, `-s 2.5`, 10%, Linux 6.18.44, 127.0.0.1, 11 of "
                "the\n38 jobs, ÷3, ×8, 1,234.5 MB, 416 ns/op, `a\nb 7.5` "
                "<!-- 8.5\n -->, [x](a/1.5.md)")
        for i, line in enumerate(text.split("\n")):
            p.lines.append((i, line))
        self.assertEqual([f[3] for f in p.figures()],
                         ["1.5", "2.87", "2.61", "3.16", "60", "3", "10",
                          "11", "38", "1,234.5", "416"])

    def test_render(self):
        from decimal import Decimal as D
        self.assertEqual(cells.render(D("2.875"), "2.88"), "2.88")
        self.assertEqual(cells.render(D("2.865"), "2.8"), "2.9")
        self.assertEqual(cells.render(D("1234.56"), "1,000.0"), "1,234.6")
        self.assertEqual(cells.render(D("-0.001"), "0.00"), "0.00")

    def test_a_filter_sees_the_cell_as_shown(self):
        files = cells.Files("/")
        files.texts["t.md"] = ("| scale | median | x |\n|---|---|---|\n"
                               "| -2* | 3 | |\n| 4 | 5 | 1 |\n")
        self.assertEqual(cells.value(files, "t.md scale~^-2$ median"), 3)
        self.assertEqual(cells.value(files, "t.md median min"), 3)
        self.assertEqual(cells.value(files, "t.md x~. count"), 1)
        self.assertEqual(cells.value(files, "t.md x max"), 1)

    def test_numbers_in_a_cell(self):
        self.assertEqual([str(x) for x in cells.numbers(
            "-2* 2.29–2.70 1.04-1.19 2.92207e+06")],
            ["-2", "2.29", "2.70", "1.04", "1.19", "2.92207E+6"])

    def test_md_tables(self):
        t = cells.md_tables(["# one", "| a | b |", "|---|--:|",
                             "| x | 1 \\| 2 |", "|  | 3 |", "", "## two",
                             "| c |", "|---|", "| 3 |"])
        self.assertEqual(t[0][2], [{"a": " x ", "b": " 1 | 2 "},
                                   {"a": " x ", "b": " 3 "}])
        self.assertEqual(t[1][:2], ("two", ["c"]))

    def test_include_section_stops_at_same_level(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.md")
            with open(path, "w") as f:
                f.write("# t\n\n## A\n\n| x | 2.87 |\n\n### A1\n\nin A\n\n"
                        "## B\n\n| y | 4.43 |\n")
            self.assertEqual(readme.include(path, "A"),
                             ["| x | 2.87 |", "", "### A1", "", "in A"])
            with self.assertRaises(ValueError):
                readme.include(path, "C")

    def test_sessions_table(self):
        with tempfile.TemporaryDirectory() as top:
            d = os.path.join(top, "sun-64x64-warm-small")
            os.makedirs(d)
            with open(os.path.join(d, "sessions.csv"), "w") as f:
                f.write("scale,session,ratio,ratio_lo,ratio_hi\n"
                        "-2,s1,2.5,2,3\n-2,s2,1.5,1.1,2\n"
                        "-4,s1,1.3,1.1,1.5\n-4,s2,1.2,0.9,1.4\n"
                        "2,s1,0.9,0.8,1\n2,s2,1.2,1,1.4\n")
            got = readme.sessions("-2,-4,-8,2", [d])
            self.assertEqual(got[0], "| case | ÷2 | ÷4 | ÷8 | ×2 |")
            # ÷4: both ratios above 1, but one interval holds 1: †
            self.assertEqual(got[3], "| 64x64, warm, 4 KiB pages | "
                                     "1.50–2.50 | 1.20–1.30 † |  | "
                                     "0.90–1.20 † |")


class Provenance(unittest.TestCase):
    def test_src_moved_or_not(self):
        with tempfile.TemporaryDirectory() as top:
            def git(*a):
                return subprocess.run(["git", "-C", top, *a], check=True,
                                      capture_output=True, text=True).stdout

            git("init", "-q")
            git("config", "user.email", "t@t")
            git("config", "user.name", "t")
            os.makedirs(os.path.join(top, "src"))
            os.makedirs(os.path.join(top, "results", "a"))
            with open(os.path.join(top, "src", "x.c"), "w") as f:
                f.write("1\n")
            git("add", ".")
            git("commit", "-qm", "one")
            made = git("rev-parse", "HEAD").strip()
            with open(os.path.join(top, "results", "a", "env.txt"), "w") as f:
                f.write(f"date: 2026-11-23 20:02:43 UTC\ncommit: {made}\n")
            git("add", ".")
            git("commit", "-qm", "results")
            saved, readme.root = readme.root, lambda: top
            try:
                got = readme.provenance("results")[0]
                self.assertIn(f"commit {made[:7]} (2026-11-23)", got)
                self.assertIn("is the same", got)
                with open(os.path.join(top, "src", "x.c"), "w") as f:
                    f.write("2\n")
                git("commit", "-qam", "src moves")
                self.assertIn("differs", readme.provenance("results")[0])
            finally:
                readme.root = saved


class RealDocuments(unittest.TestCase):
    """Each bound figure of the committed documents, a digit changed, fails
    the check: the bindings are not decoration."""

    def test_every_bound_figure_is_checked(self):
        tried = 0
        for doc in readme.documents():
            with open(os.path.join(readme.root(), doc)) as f:
                lines = f.read().splitlines()
            errs, differ, made = readme.check(doc, lines)
            if errs or differ:
                continue   # readme_numbers reports these
            for p in readme.paragraphs(doc, list(made), []):
                if not p.bindings:
                    continue
                for idx, s, e, written in p.figures():
                    bad = list(made)
                    d = written[-1]
                    bad[idx] = (bad[idx][:e - 1] + str((int(d) + 1) % 10)
                                + bad[idx][e:])
                    e1, e2, _ = readme.check(doc, bad)
                    self.assertTrue(e1 + e2, f"{doc}:{idx + 1}: {written} "
                                    "changed, and the check passed")
                    tried += 1
        self.assertGreater(tried, 0)


if __name__ == "__main__":
    unittest.main()
