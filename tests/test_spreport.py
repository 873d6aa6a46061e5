"""spreport (scripts/spreport/): the statistics against answers worked
out by hand, and each report end to end on small inputs whose answers are
known.  Run: PYTHONPATH=scripts /usr/bin/python3 -m unittest
tests/test_spreport.py (ctest does this)."""
import contextlib
import io
import math
import os
import random
import shutil
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))

from spreport import __main__ as cli, figures, stats  # noqa: E402

FIXTURE = os.path.join(HERE, "data", "runs_fixture.csv")
PNG = b"\x89PNG\r\n\x1a\n"


class Folder(unittest.TestCase):
    """A test with its own temporary folder, self.dir."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="spreport-test.")
        self.addCleanup(shutil.rmtree, self.dir)

    def path(self, *names):
        return os.path.join(self.dir, *names)

    def write(self, name, text):
        os.makedirs(os.path.dirname(self.path(name)), exist_ok=True)
        with open(self.path(name), "w", encoding="utf-8") as f:
            f.write(text)
        return self.path(name)

    def read(self, name):
        with open(self.path(name), encoding="utf-8") as f:
            return f.read()

    def spreport(self, *args):
        """The command line: its exit status and stderr."""
        err = io.StringIO()
        with contextlib.redirect_stderr(err), \
                contextlib.redirect_stdout(io.StringIO()):
            try:
                rc = cli.main(list(args))
            except SystemExit as e:
                rc = e.code
        return rc, err.getvalue()

    def assertPng(self, name):
        with open(self.path(name), "rb") as f:
            head = f.read(8)
        self.assertEqual(head, PNG)
        self.assertGreater(os.path.getsize(self.path(name)), 10000)


class Figures:
    """Catches the figures a report draws instead of saving them."""

    def __init__(self):
        self.drawn = []

    def __enter__(self):
        def keep(fig, path):
            self.drawn.append((path, fig))
            with open(path, "wb") as f:
                f.write(PNG)
        self.patch = mock.patch.object(figures, "save", keep)
        self.patch.start()
        return self

    def __exit__(self, *exc):
        self.patch.stop()
        for _, fig in self.drawn:
            figures.plt.close(fig)

    def axes(self, i=-1):
        return self.drawn[i][1].axes


# ---- The statistics -------------------------------------------------------

class Summary(unittest.TestCase):
    def test_known(self):
        # {2,4,4,4,5,5,7,9}: mean 5, squared deviations 32, the middle two
        # 4 and 5.  Given out of order, to see the input is left alone.
        x = [5, 2, 9, 4, 7, 4, 5, 4]
        s = stats.summarize(x)
        self.assertEqual((s.n, s.mean, s.median, s.min, s.max),
                         (8, 5, 4.5, 2, 9))
        self.assertAlmostEqual(s.sd, math.sqrt(32 / 7), places=12)
        self.assertEqual(x, [5, 2, 9, 4, 7, 4, 5, 4])

    def test_odd(self):
        # {-1,2,3,7,10}: median 3 (not an average), mean 4.2, squared
        # deviations 74.8, sd sqrt(74.8 / 4).
        s = stats.summarize([3, -1, 10, 2, 7])
        self.assertEqual(s.median, 3)
        self.assertAlmostEqual(s.mean, 4.2, places=12)
        self.assertAlmostEqual(s.sd, math.sqrt(18.7), places=12)

    def test_one_two_constant(self):
        s = stats.summarize([42.5])
        self.assertEqual((s.n, s.mean, s.sd, s.median, s.min, s.max),
                         (1, 42.5, 0, 42.5, 42.5, 42.5))
        s = stats.summarize([3, 1])
        self.assertEqual((s.median, s.mean), (2, 2))
        self.assertAlmostEqual(s.sd, math.sqrt(2), places=12)
        s = stats.summarize([7, 7, 7, 7])
        self.assertEqual((s.sd, s.median), (0, 7))

    def test_large_offset(self):
        # no cancellation: 1e9 + {1, 2, 3} has sd 1
        s = stats.summarize([1e9 + 1, 1e9 + 2, 1e9 + 3])
        self.assertEqual((s.mean, s.median), (1e9 + 2, 1e9 + 2))
        self.assertAlmostEqual(s.sd, 1, places=6)

    def test_empty(self):
        with self.assertRaises(ValueError):
            stats.summarize([])
        with self.assertRaises(ValueError):
            stats.median([])


class Bootstrap(unittest.TestCase):
    def test_exact_and_bracketed(self):
        # means 12 and 10; no resample can leave [10/14, 14/8]
        r = stats.ratio_bootstrap([10, 12, 14], [8, 8, 10, 14])
        self.assertAlmostEqual(r.ratio, 1.2, places=12)
        self.assertLessEqual(r.lo, r.ratio)
        self.assertGreaterEqual(r.hi, r.ratio)
        self.assertLess(r.lo, r.hi)
        self.assertGreaterEqual(r.lo, 10 / 14)
        self.assertLessEqual(r.hi, 14 / 8)

    def test_constant(self):
        r = stats.ratio_bootstrap([4] * 5, [2] * 3)
        self.assertEqual((r.ratio, r.lo, r.hi), (2, 2, 2))
        r = stats.ratio_bootstrap([4], [2], iters=1)
        self.assertEqual((r.ratio, r.lo, r.hi), (2, 2, 2))

    def test_deterministic(self):
        rng = random.Random(1)
        a = [rng.gauss(100, 10) for _ in range(50)]
        b = [rng.gauss(80, 10) for _ in range(50)]
        r1 = stats.ratio_bootstrap(a, b, iters=2000, seed=42)
        r2 = stats.ratio_bootstrap(a, b, iters=2000, seed=42)
        r3 = stats.ratio_bootstrap(a, b, iters=2000, seed=43)
        self.assertEqual(r1, r2)
        self.assertEqual(r3.ratio, r1.ratio)
        self.assertTrue(r3.lo != r1.lo or r3.hi != r1.hi)

    def test_tight_samples_tight_interval(self):
        for seed in range(1, 6):
            r = stats.ratio_bootstrap([10, 10.1, 9.9, 10.05, 9.95],
                                      [5, 5.05, 4.95, 5.02, 4.98, 5],
                                      iters=2000, seed=seed)
            self.assertLess(r.lo, r.ratio)
            self.assertGreater(r.hi, r.ratio)
            self.assertLess(r.hi - r.lo, 0.2)

    def test_agrees_with_delta_method(self):
        # Large samples: the percentile interval is close to the normal
        # approximation's mean(a)/mean(b) ± 1.96 se.
        rng = random.Random(2002)
        a = [rng.gauss(100, 15) for _ in range(400)]
        b = [rng.gauss(50, 10) for _ in range(400)]
        r = stats.ratio_bootstrap(a, b)
        sa, sb = stats.summarize(a), stats.summarize(b)
        q = sa.mean / sb.mean
        se = q * math.sqrt((sa.sd / sa.mean) ** 2 / sa.n
                           + (sb.sd / sb.mean) ** 2 / sb.n)
        half = 1.96 * se
        self.assertLess(abs(r.lo - (q - half)), 0.08 * half)
        self.assertLess(abs((r.hi - r.lo) / (2 * half) - 1), 0.08)

    def test_b_resample_not_positive(self):
        # b = {0, 2}: a quarter of the resamples have mean 0; they are left
        # out, not turned into an infinite ratio.
        r = stats.ratio_bootstrap([2, 2, 2], [0, 2], iters=1000, seed=5)
        self.assertEqual(r.ratio, 2)
        self.assertTrue(math.isfinite(r.lo) and math.isfinite(r.hi))
        self.assertLessEqual(r.lo, r.hi)
        self.assertGreater(r.lo, 0)

    def test_errors(self):
        for a, b, iters in (([], [1, 2], 10), ([1], [], 10),
                            ([1, 2], [1, 2], 0), ([1], [0, 0], 10),
                            ([1], [-1, -2], 10), ([1], [1, -1], 10),
                            ([1], [math.nan], 10)):
            with self.assertRaises(ValueError, msg=f"{a} {b} {iters}"):
                stats.ratio_bootstrap(a, b, iters=iters)


class BetweenSessions(unittest.TestCase):
    def test_agree(self):
        s = stats.between_sessions([1.2, 1.5, 1.1])
        self.assertEqual((s.sessions, s.lo, s.hi, s.agree), (3, 1.1, 1.5, 1))
        self.assertEqual(stats.between_sessions([0.8, 0.9]).agree, -1)

    def test_disagree(self):
        self.assertEqual(stats.between_sessions([1.07, 0.79]).agree, 0)
        # one on the threshold is no side at all
        self.assertEqual(stats.between_sessions([1.2, 1.0]).agree, 0)
        self.assertEqual(stats.between_sessions([3, 4], threshold=3.5)
                         .agree, 0)

    def test_missing_and_empty(self):
        s = stats.between_sessions([1.2, None, math.nan, 1.3])
        self.assertEqual((s.sessions, s.agree), (2, 1))
        with self.assertRaises(ValueError):
            stats.between_sessions([None])


class Separated(unittest.TestCase):
    """A winner only where every session's interval excludes 1 on one
    side."""

    def test_one_side(self):
        self.assertEqual(stats.separated([(1.1, 1.3), (1.01, 1.5)]), 1)
        self.assertEqual(stats.separated([(0.5, 0.9), (0.7, 0.99)]), -1)

    def test_straddles(self):
        # every ratio above 1, but one interval holds it: no winner
        self.assertEqual(stats.separated([(1.1, 1.3), (0.95, 1.4)]), 0)
        # an interval ending on the threshold does not exclude it
        self.assertEqual(stats.separated([(1.0, 1.3), (1.1, 1.2)]), 0)
        # each excludes 1, but on opposite sides
        self.assertEqual(stats.separated([(1.1, 1.3), (0.7, 0.9)]), 0)
        self.assertEqual(stats.separated([(3.6, 4), (3.7, 4)],
                                         threshold=3.5), 1)

    def test_empty(self):
        with self.assertRaises(ValueError):
            stats.separated([])


# ---- The Sun study ---------------------------------------------------------

def summary_rows(text):
    lines = text.splitlines()
    head = lines[0].split(",")
    return {r.split(",")[0]: dict(zip(head, r.split(",")))
            for r in lines[1:]}


class SunFixture(Folder):
    """tests/data/runs_fixture.csv, whose answers are worked out by hand:

      -2 read:  totals 10, 12, 14 ms; mean 12, sd 2, median 12
      -2 mmap:  totals 8, 8, 10, 14; mean 10, sd sqrt(24/3), median 9
      -2 ratio: 1.2; the 2002 study: 5.48 s, 4.79 s, 1.14
       3 read:  20, 22; 3 mmap: 25, 35; ratio 0.7, no 2002 figures
      -8 read:  3, 5; -8 mmap: no runs, no ratio; 2002 ratio 2.03
    A run's total is load + scale + release (write is large, to show)."""

    def setUp(self):
        super().setUp()
        shutil.copy(FIXTURE, self.write("run/runs.csv", ""))
        with Figures() as self.figs:
            self.assertEqual(self.spreport("sun", self.path("run")),
                             (0, ""))
        self.summary = summary_rows(self.read("run/summary.csv"))
        self.table = self.read("run/table1.md")

    def test_one_row_a_scale_in_order(self):
        # reduces by factor, then enlarges, whatever order they ran in
        self.assertEqual(list(self.summary), ["-2", "-8", "3"])

    def test_summaries(self):
        want = """-2 read 3 12 2 12 10 14
                  -2 mmap 4 10 2.8284 9 8 14
                  3 read 2 21 1.4142 21 20 22
                  3 mmap 2 30 7.0711 30 25 35
                  -8 read 2 4 1.4142 4 3 5"""
        for line in want.splitlines():
            scale, m, *vals = line.split()
            row = self.summary[scale]
            for name, v in zip(("n", "mean_ms", "sd_ms", "median_ms",
                                "min_ms", "max_ms"), vals):
                self.assertAlmostEqual(float(row[f"{m}_{name}"]), float(v),
                                       places=4, msg=f"{scale} {m} {name}")
        # no runs: n 0 and the rest empty, not a time of 0
        self.assertEqual(self.summary["-8"]["mmap_n"], "0")
        for s in ("mean", "sd", "median", "min", "max"):
            self.assertEqual(self.summary["-8"][f"mmap_{s}_ms"], "")

    def test_phase_means(self):
        want = {("-2", "read_load_ms_mean"): 5, ("-2", "read_write_ms_mean"):
                100, ("-2", "read_load_majflt_mean"): 1,
                ("-2", "mmap_scale_minflt_mean"): 250,
                ("-2", "mmap_scale_majflt_mean"): 0.5,
                ("-2", "mmap_release_minflt_mean"): 1,
                ("3", "read_load_ms_mean"): 10.5,
                ("3", "mmap_scale_ms_mean"): 28,
                ("3", "mmap_release_minflt_mean"): 3,
                ("-8", "read_write_ms_mean"): 10}
        for (scale, name), v in want.items():
            self.assertAlmostEqual(float(self.summary[scale][name]), v,
                                   places=4, msg=f"{scale} {name}")

    def test_ratios(self):
        self.assertAlmostEqual(float(self.summary["-2"]["ratio"]), 1.2)
        self.assertAlmostEqual(float(self.summary["3"]["ratio"]), 0.7)
        for c in ("ratio", "ratio_lo", "ratio_hi", "ratio_2002"):
            self.assertEqual(self.summary["3" if c == "ratio_2002"
                                          else "-8"][c], "")
        self.assertEqual(self.summary["-2"]["ratio_2002"], "1.14")
        self.assertEqual(self.summary["-8"]["ratio_2002"], "2.03")
        for scale in ("-2", "3"):
            lo, r, hi = (float(self.summary[scale][c]) for c in
                         ("ratio_lo", "ratio", "ratio_hi"))
            self.assertTrue(lo < r < hi, f"{scale}: {lo} {r} {hi}")

    def test_table1(self):
        rows = [ln for ln in self.table.split("## Page faults")[0]
                .splitlines() if ln.startswith("| -") or ln.startswith("| 3")]
        self.assertEqual(len(rows), 3)
        self.assertTrue(rows[0].startswith("| -2* | 3/4 | 12.000 ± 2.000 "
                                           "(12.000) | 10.000 ± 2.828 "
                                           "(9.000) | 1.20 | "), rows[0])
        self.assertTrue(rows[0].endswith("| 5.48 | 4.79 | 1.14 |"))
        self.assertTrue(rows[2].startswith("| 3 | 2/2 | "))
        self.assertTrue(rows[2].endswith("| 0.70 | 0.57–0.88 | | | |")
                        or "| 0.70 |" in rows[2] and
                        rows[2].endswith("| | | |"), rows[2])
        self.assertIn("image=fixture.ppm, cache=warm, page_cache=4k, "
                      "threads=1", self.table)

    def test_figure(self):
        # the fixture has reduces and an enlarge: two panels, each titled
        # with the cache state and folio size, the legend below the axes
        (path, fig), = self.figs.drawn
        self.assertTrue(path.endswith("figure1.png"))
        self.assertEqual(len(fig.axes), 2)
        for ax in fig.axes:
            self.assertIn("fixture.ppm, 1 threads, warm cache, folio 4k",
                          ax.get_title())
            anchor = ax.get_legend().get_bbox_to_anchor()
            self.assertLess(anchor.y1, ax.bbox.y0 + 1)

    def test_same_runs_same_summary(self):
        first = self.read("run/summary.csv")
        with Figures():
            self.spreport("sun", self.path("run"))
        self.assertEqual(self.read("run/summary.csv"), first)

    def test_columns_by_name_crlf_blank_lines(self):
        with open(FIXTURE) as f:
            lines = f.read().splitlines()
        rev = [",".join(reversed(ln.split(","))) for ln in lines]
        self.write("rev/runs.csv", "\r\n".join(rev) + "\r\n\r\n\n")
        with Figures():
            self.assertEqual(self.spreport("sun", self.path("rev"))[0], 0)
        self.assertEqual(self.read("rev/summary.csv"),
                         self.read("run/summary.csv"))


