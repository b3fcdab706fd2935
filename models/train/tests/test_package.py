"""pyproject.toml names every module and subpackage of models/train, so
the distribution holds what the Makefile, the scripts and docs run."""
import os
import tomllib
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TestPackage(unittest.TestCase):
    def test_every_module_listed(self):
        with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
            st = tomllib.load(f)["tool"]["setuptools"]
        listed = set(st["py-modules"])
        present = {n[:-3] for n in os.listdir(HERE) if n.endswith(".py")}
        self.assertEqual(sorted(present - listed), [], "modules missing from pyproject.toml's py-modules")
        self.assertEqual(sorted(listed - present), [], "py-modules that are not files")
        packages = set(st["packages"])
        present = {d for d in os.listdir(HERE) if os.path.isfile(os.path.join(HERE, d, "__init__.py"))}
        self.assertEqual(sorted(present - packages), [], "subpackages missing from pyproject.toml's packages")
        self.assertEqual(sorted(packages - present), [], "packages that are not folders with __init__.py")
        for d in present:
            loose = [n for n in os.listdir(os.path.join(HERE, d)) if os.path.isdir(os.path.join(HERE, d, n))
                     and n != "__pycache__" and any(f.endswith(".py") for f in os.listdir(os.path.join(HERE, d, n)))]
            self.assertEqual(loose, [], f"{d}: nested folders of modules pyproject.toml does not name")


if __name__ == "__main__":
    unittest.main()
