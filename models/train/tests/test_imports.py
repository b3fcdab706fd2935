"""The layout of models/train (issue 44), checked on the files themselves:

- no import cycle between modules, nor between subpackages (sim, cardiac,
  pop, usg, experiments, and make_manifest at the top). A module that
  needs another's helpers imports it, never the other way round as well,
  so a leaf (pop.geometry, cardiac.version, ...) can be read and tested
  alone. Imports inside functions count too: a deferred import hides a
  cycle, it does not remove it;
- nothing outside experiments/ imports experiments/;
- every module outside experiments/ is reached: run by the Makefile, a
  shell script or Go code of the repository (`python3 -m cardiac.learn`,
  `models/train/make_manifest.py`, `from sim import xraysim` in a
  here-document), or imported by a test, or imported by a module that is.
  Comments do not count. A module in experiments/ is reached by none of
  them: one that is belongs in its subpackage."""
import ast
import os
import re
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # models/train
ROOT = os.path.dirname(os.path.dirname(HERE))  # the repository
EXPERIMENTS = "experiments"
SKIP_DIRS = {"__pycache__", "node_modules", "vendor", "build", "dist", "data", "checkpoints", "runs", "test-output"}


def modules(top=HERE):
    """{dotted name: path} of the modules of models/train: its top-level
    .py files and the modules of its subpackages (not tests, not
    __init__.py)."""
    mods = {}
    for n in os.listdir(top):
        p = os.path.join(top, n)
        if n.endswith(".py"):
            mods[n[:-3]] = p
        elif n != "tests" and os.path.isfile(os.path.join(p, "__init__.py")):
            for f in os.listdir(p):
                if f.endswith(".py") and f != "__init__.py":
                    mods[n + "." + f[:-3]] = os.path.join(p, f)
    return mods


def imported(tree, mods, package=""):
    """The modules of mods that the parsed tree imports, anywhere in it."""
    deps = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                deps |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1] if package else []
                base = ".".join(up + ([base] if base else []))
            deps.add(base)
            deps |= {base + "." + a.name if base else a.name for a in node.names}
    return deps & set(mods)


def module_imports(mods=None):
    """{module: set of modules of models/train it imports}."""
    mods = mods or modules()
    graph = {}
    for m, path in mods.items():
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        graph[m] = imported(tree, mods, m.rpartition(".")[0]) - {m}
    return graph


def package_imports(graph):
    """{subpackage (or top-level module): the others its modules import}."""
    pk = {}
    for m, deps in graph.items():
        p = m.split(".")[0]
        pk.setdefault(p, set()).update(d.split(".")[0] for d in deps)
        pk[p].discard(p)
    return pk


def find_cycle(graph):
    """One import cycle as a list of modules, or None."""
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state:
                c = visit(d)
                if c:
                    return c
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            c = visit(m)
            if c:
                return c
    return None


def strip_comments(text, kind):
    """text without its comments: whole `#` lines of shell and Makefiles
    (a recipe's comment too), and `//` and /* */ comments of Go outside
    string literals (Go's strings are kept whole: a raw string may hold a
    Python script)."""
    if kind == "shell":
        return "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c in "\"'`":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if c != "`" and text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def referenced(text, mods):
    """The modules of mods that text runs or imports: `-m pkg.mod` (and a
    Go argument list's "pkg.mod"), a path ending in pkg/mod.py or, for a
    top-level module, mod.py, and `from pkg import mod` / `import pkg.mod`
    (a here-document or an inline script)."""
    found = set()
    for m in mods:
        pkg, _, name = m.rpartition(".")
        if name not in text:
            continue
        dotted = re.escape(m)
        pats = [r"(?<![\w./-])" + dotted + r"(?![\w.])",
                r"(?<![\w.])" + re.escape(m.replace(".", "/")) + r"\.py\b"]
        if pkg:
            pats.append(r"\bfrom\s+" + re.escape(pkg) + r"\s+import\s+[\w\s,()]*\b" + re.escape(name) + r"\b")
            pats.append(r"\bfrom\s+" + dotted + r"\s+import\b")
        else:
            pats.append(r"\bimport\s+" + dotted + r"\b")
        if any(re.search(p, text) for p in pats):
            found.add(m)
    return found


def entry_points(mods, root=ROOT, tests=os.path.join(HERE, "tests")):
    """{module: the files it is run or imported from}: the Makefile, the
    repository's shell scripts and Go files, and the tests' imports and
    string constants (`-m cardiac.learn`), this file's examples left out."""
    where = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith(".") and x not in SKIP_DIRS]
        for f in files:
            kind = "shell" if f == "Makefile" or f.endswith(".sh") else "go" if f.endswith(".go") else None
            if not kind:
                continue
            p = os.path.join(d, f)
            with open(p, errors="replace") as fh:
                text = strip_comments(fh.read(), kind)
            for m in referenced(text, mods):
                where.setdefault(m, set()).add(os.path.relpath(p, root).replace(os.sep, "/"))
    for f in sorted(os.listdir(tests)):
        if not f.endswith(".py") or f == os.path.basename(__file__):
            continue
        p = os.path.join(tests, f)
        with open(p) as fh:
            tree = ast.parse(fh.read(), p)
        found = imported(tree, mods)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found |= referenced(node.value, mods)
        for m in found:
            where.setdefault(m, set()).add("models/train/tests/" + f)
    return where