class SunInputs(Folder):
    def test_zero_mmap_mean_is_kept(self):
        self.write("z/runs.csv", "scale,method,load_ns,scale_ns,release_ns\n"
                   "-2,read,1000000,0,0\n-2,mmap,0,0,0\n"
                   "3,read,2000000,0,0\n3,mmap,1000000,0,0\n")
        with Figures():
            self.assertEqual(self.spreport("sun", self.path("z"))[0], 0)
        s = summary_rows(self.read("z/summary.csv"))
        self.assertEqual((s["-2"]["read_n"], s["-2"]["ratio"]), ("1", ""))
        self.assertIn("| -2* | 1/1 |", self.read("z/table1.md"))

    def one_panel(self, columns, rows):
        """The figure of a runs.csv with the extra COLUMNS and ROWS (each
        "SCALE,METHOD,LOAD_NS" then their values): its one panel's
        title."""
        self.write("one/runs.csv", "scale,method,load_ns,scale_ns,"
                   f"release_ns,{columns}\n"
                   + "".join(f"{s},{m},{ns},0,0,{rest}\n"
                             for s, m, ns, rest in rows))
        with Figures() as figs:
            self.assertEqual(self.spreport("sun", self.path("one"))[0], 0)
        ax, = figs.axes()
        return ax.get_title()

    def test_only_reduce_one_panel(self):
        title = self.one_panel("cache,page_cache",
                               [(-2, "read", 3, "cold,small"),
                                (-2, "mmap", 1, "cold,small")])
        self.assertIn("reduce", title)
        self.assertIn("cold cache, folio small", title)

    def test_folio_column_preferred(self):
        title = self.one_panel("cache,page_cache,folio_kib",
                               [(2, "read", 3, "warm,large,2048"),
                                (2, "mmap", 1, "warm,large,2048")])
        self.assertIn("enlarge", title)
        self.assertIn("folio 2048 KiB", title)

    def test_folio_unknown_falls_back(self):
        title = self.one_panel("cache,page_cache,folio_kib",
                               [(2, "read", 3, "warm,small,?"),
                                (2, "mmap", 1, "warm,small,?")])
        self.assertIn("folio small", title)

    def test_scales_in_table_order_whatever_the_run_order(self):
        self.write("o/runs.csv", "scale,method,load_ns,scale_ns,release_ns\n"
                   + "".join(f"{s},{m},{ns},0,0\n" for s in (3, -4, -2)
                             for m, ns in (("read", 2), ("mmap", 1))))
        with Figures():
            self.assertEqual(self.spreport("sun", self.path("o"))[0], 0)
        got = [ln.split(",")[0] for ln in
               self.read("o/summary.csv").splitlines()[1:]]
        self.assertEqual(got, ["-2", "-4", "3"])

    def test_real_figure_written(self):
        shutil.copy(FIXTURE, self.write("png/runs.csv", ""))
        self.assertEqual(self.spreport("sun", self.path("png"))[0], 0)
        self.assertPng("png/figure1.png")

    def bad(self, text, want):
        """runs.csv TEXT fails with one message starting WANT, and no
        output file is written."""
        d = self.path("bad")
        shutil.rmtree(d, ignore_errors=True)
        if text is not None:
            self.write("bad/runs.csv", text)
        rc, err = self.spreport("sun", d)
        self.assertEqual(rc, 1, err)
        self.assertEqual(err.count("\n"), 1, err)
        self.assertTrue(err.startswith("spreport: " + d + "/runs.csv" + want),
                        err)
        self.assertFalse(any(os.path.exists(os.path.join(d, f)) for f in
                             ("summary.csv", "table1.md", "figure1.png")))

    def test_bad_inputs(self):
        with open(FIXTURE) as f:
            lines = f.read().splitlines()
        head, rows = lines[0], lines[1:]
        self.bad(None, ": No such file")
        self.bad("", ": no header line")
        self.bad("\n".join(rows) + "\n", ": needs columns")
        self.bad(head.replace("load_ns", "load_us") + "\n", ": needs columns")
        self.bad(head + "\n", ": no runs")
        short = rows[1].rsplit(",", 1)[0]
        self.bad("\n".join([head, rows[0], short]) + "\n",
                 ":3: 20 fields, header has 21")
        self.bad("\n".join([head] + rows[:2] + [rows[2] + ",x"]) + "\n",
                 ":4: 22 fields, header has 21")
        self.bad("\n".join([head] + rows[:3] +
                           [rows[3].replace(",mmap,", ",mmapp,")]) + "\n",
                 ":5: bad method")
        self.bad("\n".join([head, rows[0].replace("4000000", "4e6x")]) + "\n",
                 ":2: load_ns is not a number")

    def test_usage(self):
        self.assertEqual(self.spreport()[0], 2)
        self.assertEqual(self.spreport("sun")[0], 2)
        self.assertEqual(self.spreport("nosuch", "x")[0], 2)


