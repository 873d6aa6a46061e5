"""The cost model's arithmetic (scripts/spreport/model.py and
model_report.py) on a made-up table of unit costs, small geometries and
hand-made runs whose answers are worked out here by hand."""
import csv
import os
import tempfile
import unittest

from spreport import model, model_report

# Made-up unit costs, each distinct, so that a term taken from the wrong
# unit changes the answer.
UNITS = {
    "syscall": 100.0, "pread1": 200.0, "read_touched": 0.5,
    "anon_fault_process": 1000.0, "anon_fault_4k": 900.0,
    "anon_fault_2m": 50000.0, "mmap_munmap": 3000.0, "read_process": 2.0,
    "read_fresh": 1.5, "free_large": 70.0, "free_process": 80.0,
    "write_cached": 0.25,
    "file_fault_large": 4000.0, "file_pages_per_fault_large": 64.0,
    "file_fault_small": 2500.0, "file_pages_per_fault_small": 16.0,
    "madvise_file_large": 11.0, "madvise_file_small": 40.0,
    "madvise_call": 600.0, "madvise_call_shared": 3000.0,
    "wake_remote": 30000.0, "switch_local": 2000.0,
    "reduce2_px": 1.0, "reduce8_px": 4.0,
    "enlarge2_byte": 0.2, "enlarge8_byte": 0.08, "cpus": 2.0,
    "gate_t10": 20000.0, "reduce2_px_t10": 0.75, "reduce8_px_t10": 3.0,
    "enlarge2_byte_t10": 0.15, "enlarge8_byte_t10": 0.06,
    "file_fault_large_t10": 3000.0, "file_fault_small_t10": 1800.0,
    "anon_fault_2m_t10": 40000.0, "madvise_file_large_busy": 13.0,
    "madvise_file_small_busy": 45.0, "read_cold": 1.7,
    "mmap_cold_fault": 900000.0, "mmap_cold_pages_per_fault": 100.0,
    "anon_fault_4k_t10": 700.0, "enlarge2_byte_writing": 0.4,
    "enlarge8_byte_writing": 0.16, "first_malloc": 30000.0,
    "first_malloc_faults": 5.0, "load_open_first": 25000.0,
    "load_map_first": 7000.0, "release_unmap_first": 9000.0,
}


