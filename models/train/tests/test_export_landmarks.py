"""export_landmarks --version and gpu_import.sh's VERSION: an imported ensemble reports its own model_version."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from cardiac import export_landmarks  # noqa: E402

HERE = os.path.join(os.path.dirname(__file__), "..")


class TestFamilyVersion(unittest.TestCase):
    def test_sets_model_version_and_keeps_params(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cardiac.family.json")
            with open(path, "w") as f:
                json.dump({"model_version": "v3.2.0-synthetic-xraysim.1", "params": {"refine_margin": 0.2}}, f)
            export_landmarks.set_family_version(d, "v3.3.0-synthetic-xraysim2.1")
            with open(path) as f:
                fam = json.load(f)
            self.assertEqual(fam["model_version"], "v3.3.0-synthetic-xraysim2.1")
            self.assertEqual(fam["params"], {"refine_margin": 0.2})

    def test_refuses_a_version_that_hides_synthetic_training(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cardiac.family.json")
            with open(path, "w") as f:
                json.dump({"model_version": "v3.2.0-synthetic-xraysim.1"}, f)
            with self.assertRaises(ValueError):
                export_landmarks.set_family_version(d, "v3.3.0")
            with open(path) as f:
                self.assertEqual(json.load(f)["model_version"], "v3.2.0-synthetic-xraysim.1")

    def test_cli_refuses_before_exporting(self):
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([sys.executable, "-m", "cardiac.export_landmarks", "--models", d,
                                "--version", "v9", os.path.join(d, "missing.pt")], cwd=HERE, capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("synthetic", r.stderr)
            self.assertEqual(os.listdir(d), [])

    def test_gpu_import_needs_a_version(self):
        with tempfile.TemporaryDirectory() as d:
            env = {k: v for k, v in os.environ.items() if k != "VERSION"}
            r = subprocess.run(["bash", os.path.join(HERE, "gpu_import.sh"), d, d], capture_output=True, text=True, env=env)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("VERSION", r.stderr)
            self.assertEqual(os.listdir(d), [])

    def test_gpu_import_needs_all_five_members(self):
        with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as models:
            for k in (1, 2, 3, 5):  # member 4 lost on the device
                open(os.path.join(d, f"g_{k}.pt"), "wb").close()
            env = dict(os.environ, VERSION="v9-synthetic")
            r = subprocess.run(["bash", os.path.join(HERE, "gpu_import.sh"), d, models], capture_output=True, text=True, env=env)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("g_4.pt is missing", r.stderr)
            self.assertEqual(os.listdir(models), [])


if __name__ == "__main__":
    unittest.main()