def session_runs(ratios, n=6, jitter=0.02, seed=0):
    """A runs.csv where scale S's read/mmap ratio is about RATIOS[S]."""
    rng = random.Random(seed)
    lines = ["scale,method,load_ns,scale_ns,release_ns,cache,page_cache"]
    for s, q in ratios.items():
        for _ in range(n):
            for method, ns in (("read", q * 1e6), ("mmap", 1e6)):
                ns *= rng.uniform(1 - jitter, 1 + jitter)
                lines.append(f"{s},{method},{ns:.0f},0,0,cold,large")
    return "\n".join(lines) + "\n"


class Sessions(Folder):
    def test_verdicts(self):
        # -2: every session has mmap faster; 2: every one read faster;
        # -4: the sessions part (1.07 and 0.79, as the cold runs did);
        # -8: missing in one session.
        # 3: every session's ratio above 1 (1.15) but each interval
        # holds 1 (read 0.8 or 1.5 ms, mmap 1 ms), which the rule of one
        # side would have called "mmap faster".
        spec = [{-2: 1.5, 2: 0.6, -4: 1.07, -8: 2},
                {-2: 1.3, 2: 0.7, -4: 0.79},
                {-2: 1.4, 2: 0.8, -4: 1.1, -8: 2}]
        wide = "".join(f"3,{m},{ns},0,0,cold,large\n" for m, ns in
                       (("read", 800000), ("mmap", 1000000),
                        ("read", 1500000), ("mmap", 1000000)))
        for i, s in enumerate(spec):
            self.write(f"s{i}/runs.csv", session_runs(s, seed=i) + wide)
        with Figures() as figs:
            rc, err = self.spreport("sun", "--sessions", self.path("out"),
                                    *(self.path(f"s{i}") for i in range(3)))
        self.assertEqual((rc, err), (0, ""))
        rows = {}
        for ln in self.read("out/sessions.md").splitlines():
            if ln.startswith("| ") and not ln.startswith("| scale"):
                cells = [c.strip() for c in ln.split("|")[1:-1]]
                rows[cells[0]] = cells
        self.assertEqual(rows["-2*"][5], "mmap faster")
        self.assertEqual(rows["2"][5], "read faster")
        self.assertEqual(rows["-4*"][5], "cannot separate")
        self.assertEqual(rows["3"][5], "cannot separate")
        self.assertEqual(rows["3"][1], "1.15 (0.80–1.50)")
        self.assertEqual(rows["-8*"][5], "not in every session")
        # each session's ratio with its interval, and the spread
        lo, hi = (float(v) for v in rows["-2*"][4].split("–"))
        self.assertAlmostEqual(lo, 1.3, delta=0.03)
        self.assertAlmostEqual(hi, 1.5, delta=0.03)
        r, ci = rows["-2*"][1].split(" (")
        a, b = (float(v) for v in ci.rstrip(")").split("–"))
        self.assertTrue(a <= float(r) <= b)
        self.assertEqual(rows["-2*"][6], "1.14")
        self.assertEqual(rows["2"][6], "")
        csv = self.read("out/sessions.csv").splitlines()
        self.assertEqual(csv[0], "scale,session,ratio,ratio_lo,ratio_hi")
        self.assertEqual(len(csv) - 1, 4 * 3 + 2)
        (path, fig), = figs.drawn
        self.assertEqual(len(fig.axes), 2)
        for ax in fig.axes:
            self.assertIn("cold cache, folio large", ax.get_title())

    def test_another_case_is_refused(self):
        self.write("s0/runs.csv", session_runs({-2: 1.5}))
        self.write("s1/runs.csv", session_runs({-2: 1.5})
                   .replace(",cold,", ",warm,"))
        rc, err = self.spreport("sun", "--sessions", self.path("out"),
                                self.path("s0"), self.path("s1"))
        self.assertEqual(rc, 1)
        self.assertIn("not one case: cache is cold in one, warm", err)
        self.assertFalse(os.path.exists(self.path("out")))

    def test_one_session_is_refused(self):
        self.write("s0/runs.csv", session_runs({-2: 1.5}))
        rc, err = self.spreport("sun", "--sessions", self.path("out"),
                                self.path("s0"))
        self.assertEqual(rc, 1)
        self.assertIn("two or more", err)


