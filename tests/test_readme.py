"""spreport.readme: generated blocks are rewritten from their files, and a
figure is accepted only where its paragraph names a file that holds it."""
import os
import tempfile
import unittest

from spreport import readme


class Readme(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.data = os.path.join(self.dir.name, "t.md")
        with open(self.data, "w") as f:
            f.write("# t\n\n## A\n\n| x | 2.87 |\n\n### A1\n\nin A\n\n"
                    "## B\n\n| y | 4.43 |\n")

    def tearDown(self):
        self.dir.cleanup()

    def test_figures(self):
        got = readme.figures("-s -4 of 1280x1024 took 1-1.5 ms, 2.87 "
                             "(2.61-3.16); 4 KiB, 60 s, 3x, `-s 2.5`, 10%")
        self.assertEqual(got, ["1.5", "2.87", "2.61", "3.16", "60", "3",
                               "10"])

    def test_include_section_stops_at_same_level(self):
        got = readme.include(self.data, "A")
        self.assertEqual(got, ["| x | 2.87 |", "", "### A1", "", "in A"])
        self.assertEqual(readme.include(self.data, "B"), ["| y | 4.43 |"])
        with self.assertRaises(ValueError):
            readme.include(self.data, "C")

    def test_regenerate_rewrites_block(self):
        lines = ["intro", f"<!-- generated: include {self.data} B -->",
                 "| y | 9.99 |", readme.END, "after"]
        got = readme.regenerate(lines)
        self.assertEqual(got[2], "| y | 4.43 |")
        self.assertEqual(got[-1], "after")
        with self.assertRaises(ValueError):
            readme.regenerate(lines[:3])

    def test_numbers_found_or_refused(self):
        ok = ["mmap wins by 2.87 here.", f"<!-- numbers: {self.data} -->"]
        self.assertEqual(readme.check_numbers("r", ok), [])
        bad = ["mmap wins by 2.88 here.", f"<!-- numbers: {self.data} -->"]
        self.assertEqual(len(readme.check_numbers("r", bad)), 1)
        bare = ["took 3.5 ms", "", "no figure here"]
        errs = readme.check_numbers("r", bare)
        self.assertEqual(len(errs), 1)
        self.assertIn("r:1", errs[0])

    def test_code_and_generated_blocks_are_not_checked(self):
        lines = ["```", "took 3.5 ms", "```", "",
                 f"<!-- generated: include {self.data} B -->",
                 "| y | 4.43 |", readme.END]
        self.assertEqual(readme.check_numbers("r", lines), [])

    def test_sessions_table(self):
        d = os.path.join(self.dir.name, "sun-64x64-warm-small")
        os.makedirs(d)
        with open(os.path.join(d, "sessions.csv"), "w") as f:
            f.write("scale,session,ratio,ratio_lo,ratio_hi\n"
                    "-2,s1,2.5,2,3\n-2,s2,1.5,1,2\n"
                    "2,s1,0.9,0.8,1\n2,s2,1.2,1,1.4\n")
        got = readme.sessions("-2,-8,2", [d])
        self.assertEqual(got[0], "| case | ÷2 | ÷8 | ×2 |")
        self.assertEqual(got[2], "| Sun 2002 (Ultra 30) | 1.14 | 2.03 |  |")
        self.assertEqual(got[3], "| 64x64, warm, 4 KiB pages | 1.50–2.50 "
                                 "|  | 0.90–1.20 † |")


if __name__ == "__main__":
    unittest.main()
