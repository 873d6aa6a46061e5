"""src/'s folders are its layers: each file includes only headers of its
own folder or of the folders its folder's README.md says it may use, and
no module (a .c and its .h) reaches itself again through its includes.
The installed header, api/scaleppm.h, is no layer's: it includes nothing
and every folder may include it (its status codes are everyone's)."""
import os
import re
import unittest

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), "src")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
MAY_USE = re.compile(r"^May use: (.*?)\.$", re.M)
PUBLIC = "scaleppm.h"


def folders():
    """Every folder of src/ that holds C files, relative to src/."""
    out = []
    for d, _, files in os.walk(SRC):
        if any(f.endswith((".c", ".h")) for f in files):
            out.append(os.path.relpath(d, SRC))
    return sorted(out)


def may_use(folder):
    """The folders FOLDER's README.md says it may use."""
    with open(os.path.join(SRC, folder, "README.md")) as f:
        m = MAY_USE.search(f.read())
    if not m:
        raise AssertionError(f"src/{folder}/README.md has no 'May use: "
                             "...' line")
    words = [w.strip() for w in m.group(1).split(",")]
    return set() if words == ["nothing"] else set(words)


def files():
    """(folder, name, the quoted headers it includes) of every C file."""
    for folder in folders():
        for name in sorted(os.listdir(os.path.join(SRC, folder))):
            if name.endswith((".c", ".h")):
                with open(os.path.join(SRC, folder, name)) as f:
                    yield folder, name, INCLUDE.findall(f.read())


def home():
    """Each header's folder, by its name."""
    out = {}
    for folder, name, _ in files():
        if name.endswith(".h") and name != PUBLIC:
            out[name] = folder
    return out


def module(name):
    return os.path.splitext(name)[0]


def cycle(graph):
    """A cycle of GRAPH (node -> set of nodes), as a list, or None."""
    state = {}

    def visit(n, path):
        state[n] = 1
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return path[path.index(m):] + [m]
            if m not in state:
                found = visit(m, path + [m])
                if found:
                    return found
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n, [n])
            if found:
                return found
    return None


class Layers(unittest.TestCase):
    def test_every_folder_says_what_it_may_use(self):
        known = set(folders())
        for folder in known:
            for used in may_use(folder):
                self.assertIn(used, known, f"src/{folder}/README.md names "
                              f"'{used}', which is no folder of src/")

    def test_includes_follow_the_layers(self):
        where = home()
        for folder, name, headers in files():
            allowed = may_use(folder) | {folder}
            for h in headers:
                h = os.path.basename(h)
                if h not in where:
                    continue   # a library's, or a test's
                self.assertIn(where[h], allowed,
                              f"src/{folder}/{name} includes {h} of "
                              f"src/{where[h]}/, which src/{folder}/README.md "
                              "does not say it may use")

    def test_the_public_header_includes_nothing_of_src(self):
        for folder, name, headers in files():
            if name == PUBLIC:
                self.assertEqual(headers, [], f"src/{folder}/{name} "
                                 "includes headers of src/")

    def test_the_layers_form_no_cycle(self):
        graph = {f: may_use(f) for f in folders()}
        self.assertIsNone(cycle(graph))

    def test_no_module_includes_itself_again(self):
        where = home()
        graph = {}
        for folder, name, headers in files():
            a = (folder, module(name))
            for h in headers:
                b = (where.get(os.path.basename(h)), module(
                    os.path.basename(h)))
                if b[0] is not None and b != a:
                    graph.setdefault(a, set()).add(b)
        found = cycle(graph)
        self.assertIsNone(found, "a cycle of includes: " + " -> ".join(
            f"{f}/{m}" for f, m in found or []))

    def test_the_check_finds_a_cycle(self):
        self.assertEqual(cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}),
                         ["a", "b", "c", "a"])
        self.assertIsNone(cycle({"a": {"b"}, "b": {"c"}, "c": set()}))


if __name__ == "__main__":
    unittest.main()