def reached(entries, graph):
    """The modules the entries import, transitively, with the entries."""
    seen, todo = set(), list(entries)
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(graph.get(m, ()))
    return seen


def in_experiments(m):
    return m.split(".")[0] == EXPERIMENTS


class TestImports(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mods = modules()
        cls.graph = module_imports(cls.mods)

    def test_no_cycles(self):
        c = find_cycle(self.graph)
        self.assertIsNone(c, "import cycle: " + " -> ".join(c or []))

    def test_no_cycles_between_subpackages(self):
        pk = package_imports(self.graph)
        self.assertEqual(set(pk), {"sim", "cardiac", "pop", "usg", "experiments", "make_manifest"})
        c = find_cycle(pk)
        self.assertIsNone(c, "subpackage cycle: " + " -> ".join(c or []))

    def test_nothing_imports_experiments(self):
        bad = sorted(f"{m} imports {d}" for m, deps in self.graph.items() if not in_experiments(m)
                     for d in deps if in_experiments(d))
        self.assertEqual(bad, [])

    def test_every_module_is_reached(self):
        where = entry_points(self.mods)
        live = {m for m in where if not in_experiments(m)}
        got = reached(live, self.graph)
        stray = sorted(m for m in self.mods if not in_experiments(m) and m not in got)
        self.assertEqual(stray, [], "modules no Makefile target, shell script, Go code or test reaches "
                                    "(run them from one, or move them to experiments/)")
        run = sorted(f"{m} ({', '.join(sorted(where[m]))})" for m in where if in_experiments(m))
        self.assertEqual(run, [], "experiments run by a target, script, Go code or test: move them out")
        # the check sees the real entry points, not just everything
        self.assertIn("platform/trainer/trainer.go", where.get("cardiac.learn", ()))
        self.assertIn("Makefile", where.get("sim.heldout", ()))
        self.assertIn("models/train/train_pop.sh", where.get("pop.traindata", ()))


class TestChecker(unittest.TestCase):
    def test_finds_a_cycle(self):
        self.assertEqual(find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}), ["a", "b", "c", "a"])
        self.assertIsNone(find_cycle({"a": {"b"}, "b": set()}))

    def test_package_graph(self):
        g = {"pop.composites": {"pop.variety", "sim.phantom"}, "sim.phantom": set(), "cardiac.learn": {"sim.phantom"},
             "sim.xraysim": {"cardiac.version"}}
        self.assertEqual(package_imports(g), {"pop": {"sim"}, "sim": {"cardiac"}, "cardiac": {"sim"}})
        self.assertEqual(find_cycle(package_imports(g)), ["cardiac", "sim", "cardiac"])

    def test_imported(self):
        mods = {"sim.phantom": "", "pop.geometry": "", "pop.variety": "", "make_manifest": ""}
        tree = ast.parse("import os\nfrom sim import phantom as p\ndef f():\n    from pop.geometry import rot\n"
                         "    from . import variety\nimport make_manifest\n")
        self.assertEqual(imported(tree, mods, "pop"), {"sim.phantom", "pop.geometry", "pop.variety", "make_manifest"})

    def test_referenced(self):
        mods = {"sim.heldout": "", "sim.tilt": "", "cardiac.refine": "", "pop.train": "", "make_manifest": ""}
        self.assertEqual(referenced("cd models/train && $(PY) -m sim.heldout --n 2", mods), {"sim.heldout"})
        self.assertEqual(referenced("$(PY) models/train/make_manifest.py models", mods), {"make_manifest"})
        self.assertEqual(referenced("python3 - <<PY\nfrom sim import tilt, heldout\nPY", mods), {"sim.tilt", "sim.heldout"})
        self.assertEqual(referenced('run("-m", "cardiac.refine", "--n", "4")', mods), {"cardiac.refine"})
        # a Go file's path or package is not a run of the Python module
        self.assertEqual(referenced("engine/cardiac/refine.go: cardiac.refineCrop; vetlens/engine/pop.train", mods), set())
        self.assertEqual(referenced("$PY pop/train.py --model x", mods), {"pop.train"})

    def test_comments_do_not_count(self):
        go = 'x := 1 // python3 -m sim.heldout\n/* -m sim.tilt */ s := "-m cardiac.refine // kept"\n'
        self.assertEqual(referenced(strip_comments(go, "go"), {"sim.heldout": "", "sim.tilt": "", "cardiac.refine": ""}),
                         {"cardiac.refine"})
        sh = "# $PY -m sim.heldout\n\t# -m sim.tilt\n$PY -m cardiac.refine\n"
        self.assertEqual(referenced(strip_comments(sh, "shell"), {"sim.heldout": "", "sim.tilt": "", "cardiac.refine": ""}),
                         {"cardiac.refine"})

    def test_reached(self):
        self.assertEqual(reached({"a"}, {"a": {"b"}, "b": {"c"}, "d": {"a"}}), {"a", "b", "c"})


if __name__ == "__main__":
    unittest.main()
