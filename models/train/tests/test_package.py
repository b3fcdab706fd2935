"""pyproject.toml's py-modules names every module of models/train, so the
package holds what the Makefile and docs run."""
import os
import tomllib
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TestPackage(unittest.TestCase):
    def test_every_module_listed(self):
        with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
            listed = set(tomllib.load(f)["tool"]["setuptools"]["py-modules"])
        present = {n[:-3] for n in os.listdir(HERE) if n.endswith(".py")}
        self.assertEqual(sorted(present - listed), [], "modules missing from pyproject.toml's py-modules")
        self.assertEqual(sorted(listed - present), [], "py-modules that are not files")


if __name__ == "__main__":
    unittest.main()