def with_span(text, output, cpus):
    """TEXT, a runs.csv, with the columns sun.sh writes since issue 30:
    what each run wrote (OUTPUT) and the CPUs it ran on (CPUS)."""
    head, *rows = text.splitlines()
    return "\n".join([head + ",output,cpus"]
                     + [f"{r},{output},{cpus}" for r in rows]) + "\n"


class SunSpan(Folder):
    """The case a Sun-study report is of: no output (the study's span) or
    an output file, and the CPUs, in table1.md and the figures' titles;
    runs without the columns reported as before."""

    def report(self, text):
        self.write("run/runs.csv", text)
        with Figures() as figs:
            self.assertEqual(self.spreport("sun", self.path("run")),
                             (0, ""))
        (path, fig), = figs.drawn
        return self.read("run/table1.md"), fig.axes[0].get_title()

    def test_no_output_one_cpu(self):
        table, title = self.report(with_span(session_runs({-2: 1.5}),
                                             "none", 1))
        self.assertEqual(table.splitlines()[0],
                         "# Table 1: read/scale/free vs mmap/scale/free "
                         "(no output written, as 2002; 1 CPU)")
        self.assertIn("output=none, cpus=1. No output was written", table)
        self.assertIn("ran on 1 CPU, as on the Ultra 30", table)
        self.assertIn("\nno output written, as 2002; 1 CPU", title)

    def test_output_file(self):
        table, title = self.report(with_span(session_runs({-2: 1.5}),
                                             "file", 2))
        self.assertIn("(output written to a file; 2 CPUs)",
                      table.splitlines()[0])
        self.assertIn("Each run wrote its output to a file", table)
        self.assertIn("output written to a file; 2 CPUs", title)

    def test_before_the_columns(self):
        table, title = self.report(session_runs({-2: 1.5}))
        self.assertEqual(table.splitlines()[0],
                         "# Table 1: read/scale/free vs mmap/scale/free")
        self.assertNotIn("output", table + title)
        self.assertNotIn("\n", title.split("\n", 1)[1])

    def test_sessions_of_two_cases_refused(self):
        for i, (output, cpus) in enumerate((("none", 2), ("file", 2),
                                            ("none", 1))):
            self.write(f"s{i}/runs.csv",
                       with_span(session_runs({-2: 1.5}), output, cpus))
        for pair, word in (((0, 1), "output is file in one, none"),
                           ((0, 2), "cpus is 1 in one, 2")):
            rc, err = self.spreport("sun", "--sessions", self.path("out"),
                                    *(self.path(f"s{i}") for i in pair))
            self.assertEqual(rc, 1)
            self.assertIn(f"not one case: {word}", err)


# ---- iobench ----------------------------------------------------------------

IOBENCH = """experiment,case,param,method,metric,value,unit,seed,check
syscall-vs-mmap,seq-warm,4096,read,throughput,10,GB/s,,ok
syscall-vs-mmap,seq-warm,4096,mmap,throughput,16,GB/s,12,ok
syscall-vs-mmap,seq-warm,4096,fread,throughput,7,GB/s,,ok
syscall-vs-mmap,seq-warm,4096,read,throughput,14,GB/s,,ok
syscall-vs-mmap,seq-warm,4096,mmap,throughput,20,GB/s,12,ok
syscall-vs-mmap,seq-warm,4096,read,throughput,11,GB/s,,ok
syscall-vs-mmap,seq-warm,4096,mmap,throughput,18,GB/s,12,
syscall-vs-mmap,seq-warm,4096,mmap/read,ratio,1.6,x,,
"""


HEAD = "experiment,case,param,method,metric,value,unit,seed,check"