def write_units(path, units, size=None):
    """UNITS as spcost's CSV at PATH, one repeat each, measured at SIZE
    bytes (no bytes column without)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["unit", "value", "unit_of_measure", "rep"] +
                   (["bytes"] if size else []))
        for k, v in sorted(units.items()):
            w.writerow([k, v, "ns", 1] + ([size] if size else []))


class Units(unittest.TestCase):
    def test_held_out_sessions(self):
        paths = ["m/units-1.csv", "m/units-2.csv", "m/units-3.csv"]
        self.assertEqual(model.held_out(paths, "r/sun-x/session-2"),
                         ["m/units-1.csv", "m/units-3.csv"])
        self.assertEqual(model.held_out(paths, "r/sun-x"), paths)
        self.assertEqual(model.held_out(["m/units-1.csv"], "r/session-1"),
                         ["m/units-1.csv"])

    def test_sized_units_nearest_the_file(self):
        with tempfile.TemporaryDirectory() as d:
            small, big = (os.path.join(d, n) for n in ("a.csv", "b.csv"))
            write_units(small, {"free_process": 300.0, "syscall": 100.0},
                        4000000)
            write_units(big, {"free_process": 150.0, "syscall": 900.0},
                        360000000)
            u = model.read_units([small, big], 300000000)
            # free() a page at the big file's size, the call at the
            # smallest: it does not depend on the file.
            self.assertEqual(u["free_process"], 150.0)
            self.assertEqual(u["syscall"], 100.0)
            self.assertEqual(model.read_units([small, big], 3932177)
                             ["free_process"], 300.0)


class Plan(unittest.TestCase):
    def test_study_reduce_2(self):
        p = model.make_plan(1280, 1024, -2, 10)
        self.assertEqual((p.ow, p.oh, p.orow), (640, 512, 1920))
        # 512 KiB / 1920 is 273 rows; a thread's share is 52.
        self.assertEqual((p.rows, p.times, p.items, p.slots), (52, 1, 10, 20))
        self.assertEqual(p.chunk, 52 * 1920)

    def test_study_enlarge_8(self):
        p = model.make_plan(1280, 1024, 8, 10)
        # 524288 / 30720 = 17 rows, cut to whole source rows: 16.
        self.assertEqual((p.rows, p.times, p.chunk_rows), (16, 8, 2))
        self.assertEqual(p.items, 512)
        self.assertEqual(p.chunk, 2 * 30720)

    def test_grain(self):
        self.assertEqual(model.default_grain(3932177), 32768)
        self.assertEqual(model.default_grain(1 << 30), 2 << 20)
        self.assertEqual(model.default_grain(1000), 4096)


class Predict(unittest.TestCase):
    def test_read_load_and_release(self):
        # 64x32: a raster of 6144 bytes, two pages.
        r = model.predict(UNITS, (64, 32), -2, "read")
        # The open, fstat and header pread as a fresh process makes them;
        # the job's thread's first malloc with 5 of the 7 first touches,
        # the other 2 at anon_fault_process; an lseek and an fstat; the
        # raster's read.
        load = 25000 + 30000 + 2 * 1000 + 2 * 100 + 6144 * 2
        self.assertAlmostEqual(r["load"], load)
        self.assertEqual(load, 69488)
        self.assertAlmostEqual(r["release"], 2 * 80.0)
        self.assertEqual(r["load_faults"], 7 + 2)

    def test_mmap_load_and_release_calls(self):
        # The mmap path's load: the same open, malloc and touches, and
        # the mapping with its fstat, once, as a fresh process makes
        # them; its release ends with madvise, munmap and close, once.
        r = model.predict(UNITS, (64, 32), -2, "mmap")
        self.assertAlmostEqual(r["load"], 25000 + 30000 + 2 * 1000 + 7000)
        more = dict(UNITS, release_unmap_first=10000.0)
        self.assertAlmostEqual(
            model.predict(more, (64, 32), -2, "mmap")["release"] -
            r["release"], 1000.0)

    def test_total_is_the_phases(self):
        for m in ("read", "mmap"):
            r = model.predict(UNITS, (1280, 1024), -4, m, "small")
            self.assertAlmostEqual(r["total"],
                                   r["load"] + r["scale"] + r["release"])

    def test_mmap_faults_by_window(self):
        # The study's image: 3932177 bytes, pages 0..960.  A reduce by 8
        # reads rows 0, 8, ..., 1016, the last ending at byte 3905296 of
        # page 953: a row in each of the 16-page windows 0..59, none in
        # window 60; with 64-page windows, 0..14.
        r = model.predict(UNITS, (1280, 1024), -8, "mmap", "small")
        self.assertEqual(r["input_faults"], 60)
        r = model.predict(UNITS, (1280, 1024), -8, "mmap", "large")
        self.assertEqual(r["input_faults"], 15)
        # An enlarge reads every row, up to page 960.
        r = model.predict(UNITS, (1280, 1024), 2, "mmap", "small")
        self.assertEqual(r["input_faults"], 61)

    def test_sparse_rows_fault_less(self):
        # Rows of 36000 bytes, one in 8 read: 288000 bytes apart, so
        # windows of 16 pages (65536 bytes) in between are never read.
        r = model.predict(UNITS, (12000, 400), -8, "mmap", "small")
        self.assertLess(r["input_faults"], 400 * 36000 // 65536 // 2)

    def test_scale_of_a_reduce(self):
        # 640x512 output pixels at reduce2_px_t10, the gate once, half an
        # mmap+munmap, and the chunks' base pages (20 slots of 52 rows of
        # 1920 bytes: 1996800 bytes, under a huge page; the 10 items'
        # slots, 998400 bytes from the start, on 244 pages, at 10 threads
        # at once); the read path faults no input.
        r = model.predict(UNITS, (1280, 1024), -2, "read")
        scale = 640 * 512 * 0.75 + 20000 + 1500 + 244 * 700
        self.assertAlmostEqual(r["scale"], scale)

    def test_cold_costs_the_device(self):
        warm = model.predict(UNITS, (1280, 1024), -4, "read")
        cold = model.predict(UNITS, (1280, 1024), -4, "read", cache="cold")
        self.assertAlmostEqual(cold["load"] - warm["load"],
                               1280 * 1024 * 3 * (1.7 - 0.5))
        warm = model.predict(UNITS, (1280, 1024), -8, "mmap")
        cold = model.predict(UNITS, (1280, 1024), -8, "mmap", cache="cold")
        # Rows 0..1016 read: readahead brings pages 0..953, 954 of them.
        self.assertAlmostEqual(cold["scale"] - warm["scale"],
                               954 * 900000.0 / 100)

    def test_items_past_the_slots_beside_the_writer(self):
        # Enlarge by 8: 512 items, 20 slots.  The first 20 items' work at
        # 10 threads at once, the other 492 one at a time beside the
        # writer: the rest of the kernel at enlarge8_byte_writing.
        r = model.predict(UNITS, (1280, 1024), 8, "read")
        slow = dict(UNITS, enlarge8_byte_writing=0.32)
        r2 = model.predict(slow, (1280, 1024), 8, "read")
        self.assertAlmostEqual(r2["scale"] - r["scale"],
                               1024 * 30720 * 0.16 * 492 / 512)

    def test_no_output_no_wait_for_the_writer(self):
        # With no output (the study's span) no item waits for a slot the
        # writer frees: every item's work at 10 threads at once, and the
        # writing kernel's cost plays no part.
        quiet = model.predict(UNITS, (1280, 1024), 8, "read", written=False)
        slow = dict(UNITS, enlarge8_byte_writing=0.32)
        self.assertEqual(
            model.predict(slow, (1280, 1024), 8, "read",
                          written=False)["scale"], quiet["scale"])
        self.assertLess(quiet["scale"],
                        model.predict(UNITS, (1280, 1024), 8, "read")["scale"])

    def test_stand_ins_for_older_units(self):
        old = {k: v for k, v in UNITS.items()
               if k not in model.STAND_INS}
        u, missing = model.stand_ins(old)
        self.assertEqual(missing, sorted(model.STAND_INS))
        self.assertAlmostEqual(u["reduce2_px_t10"], 0.5)  # 1.0 over 2 CPUs
        self.assertEqual(u["gate_t10"], 30000.0)
        # the calls as a loop prices them
        self.assertAlmostEqual(u["load_open_first"],
                               2 * 100 + 200 + 8192 * 0.5)
        self.assertAlmostEqual(u["load_map_first"], 3000 / 2 + 100)
        self.assertAlmostEqual(u["release_unmap_first"],
                               600 + 3000 / 2 + 100)
        self.assertEqual(model.stand_ins(UNITS)[1], [])

    def test_kernel_cost_between_factors(self):
        self.assertAlmostEqual(model.lerp(UNITS, "reduce%d_px", 5), 2.5)
        self.assertAlmostEqual(model.lerp(UNITS, "reduce%d_px", 16), 4.0)

    def test_mmap_release_counts_drops(self):
        r = model.predict(UNITS, (1280, 1024), -2, "mmap", "small")
        # Ten items, nine boundaries, each past a new 32 KiB block.
        self.assertEqual(r["drop_calls"], 9)


class Report(unittest.TestCase):
    def write_runs(self, folder, rows):
        with open(os.path.join(folder, "runs.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["scale", "method", "load_ns", "scale_ns",
                        "release_ns", "load_minflt", "scale_minflt",
                        "cache", "page_cache", "image"])
            for r in rows:
                w.writerow(r + ["warm", "small", "sun1280x1024.ppm"])

    def test_compare_uses_median_totals(self):
        with tempfile.TemporaryDirectory() as d:
            self.write_runs(d, [
                [-2, "read", 3000, 500, 500, 960, 10],
                [-2, "read", 3000, 500, 500, 960, 10],
                [-2, "read", 90000, 500, 500, 960, 10],  # a stall
                [-2, "mmap", 100, 800, 100, 7, 70],
                [-2, "mmap", 100, 800, 100, 7, 70],
            ])
            units = os.path.join(d, "units.csv")
            write_units(units, UNITS)
            rows = model_report.compare([units], [d], None)
        self.assertEqual(len(rows), 1)
        r = rows[0]
        self.assertAlmostEqual(r["ratio_meas"], 4000 / 1000)
        self.assertAlmostEqual(r["ratio_err"],
                               r["ratio_pred"] / 4.0 - 1)
        self.assertTrue(r["modelled"])

    def test_figure_shows_every_folder(self):
        # six folders: every one in the legend, the legend inside the
        # picture; the title names the image, the threads and the cache
        from unittest import mock
        from matplotlib.figure import Figure
        rows = [{"folder": "sun-1280x1024-warm-%s/session-%d" % (k, n),
                 "modelled": True, "scale": s, "ratio_meas": 2.0 + n,
                 "ratio_pred": 2.5, "geometry": "1280x1024",
                 "cache": "warm", "page_cache": k}
                for k in ("large", "small") for n in (1, 2, 3)
                for s in (-2, 2)]
        drawn = []

        def keep(fig, *args, **kwargs):
            fig.canvas.draw()
            drawn.append((fig.get_window_extent(),
                          [(lg.get_window_extent(),
                            [t.get_text() for t in lg.get_texts()])
                           for lg in fig.legends],
                          fig._suptitle.get_text()))
        with mock.patch.object(Figure, "savefig", keep):
            model_report.figure("unused.png", rows, {"10"})
        (box, legends, title), = drawn
        (lbox, labels), = legends
        self.assertEqual(sorted(labels), sorted({r["folder"] for r in rows}))
        self.assertGreaterEqual(lbox.x0, box.x0)
        self.assertLessEqual(lbox.x1, box.x1)
        self.assertGreaterEqual(lbox.y0, box.y0)
        self.assertIn("1280x1024 image, 10 threads; warm, large page cache",
                      title)

    def test_worst_phase(self):
        # Predicted 2.0 (1000/500), measured 4.0: mmap's scale, measured
        # in place of predicted, gives 1000/250 exactly; its release
        # would make it worse (1000/750).
        r = {"ratio_meas": 4.0, "ratio_err": -0.5}
        for m, ph, pred, meas in [
                ("read", "load", 800, 810), ("read", "scale", 100, 100),
                ("read", "release", 100, 100), ("mmap", "load", 10, 10),
                ("mmap", "scale", 390, 140), ("mmap", "release", 100, 350)]:
            r["pred_%s_%s" % (ph, m)] = pred
            r["meas_%s_%s" % (ph, m)] = meas
        r["pred_total_read"], r["pred_total_mmap"] = 1000, 500
        found, err = model_report.worst_phase(r)
        self.assertEqual(found, ("scale", "mmap"))  # 1000/250 = 4.0
        self.assertAlmostEqual(err, 0.0)

    def test_sun_pages(self):
        # One byte a pixel: 1310720 bytes, 160 pages of 8 KiB.
        self.assertEqual(model_report.sun_pages(2), 160)
        self.assertLess(model_report.sun_pages(8), 160)

    def test_sun_fit_recovers_known_costs(self):
        a, m, s = 1.0, 0.002, 1e-5
        table = {}
        for n in (2, 3, 4, 8):
            px = len(range(0, 1024, n)) * len(range(0, 1280, n))
            table[n] = (a + s * px, m * model_report.sun_pages(n) + s * px)
        fa, fm, fs, fit, _ = model_report.sun_2002(table)
        self.assertAlmostEqual(fa, a, places=6)
        self.assertAlmostEqual(fm, m, places=8)
        self.assertAlmostEqual(fs, s, places=10)
        self.assertAlmostEqual(fit[8], table[8][0] / table[8][1])


class Touched(unittest.TestCase):
    """The bytes each path touches, on a 1024x16 image counted by hand:
    rows of 3072 bytes after a 15-byte header ("P6\\n1024 16\\n255\\n"),
    a file of 49167 bytes on 13 pages.  A reduce by 4 reads rows 0, 4,
    8 and 12, at bytes 15-3086, 12303-15374, 24591-27662, 36879-39950:
    pages 0, 3, 6 and 9."""
    GEO = (1024, 16)

    def test_read_copies_the_raster(self):
        t = model.touched(UNITS, self.GEO, -4, "small")
        self.assertEqual(model.header_bytes(1024, 16), 15)
        self.assertEqual(t["file_bytes"], 49167)
        self.assertEqual(t["read_copy_bytes"], 49152)
        # 12 pages of raster and the load's 7, as predict counts them.
        self.assertEqual(t["read_load_pages"], 19)
        p = model.predict(UNITS, self.GEO, -4, "read", "small")
        self.assertEqual(t["read_load_pages"], p["load_faults"])

    def test_reduce_reads_one_row_in_four(self):
        t = model.touched(UNITS, self.GEO, -4, "small")
        self.assertEqual(t["mmap_input_bytes"], 4 * 3072)
        t = model.touched(UNITS, self.GEO, 2, "small")
        self.assertEqual(t["mmap_input_bytes"], 16 * 3072)

    def test_pages_mapped_by_window(self):
        def faults(per):
            u = dict(UNITS, file_pages_per_fault_small=per)
            t = model.touched(u, self.GEO, -4, "small")
            return t["mmap_input_faults"], t["mmap_mapped_pages"]
        # One page a fault: the four pages read.
        self.assertEqual(faults(1), (4, 4))
        # Windows of 4 pages: 0-3 (pages 0, 3), 4-7 (6), 8-11 (9).
        self.assertEqual(faults(4), (3, 12))
        # Windows of 16: one, cut at the file's 13 pages.
        self.assertEqual(faults(16), (1, 13))

    def test_settings_of(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(model.settings_of(d), {})
            with open(os.path.join(d, "env.txt"), "w") as f:
                f.write("page size: 4096\nsettings: suite=sun threads=10 "
                        "fault_around_pages=512 folios=4:1,2048:1,"
                        "uncached:0\n")
            env = model.settings_of(d)
        self.assertEqual(env["fault_around_pages"], "512")
        self.assertEqual(env["folios"], "4:1,2048:1,uncached:0")
        self.assertEqual(env["threads"], "10")

    def make_case(self, root, fault_around=2):
        """Two sessions of one case, one run a path each."""
        runs = {1: [[-4, "read", 10, 5], [-4, "mmap", 7, 8]],
                2: [[-4, "read", 12, 5], [-4, "mmap", 7, 10]]}
        case = os.path.join(root, "sun-1024x16-warm-small")
        out = []
        for n, rs in runs.items():
            d = os.path.join(case, "session-%d" % n)
            os.makedirs(d)
            out.append(d)
            with open(os.path.join(d, "env.txt"), "w") as f:
                f.write("settings: fault_around_pages=%s folios=4:13\n"
                        % fault_around)
            with open(os.path.join(d, "runs.csv"), "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["scale", "method", "load_minflt",
                            "scale_minflt", "threads", "cache",
                            "page_cache", "image"])
                for r in rs:
                    w.writerow(r + [10, "warm", "small", "gen1024x16.ppm"])
        return out

    def test_rows_pool_the_sessions(self):
        with tempfile.TemporaryDirectory() as d:
            rows = model_report.touched_rows(UNITS, self.make_case(d))
        self.assertEqual(len(rows), 1)
        r = rows[0]
        self.assertEqual((r["case"], r["sessions"], r["runs_read"]),
                         ("sun-1024x16-warm-small", 2, 2))
        self.assertEqual(r["fault_around_pages"], 2)
        self.assertAlmostEqual(r["meas_read_load_pages"], 11)
        self.assertAlmostEqual(r["meas_read_load_bytes"], 11 * 4096)
        self.assertAlmostEqual(r["meas_read_buffer_pages"], 4)
        self.assertEqual(r["geo_read_load_bytes"], 19 * 4096)
        self.assertAlmostEqual(r["meas_mmap_scale_faults"], 9)
        self.assertAlmostEqual(r["meas_mmap_input_faults"], 4)
        # 9 faults of 2 pages: 18, more than the file's 13 pages; the
        # input's 4 faults: 8 pages.
        self.assertAlmostEqual(r["meas_mmap_mapped_bytes_max"], 13 * 4096)
        self.assertAlmostEqual(r["meas_mmap_input_mapped_bytes_max"],
                               8 * 4096)
        # UNITS' 16 pages a fault: one fault, all 13 pages.
        self.assertEqual(r["pred_mmap_input_faults"], 1)
        self.assertEqual(r["pred_mmap_mapped_bytes"], 13 * 4096)

    def test_no_fault_around_no_bound(self):
        with tempfile.TemporaryDirectory() as d:
            rows = model_report.touched_rows(UNITS, self.make_case(d, "?"))
        self.assertIsNone(rows[0]["meas_mmap_mapped_bytes_max"])
        self.assertIn("| -4 | 48 | 11.0 / 19 | 12 | 52 (1) | 9.0 (4.0) | "
                      "– (–) |", model_report.touched_table(rows))

    def test_section_says_where_they_disagree(self):
        with tempfile.TemporaryDirectory() as d:
            rows = model_report.touched_rows(UNITS, self.make_case(d))
        text = "\n".join(model_report.touched_section(UNITS, rows))
        self.assertIn("### sun-1024x16-warm-small", text)
        self.assertIn("| -4 | 48 | 11.0 / 19 | 12 | 52 (1) | 9.0 (4.0) | "
                      "52 (32) |", text)
        # 16 pages a fault in the model, 2 in the sessions.
        self.assertIn("16 in the model", text)
        self.assertIn("2 in the sessions", text)
        self.assertIn("they disagree", text)
        # 4 input faults measured, 1 predicted.
        self.assertIn("-4: 4.0, 1 (measured, predicted)", text)
        # The input's 4 faults of 2 pages cannot map the 13 predicted.
        self.assertIn("could not map the pages predicted at -4", text)

    def test_main_writes_bytes_csv(self):
        with tempfile.TemporaryDirectory() as d:
            folders = self.make_case(d)
            units = os.path.join(d, "units.csv")
            with open(units, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["unit", "value"])
                w.writerows(sorted(UNITS.items()))
            out = os.path.join(d, "out")
            for folder in folders:  # compare's columns too
                path = os.path.join(folder, "runs.csv")
                with open(path, newline="") as f:
                    rs = list(csv.DictReader(f))
                with open(path, "w", newline="") as f:
                    w = csv.DictWriter(f, list(rs[0]) + [
                        "load_ns", "scale_ns", "release_ns"])
                    w.writeheader()
                    for r in rs:
                        w.writerow(dict(r, load_ns=1000, scale_ns=1000,
                                        release_ns=1000))
            model.main(["--units", units, "--out", out] + folders)
            with open(os.path.join(out, "bytes.csv"), newline="") as f:
                rows = list(csv.DictReader(f))
            with open(os.path.join(out, "model.md")) as f:
                md = f.read()
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0]["geo_read_copy_bytes"], "49152")
        self.assertEqual(rows[0]["meas_read_load_bytes"], str(11 * 4096))
        self.assertIn("## Bytes each path touches", md)
        self.assertLess(md.index("## Bytes each"), md.index("## Unit costs"))


if __name__ == "__main__":
    unittest.main()
