"""The trainer modules import one another without cycles (issue 44): a
module that needs another's helpers imports it, never the other way round
as well, so a leaf (pop_geometry, version, ...) can be read and tested
alone. Imports inside functions count too: a deferred import hides a cycle,
it does not remove it."""
import ast
import os
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def module_imports():
    """{module: set of this package's top-level modules it imports}."""
    mods = {f[:-3] for f in os.listdir(HERE) if f.endswith(".py")}
    mods |= {d for d in os.listdir(HERE) if os.path.isfile(os.path.join(HERE, d, "__init__.py"))} - {"tests"}
    graph = {}
    for m in mods:
        path = os.path.join(HERE, m + ".py")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                deps |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                deps.add(node.module.split(".")[0])
        graph[m] = (deps & mods) - {m}
    return graph


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


class TestImports(unittest.TestCase):
    def test_no_cycles(self):
        c = find_cycle(module_imports())
        self.assertIsNone(c, "import cycle: " + " -> ".join(c or []))

    def test_finds_a_cycle(self):
        self.assertEqual(find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}), ["a", "b", "c", "a"])
        self.assertIsNone(find_cycle({"a": {"b"}, "b": set()}))


if __name__ == "__main__":
    unittest.main()