class Iobench(Folder):
    def report(self, text, draw=False):
        """spreport iobench on the CSV TEXT into r.md and r.png: its exit
        status, stderr and the figure's one axes (a real PNG with
        DRAW)."""
        csv = self.write("r.csv", text)
        args = ("iobench", "x", csv, self.path("r.md"), self.path("r.png"))
        if draw:
            return self.spreport(*args) + (None,)
        with Figures() as figs:
            rc, err = self.spreport(*args)
        return rc, err, figs.axes()[0] if figs.drawn else None

    def rows(self):
        return {tuple(c.strip() for c in ln.split("|")[1:5]):
                [c.strip() for c in ln.split("|")[5:-1]]
                for ln in self.read("r.md").splitlines()
                if ln.startswith("| ") and not ln.startswith("| case")}

    def test_repeats(self):
        rc, err, ax = self.report(IOBENCH)
        self.assertEqual((rc, err), (0, ""))
        rows = self.rows()
        # one row a measurement, whatever the number of repeats
        self.assertEqual(len(rows), 4)
        # ours, min–max, n, seed, ours/seed, unit, checked
        self.assertEqual(rows[("seq-warm", "4096", "read", "throughput")],
                         ["11", "10–14", "3", "", "", "GB/s", "yes"])
        self.assertEqual(rows[("seq-warm", "4096", "mmap", "throughput")],
                         ["18", "16–20", "3", "12", "1.50", "GB/s", "no"])
        self.assertEqual(rows[("seq-warm", "4096", "fread", "throughput")],
                         ["7", "", "1", "", "", "GB/s", "yes"])
        # the figure: the spread and the seed's figure on it
        self.assertIn("syscall-vs-mmap: throughput", ax.get_title())
        self.assertEqual(len(ax.patches), 3)  # a bar a method
        lines = [ln for ln in ax.get_lines()
                 if ln.get_marker() == "D"]
        self.assertEqual([list(ln.get_ydata()) for ln in lines], [[12]])
        points = sorted(v for ln in ax.get_lines() if ln.get_marker() == "."
                        for v in ln.get_ydata())
        self.assertEqual(points, [10, 11, 14, 16, 18, 20])
        legend = ax.get_legend()
        self.assertLess(legend.get_bbox_to_anchor().y1, ax.bbox.y0)
        # rows without a cache column: the experiment's own set-up
        self.assertIn("-cold: evicted before each pass",
                      ax.get_title())

    def test_new_experiment_generic(self):
        rc, _, ax = self.report(
            f"{HEAD}\ncdb,cached,1000000,cdb_find,latency,48,ns/op,,ok\n"
            "cdb,cached,1000000,cdb_seek,latency,1210,ns/op,1200,ok\n"
            "cdb,cached,1000000,cdb_find,latency,50,ns/op,,ok\n")
        self.assertEqual(rc, 0)
        rows = self.rows()
        self.assertEqual(rows[("cached", "1000000", "cdb_find", "latency")]
                         [:3], ["49", "48–50", "2"])
        self.assertEqual(rows[("cached", "1000000", "cdb_seek", "latency")]
                         [3:5], ["1200", "1.01"])
        self.assertEqual(ax.get_yscale(), "log")

    def test_cache_state_in_title(self):
        rc, _, ax = self.report(f"{HEAD},cache,folio\n"
                                "x,a,0,read,time,1,s,,ok,cold,4K\n"
                                "x,a,0,mmap,time,2,s,,ok,cold,2M\n")
        self.assertEqual(rc, 0)
        self.assertIn("cache cold, folio 2M, folio 4K", ax.get_title())

    def test_file_size_and_threads_in_title(self):
        # rows with file_bytes and threads (iobench's since issue 30): the
        # title's first line names the file's size and the threads
        head = f"{HEAD},file_bytes,threads"
        rc, _, ax = self.report(f"{head}\nx,a,0,read,time,1,s,,ok,16777216,1\n"
                                "x,a,0,mmap,time,2,s,,ok,16777216,1\n")
        self.assertEqual(rc, 0)
        first = ax.get_title().splitlines()[0]
        self.assertEqual(first, "x: time (s); file 16 MiB, 1 thread")
        # several sizes, in order; a size in no whole unit in bytes
        rc, _, ax = self.report(f"{head}\nx,a,0,read,time,1,s,,ok,16777216,1\n"
                                "x,b,0,read,time,1,s,,ok,8388608,1\n"
                                "x,c,0,read,time,1,s,,ok,1000,1\n")
        self.assertIn("files 1000 bytes, 8 MiB, 16 MiB, 1 thread",
                      ax.get_title())
        # zero-page reads no file: empty file_bytes
        rc, _, ax = self.report(f"{head}\nx,a,0,memset,time,1,s,,ok,,1\n")
        self.assertIn("no file read, 1 thread", ax.get_title())
        # older rows, without the columns: the older title, unchanged
        rc, _, ax = self.report(f"{HEAD}\nx,a,0,read,time,1,s,,ok\n")
        self.assertEqual(ax.get_title().splitlines()[0],
                         "x: time (s); cache state, folio size: not in the "
                         "rows (see the cases)")
        self.assertNotIn("thread", ax.get_title())

    def test_seed_beside_its_own_condition(self):
        # zero-page's touched rounds hold the seed's Linux figures, its
        # untouched ones Solaris's: two markers; cdb's seed was warm and
        # copy's had no fsync: no marker beside cold or fsync bars
        rc, _, ax = self.report(
            f"{HEAD}\nzero-page,round,1,memset,time,1,s,0.6,ok\n"
            "zero-page,round-notouch,1,memset,time,2,s,10,ok\n")
        self.assertEqual(rc, 0)
        marks = {ln.get_marker(): list(ln.get_ydata())
                 for ln in ax.get_lines() if ln.get_marker() in "D^"}
        self.assertEqual(marks, {"D": [0.6], "^": [10]})
        self.assertIn("◆ the seed's figure, Linux VM; ▲ the seed's figure, "
                      "Solaris 11", ax.get_title())
        for text, drawn in (
                (f"{HEAD}\ncdb,warm,1,seek,latency,9,ns/op,12,ok\n"
                 "cdb,cold,1,seek,latency,900,ns/op,12,ok\n", [12]),
                (f"{HEAD}\ncopy,copy,0,cp,real,9,s,4.5,ok\n"
                 "copy,copy-nofsync,0,cp,real,3,s,4.5,ok\n", [4.5])):
            rc, _, ax = self.report(text)
            self.assertEqual(rc, 0)
            seeds = [v for ln in ax.get_lines() if ln.get_marker() == "D"
                     for v in ln.get_ydata()]
            self.assertEqual(seeds, drawn, text)
            # the drawn one sits on the first group's bar only
            xs = [x for ln in ax.get_lines() if ln.get_marker() == "D"
                  for x in ln.get_xdata()]
            self.assertEqual(xs, [0] if "cdb" in text else [1])
        # no seed figure drawn: the title promises none
        rc, _, ax = self.report(f"{HEAD}\nx,a,0,read,time,1,s,,ok\n")
        self.assertNotIn("seed", ax.get_title())

    def test_real_figure_written(self):
        self.assertEqual(self.report(IOBENCH, draw=True)[0], 0)
        self.assertPng("r.png")

    def test_bad(self):
        rc, err, _ = self.report(IOBENCH.replace(",16,GB/s", ",x,GB/s"))
        self.assertEqual(rc, 1)
        self.assertIn("r.csv:3: value is not a number", err)
        self.assertFalse(os.path.exists(self.path("r.md")))
        rc, err, _ = self.report(IOBENCH.replace("20,GB/s", "20,MB/s"))
        self.assertEqual(rc, 1)
        self.assertIn("r.csv:6: unit MB/s", err)


# ---- threads ----------------------------------------------------------------

class Threads(Folder):
    HEAD = "image,job,output,load,contender,round,wall_ns,rss_kb\n"

    def rows(self, image, job, output, load, ms_by_who):
        out = ""
        for who, values in ms_by_who.items():
            for r, v in enumerate(values, start=1):
                out += (f"{image},{job},{output},{load},{who},{r},"
                        f"{int(v * 1e6)},1\n")
        return out

    def test_default_against_best_and_targets(self):
        text = self.HEAD
        # default 10 ms against a best -t 2 of 8 (1.25: missed)
        text += self.rows("320x256", "-2", "pipe", "quiet",
                          {"default": [10, 11, 9], "t1": [12, 12, 12],
                           "t2": [8, 8, 9], "t4": [20, 9, 30],
                           "t8": [30, 30, 30]})
        # default 5 against a best -t 1 of 4.6 (1.09: met)
        text += self.rows("320x256", "2", "pipe", "quiet",
                          {"default": [5, 5, 5], "t1": [4.6, 4.6, 4.6],
                           "t2": [6, 6, 6], "t4": [7, 7, 7],
                           "t8": [8, 8, 8], "pamenlarge": [20, 20, 20]})
        self.write("d/threads.csv", text)
        rc, err = self.spreport("threads", "--cpus", "2", "--disk",
                                "ext4 on /dev/x", self.path("d"))
        self.assertEqual((rc, err), (0, ""))
        md = self.read("d/threads.md")
        self.assertIn("a file on ext4 on /dev/x", md)
        self.assertIn("within 10% of the best `-t` in 1 of 2 cases", md)
        self.assertIn("| 320x256 | reduce 2 | pipe | quiet | 10.0 | 12.0 "
                      "| 8.00 | 20.0 | 30.0 | -t 2 | 1.25 | **no** |", md)
        self.assertIn("| 320x256 | enlarge 2 | pipe | quiet | 5.00 | 4.60 "
                      "| 6.00 | 7.00 | 8.00 | -t 1 | 1.09 | yes |", md)
        # the quick image stands in for 1280x1024: 5 / 20 against 0.5
        self.assertIn("| 320x256 | enlarge 2 | 5.00 | pamenlarge | 20.0 "
                      "| 0.25 | ≤ 0.5 | yes |", md)

    def test_a_variant_missing(self):
        self.write("d/threads.csv", self.HEAD + self.rows(
            "320x256", "-2", "disk", "loaded", {"default": [1], "t1": [1]}))
        rc, err = self.spreport("threads", self.path("d"))
        self.assertEqual(rc, 1)
        self.assertIn("lacks t2, t4, t8", err)


# ---- durable ----------------------------------------------------------------

class Durable(Folder):
    def test_medians(self):
        self.write("d/durable.csv", "size,case,round,wall_ns,rss_kb\n"
                   "2000x1500,new,1,10000000,1\n"
                   "2000x1500,replace,1,30000000,1\n"
                   "2000x1500,replace,2,50000000,1\n"
                   "2000x1500,new,2,20000000,1\n"
                   "2000x1500,new,3,90000000,1\n"
                   "2000x1500,replace,3,40000000,1\n"
                   "320x256,new,1,2000000,1\n320x256,replace,1,5000000,1\n")
        rc, err = self.spreport("durable", "--filesystem", "ext4 on /dev/x",
                                self.path("d"))
        self.assertEqual((rc, err), (0, ""))
        md = self.read("d/durable.md")
        self.assertIn("into ext4 on /dev/x,", md)
        rows = [ln for ln in md.splitlines() if ln.startswith("| 3")
                or ln.startswith("| 2")]
        # ordered by bytes; medians 20 and 40 ms; W*H*3 + len("W H") + 8
        # bytes
        self.assertEqual(rows, [
            "| 320x256 | 245775 | 1 | 2.0 | 5.0 | 3.0 | 2.50 |",
            "| 2000x1500 | 9000017 | 3 | 20.0 | 40.0 | 20.0 | 2.00 |"])

    def test_a_case_missing(self):
        self.write("d/durable.csv", "size,case,round,wall_ns,rss_kb\n"
                   "320x256,new,1,2000000,1\n")
        rc, err = self.spreport("durable", self.path("d"))
        self.assertEqual(rc, 1)
        self.assertIn("lacks new or replace", err)


class Pool(Folder):
    """Sessions of a suite pooled: rounds numbered on, medians a session,
    a winner named only where every session has it."""

    def session(self, k, rows):
        return self.write(f"s{k}/durable.csv",
                          "size,case,round,wall_ns,rss_kb\n" + rows)

    def test_pooled_and_judged(self):
        self.session(2, "8x8,new,1,4000000,1\n8x8,replace,1,9000000,1\n"
                     "9x9,new,1,1000000,1\n9x9,replace,1,2000000,1\n"
                     "8x8,new,2,4000000,1\n8x8,replace,2,9000000,1\n"
                     "7x7,new,1,1000000,1\n7x7,replace,1,3000000,1\n")
        self.session(1, "8x8,new,1,1000000,1\n8x8,replace,1,3000000,1\n"
                     "8x8,new,2,2000000,1\n8x8,replace,2,5000000,1\n"
                     "9x9,new,1,7000000,1\n9x9,replace,1,6000000,1\n"
                     "7x7,new,1,1000000,1\n7x7,replace,1,3000000,1\n")
        rc, err = self.spreport("pool", "durable", self.path("out"),
                                self.path("s1"), self.path("s2"))
        self.assertEqual((rc, err), (0, ""))
        rounds = [ln.split(",")[2] for ln in
                  self.read("out/durable.csv").splitlines()[1:]]
        self.assertEqual(rounds, ["1", "1", "2", "2", "1", "1", "1", "1",
                                  "3", "3", "3", "3", "4", "4", "3", "3"])
        md = self.read("out/sessions.md")
        # new: medians 1.5 and 4 ms; 9x9: replace wins one, new the other
        self.assertIn("| 8x8 | new | 1.5 (1–2) | 4 (4–4) | 1.5–4 | ms | "
                      "new best in every session |", md)
        self.assertIn("| 9x9 | new | 7 (7–7) | 1 (1–1) | 1–7 | ms | "
                      "cannot separate: replace, new |", md)
        # 7x7: new best in both sessions, but one repeat each: a point is
        # no interval
        self.assertIn("| 7x7 | new | 1 (1–1) | 1 (1–1) | 1–1 | ms | "
                      "cannot separate: new, new |", md)
        # the pooled rows make the suite's own report
        rc, err = self.spreport("durable", self.path("out"))
        self.assertEqual((rc, err), (0, ""))

    def test_intervals_straddle(self):
        # new has the lower median in both sessions (3 against 4 ms), but
        # each session's interval of replace/new holds 1: no winner
        for k in (1, 2):
            self.session(k, "7x7,new,1,1000000,1\n7x7,replace,1,2000000,1\n"
                         "7x7,new,2,5000000,1\n7x7,replace,2,6000000,1\n")
        rc, err = self.spreport("pool", "durable", self.path("out"),
                                self.path("s1"), self.path("s2"))
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("| 7x7 | new | 3 (1–5) | 3 (1–5) | 3–3 | ms | "
                      "cannot separate: new, new |", self.read("out/sessions.md"))

    def test_session_times_and_identities(self):
        env = ("started: 2026-11-23 20:00:00 UTC\n"
               "machine: kernel 6.1, build #1; cpu X\n"
               "settings: suite=durable order_seed=%d\n")
        for k, (t, m) in enumerate((("20:00:00", "6.1"),
                                    ("20:12:05", "6.1")), start=1):
            self.session(k, "8x8,new,1,1,1\n8x8,replace,1,2,1\n")
            self.write(f"s{k}/env.txt", (env % (40 + k)).replace(
                "20:00:00", t).replace("6.1", m))
        rc, err = self.spreport("pool", "durable", self.path("out"),
                                self.path("s1"), self.path("s2"))
        self.assertEqual((rc, err), (0, ""))
        md = self.read("out/sessions.md")
        self.assertIn("| session 2 | 2026-11-23 20:12:05 UTC (started) | "
                      "12 min 5 s | 42 |", md)
        self.assertIn("one machine identity: kernel 6.1", md)
        self.assertNotIn("across identities", md)
        self.write("s2/env.txt", (env % 42).replace("6.1", "6.2"))
        rc, err = self.spreport("pool", "durable", self.path("out"),
                                self.path("s1"), self.path("s2"))
        self.assertEqual((rc, err), (0, ""))
        md = self.read("out/sessions.md")
        self.assertIn("a comparison across identities", md)
        self.assertIn("| 0 s | 42 | kernel 6.2, build #1; cpu X |", md)

    def test_headers_differ(self):
        self.session(1, "8x8,new,1,1,1\n")
        self.write("s2/durable.csv", "size,case,round,wall_ns\n"
                   "8x8,new,1,1\n")
        rc, err = self.spreport("pool", "durable", self.path("out"),
                                self.path("s1"), self.path("s2"))
        self.assertEqual(rc, 1)
        self.assertIn("header differs", err)

    def test_ratios_name_no_winner(self):
        head = "experiment,case,param,method,metric,value,unit,seed,check\n"
        for k in (1, 2):
            self.write(f"s{k}/x.csv", head +
                       "x,c,0,read,time,2,s,,ok\nx,c,0,mmap,time,1,s,,ok\n"
                       "x,c,0,read,time,2,s,,ok\nx,c,0,mmap,time,1,s,,ok\n"
                       "x,c,0,read/mmap,ratio,2,x,,ok\n")
        rc, err = self.spreport("pool", "iobench", self.path("out"),
                                self.path("s1"), self.path("s2"))
        self.assertEqual((rc, err), (0, ""))
        md = self.read("out/sessions.md")
        self.assertIn("| x c 0 time | read | 2 (2–2) | 2 (2–2) | 2–2 | s | "
                      "mmap best in every session |", md)
        self.assertIn("| x c 0 ratio | read/mmap | 2 (2–2) | 2 (2–2) | 2–2 "
                      "| x | |", md)
        self.assertEqual(len(self.read("out/x.csv").splitlines()), 11)


# ---- batch ------------------------------------------------------------------

class Batch(Folder):
    HEAD = "image,files,job,contender,round,wall_ns,rss_kb\n"
    SET = ("set,cache,load,round,file,span_ns,load_ns,scale_ns,release_ns,"
           "write_ns,minflt,majflt,threads\n")
    RUNS = "set,files,cache,load,round,wall_ns,rss_kb,retries\n"

    def rows(self, image, files, job, ms_by_who, rss=1):
        out = ""
        for who, values in ms_by_who.items():
            for r, v in enumerate(values, start=1):
                out += (f"{image},{files},{job},{who},{r},{int(v * 1e6)},"
                        f"{rss * r}\n")
        return out

    def set_rows(self, cache, load, ms, faults):
        """Two rounds of two images, each SPAN ms and FAULTS minor
        faults; a process of 10 ms a round."""
        text, runs = "", ""
        for r in (1, 2):
            for f in (1, 2):
                text += (f"homogeneous,{cache},{load},{r},{f},"
                         f"{int(ms * 1e6)},1,1,1,1,{faults},0,1\n")
            runs += f"homogeneous,2,{cache},{load},{r},10000000,1,0\n"
        return text, runs

    def folder(self, peers):
        self.write("d/batch.csv", self.HEAD + peers)
        text, runs = self.SET, self.RUNS
        for load, ms, faults in (("read-fresh", 2, 960), ("read-reuse", 1, 2),
                                 ("mmap", 1, 240), ("pread", 0.5, 3)):
            t, r = self.set_rows("warm", load, ms, faults)
            text, runs = text + t, runs + r
        self.write("d/batch-set.csv", text)
        self.write("d/batch-set-runs.csv", runs)

    def peers(self):
        return (self.rows("8x8", 4, "-4", {
                    "batch": [10, 12, 11], "loop": [40, 36, 33],
                    "parallel": [15, 15, 15], "gm-mogrify": [20, 20, 20],
                    "vips-loop": [100, 100, 100]}, rss=1024)
                + self.rows("16x16", 2, "2", {"batch": [5], "loop": [20]})
                + self.rows("8x8", 40, "-4", {"batch": [30]}, rss=1331))

    def test_speedups_memory_and_set(self):
        self.folder(self.peers())
        with Figures() as figs:
            rc, err = self.spreport("batch", "--outputs", "tmpfs; x",
                                    self.path("d"))
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(sorted(os.path.basename(p) for p, _ in figs.drawn),
                         ["batch-set.png", "batch.png"])
        # every bar with its whiskers, every title with the threads
        for _, fig in figs.drawn:
            for ax in fig.axes:
                bars = [p for p in ax.patches]
                whiskers = sum(len(c.lines[2][0].get_segments())
                               for c in ax.containers
                               if hasattr(c, "has_yerr"))
                self.assertEqual(whiskers, len(bars), ax.get_title())
                self.assertIn("thread", ax.get_title())
        md = self.read("d/batch.md")
        self.assertIn("folder (tmpfs; x)", md)
        self.assertIn("Targets met: 4 of 5.", md)
        self.assertIn("| 8x8 | 4 | reduce 4 | batch | 0.01 | 2.75 | | | | |",
                      md)
        # 36 / 11 ms, and 15 / 11 short of 1.5
        self.assertIn("| | | | loop | 0.04 | 9.00 | 3.27 | ", md)
        self.assertRegex(md, r"\| parallel \| 0\.01 \| 3\.75 \| 1\.36 \| "
                         r"[0-9.]+–[0-9.]+ \| ≥ 1\.5 \| \*\*no\*\* \|")
        self.assertIn("| 16x16 | 2 | enlarge 2 | batch | 0.01 | 2.50 |", md)
        # peak RSS: medians 2048 kB of 4 files, 1331 of 40; enlarge apart
        self.assertIn("| 8x8 | 4 | 2.0 | 3.0 | 0.01 | 3 |", md)
        self.assertIn("| 8x8 | 40 | 1.3 | 1.3 | 0.03 | 1 |", md)
        # per image: 2 ms against mmap's 1, its faults; 5 ms a file
        self.assertIn("| homogeneous | warm | read-fresh | 2.00 | 2.00 | 5.00 "
                      "| 960 | 0.0 | 2.00 | 2.00–2.00 |", md)
        self.assertIn("| homogeneous | warm | mmap | 1.00 | 1.00 | 5.00 "
                      "| 240 | 0.0 | | |", md)
        self.assertIn("| homogeneous | warm | pread | 0.500 | 0.500 | 5.00 "
                      "| 3 | 0.0 | 0.50 | 0.50–0.50 |", md)

    def test_no_batch_rows(self):
        self.folder(self.rows("8x8", 4, "-4", {"loop": [1]}))
        rc, err = self.spreport("batch", self.path("d"))
        self.assertEqual(rc, 1)
        self.assertIn("batch.csv: no batch rows", err)

    def test_a_process_missing(self):
        self.folder(self.peers())
        self.write("d/batch-set-runs.csv", self.RUNS)
        rc, err = self.spreport("batch", self.path("d"))
        self.assertEqual(rc, 1)
        self.assertIn("no process of homogeneous/warm/read-fresh", err)

    def test_pooled(self):
        os.makedirs(self.path("out"))
        for k in (1, 2):
            self.folder(self.peers())
            shutil.move(self.path("d"), self.path(f"out/session-{k}"))
        # the second session's images twice as long: mean span 3 ms
        second = self.read("out/session-2/batch-set.csv")
        self.write("out/session-2/batch-set.csv",
                   second.replace(",2000000,", ",4000000,"))
        rc, err = self.spreport("pool", "batch", self.path("out"),
                                self.path("out/session-1"),
                                self.path("out/session-2"))
        self.assertEqual((rc, err), (0, ""))
        for name, lines in (("batch.csv", 1 + 2 * 18),
                            ("batch-set-runs.csv", 1 + 2 * 8)):
            self.assertEqual(len(self.read(f"out/{name}").splitlines()),
                             lines, name)
        # one row an image is judged, not copied
        self.assertFalse(os.path.exists(self.path("out/batch-set.csv")))
        md = self.read("out/sessions.md")
        self.assertIn("## batch.csv: wall_ns by contender", md)
        self.assertIn("## batch-set.csv: span_ns by load", md)
        self.assertIn("| 8x8 4 -4 | batch | 11 (10–12) | 11 (10–12) "
                      "| 11–11 | ms | batch best in every session |", md)
        # the pooled rows and the sessions' images make the report
        with Figures():
            rc, err = self.spreport("batch", self.path("out"))
        self.assertEqual((rc, err), (0, ""))
        self.assertRegex(self.read("out/batch.md"),
                         r"\| homogeneous \| warm \| read-fresh \| 3\.00 "
                         r"\| 3\.00 \| 5\.00 \| 960 \| 0\.0 \| 3\.00 \| "
                         r"[0-9.]+–[0-9.]+ \|")

    def test_a_session_bad_number(self):
        os.makedirs(self.path("out"))
        for k in (1, 2):
            self.folder(self.peers())
            shutil.move(self.path("d"), self.path(f"out/session-{k}"))
        self.write("out/batch.csv", self.read("out/session-1/batch.csv"))
        self.write("out/batch-set-runs.csv",
                   self.read("out/session-1/batch-set-runs.csv"))
        second = self.read("out/session-2/batch-set.csv")
        self.write("out/session-2/batch-set.csv",
                   second.replace(",960,", ",x,", 1))
        rc, err = self.spreport("batch", self.path("out"))
        self.assertEqual(rc, 1)
        self.assertIn("session-2/batch-set.csv:2: minflt is not a number",
                      err)

    def test_no_images(self):
        self.folder(self.peers())
        os.remove(self.path("d/batch-set.csv"))
        rc, err = self.spreport("batch", self.path("d"))
        self.assertEqual(rc, 1)
        self.assertIn("batch-set.csv: no such file, nor session-*/ with one",
                      err)


# ---- peers ------------------------------------------------------------------

VERIFY = ("size\tjob\ttool\texpected\tresult\tdims\tdetail\tmaxdiff\tverdict"
          "\twall_ns\tmaxrss_kb\ttimed\n"
          "8x4\treduce2\tscaleppm\t\treference\t4x2\t\t-\t\t1\t1\tyes\n"
          "8x4\treduce2\tpamscale\tequal\tequal\t4x2\t-\t-\tas expected"
          "\t1\t1\tyes\n"
          "8x4\treduce2\tgm\tequal\tequal\t4x2\t-\t-\tas expected\t1\t1\tyes\n"
          "8x4\treduce2\tim\tequal\tskipped\t\t\t-\tnot run\t\t\t"
          "no: needs ~9 GB\n"
          "8x4\tenlarge2\tscaleppm\t\treference\t16x8\t\t-\t\t1\t1\tyes\n"
          "8x4\tenlarge2\tpamenlarge\tequal\tequal\t16x8\t-\t-\tas expected"
          "\t1\t1\tyes\n")


class Peers(Folder):
    def setUp(self):
        super().setUp()
        self.write("p/peers-verify.tsv", VERIFY)
        rows = ["size,job,tool,round,wall_ns,maxrss_kb"]
        for r, (sp, pam, gm, sp2, pe) in enumerate(
                [(1e6, 4e6, 5e6, 8e6, 10e6), (3e6, 6e6, 9e6, 9e6, 12e6),
                 (2e6, 5e6, 7e6, 7e6, 11e6)], start=1):
            rows += [f"8x4,reduce2,scaleppm,{r},{sp:.0f},1024",
                     f"8x4,reduce2,pamscale,{r},{pam:.0f},2048",
                     f"8x4,reduce2,gm,{r},{gm:.0f},4096",
                     f"8x4,enlarge2,scaleppm,{r},{sp2:.0f},3072",
                     f"8x4,enlarge2,pamenlarge,{r},{pe:.0f},2048"]
        self.write("p/peers.csv", "\n".join(rows) + "\n")
        scale = ["size,job,threads_arg,run,scale_ns,threads"]
        for job, ns in (("reduce2", 1000), ("enlarge2", 4000)):
            scale += [f"8x4,{job},default,{r},{ns * r},2" for r in (1, 2, 3)]
        scale += ["8x4,enlarge2,1,1,8000,1", "8x4,enlarge2,2,1,4000,2"]
        self.write("p/peers-scale.csv", "\n".join(scale) + "\n")
        self.write("cmds.tsv", "job\ttool\tcommand\nreduce2\tscaleppm\t"
                   "scaleppm -s -2 IN OUT\n")

    def test_tables(self):
        with Figures() as figs:
            # the memcpy rate is the median of sprun's: 1 GB/s
            rc, err = self.spreport("peers", "--memcpy", "3e9,0.5e9,1e9",
                                    "--input", "8x4:3", "--commands",
                                    self.path("cmds.tsv"), self.path("p"))
        self.assertEqual((rc, err), (0, ""))
        md = self.read("p/peers.md")
        # reduce 2: scaleppm 2 ms against pamscale's 5: 0.40, over 0.33;
        # enlarge 2: 8 against 11 (0.73) and RSS 3 MB against 2 (1.50×)
        self.assertIn("scaleppm meets 1 of 2 speed targets, ", md)
        # every target counted in the headline: the floor and the threads too
        self.assertRegex(md, r"(?m)^scaleppm meets 1 of 2 speed targets, "
                         r"\d+ of \d+ memory-floor targets and \d+ of \d+ "
                         r"thread-scaling targets")
        self.assertIn("| reduce 2 | **scaleppm** | 2.0 | 1.0-3.0 | 1.0 | "
                      "**0.40** | ≤ 0.33× fastest | no |", md)
        self.assertIn("| | pamscale | 5.0 | 4.0-6.0 | 2.0 | 1.00 | | |", md)
        self.assertIn("| | gm | 7.0 | 5.0-9.0 | 4.0 | 1.40 | | |", md)
        self.assertIn("| | im | | | | | not timed: needs ~9 GB | |", md)
        self.assertIn("| **0.73** | ≤ 0.8× fastest, RSS ≤ 2× its | "
                      "yes (RSS 1.50×) |", md)
        # the floor: reduce 2 reads ceil(4/2) rows of 8x3 bytes and writes
        # 4x2x3: 72 bytes at 2 GB/s is 36 ns; the median 2000 ns is 55.56x
        self.assertIn("| 8x4 | reduce 2 | 0.00 | 0.00 | 0.00 | 0.000 | "
                      "55.56 | no |", md)
        # -t 1 8000 ns against -t 2 4000: 2.00, over the target 1.7
        self.assertIn("| 8x4 | enlarge 2 | 0.01 | 0.00 | 2.00 | yes |", md)
        self.assertIn("(median of 3 copies of 256 MiB):\n1.00 GB/s.", md)
        self.assertIn("- 8x4 reduce 2, im: needs ~9 GB", md)
        self.assertIn("| reduce 2 | scaleppm | `scaleppm -s -2 IN OUT` |", md)
        ax, = figs.axes()
        heights = sorted(round(p.get_height(), 2) for p in ax.patches)
        self.assertEqual(heights, [0.4, 0.73])
        # whiskers: reduce 2, scaleppm's 1-3 ms against pamscale's 4-6 ms
        spans = sorted(tuple(round(y, 3) for _, y in seg)
                       for c in ax.containers if hasattr(c, "has_yerr")
                       for seg in c.lines[2][0].get_segments())
        self.assertIn((0.167, 0.75), spans)
        self.assertIn("8x4 images", ax.get_title())

    def test_bad_rate(self):
        for rate in ("1e9,x", "0", ""):
            rc, err = self.spreport("peers", "--memcpy", rate, "--input",
                                    "8x4:3", self.path("p"))
            self.assertEqual(rc, 1, rate)
            self.assertIn("--memcpy", err)

    def test_verification_only(self):
        rc, err = self.spreport("peers", "--input", "8x4:3", self.path("p"))
        self.assertEqual((rc, err), (0, ""))
        md = self.read("p/peers.md")
        self.assertIn("**Verification failed: nothing was timed.**", md)
        self.assertFalse(os.path.exists(self.path("p/peers.png")))


if __name__ == "__main__":
    unittest.main()
