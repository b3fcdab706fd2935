"""heldout: --offset moves every seed, so a trial can be judged on a set nothing has read."""
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from sim import heldout  # noqa: E402
from sim import phantom  # noqa: E402


class _SerialPool:
    """multiprocessing.Pool's map, in this process (the patches hold)."""

    def __init__(self, *_):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *_):
        return False

    def map(self, f, args, chunksize=1):
        return [f(a) for a in args]


class TestOffset(unittest.TestCase):
    def seeds(self, *flags):
        seen = []

        def fake(seed, w, h, heldout=False):
            seen.append(seed)
            pts = {k: (1.0, 2.0) for k in ("heart_top", "heart_bottom", "Vertebra A", "Vertebra B")}
            return Image.new("L", (8, 8)), pts, {"vhs": 10.0, "vlas": 2.0}

        with tempfile.TemporaryDirectory() as out, \
                mock.patch.object(heldout, "Pool", _SerialPool), \
                mock.patch.object(phantom, "generate", fake), \
                mock.patch.object(sys, "argv", ["heldout", "--out", out, "--n", "3", "--negatives", "0",
                                                "--generator", "phantom", *flags]):
            heldout.main()
            with open(os.path.join(out, "truth.json")) as f:
                desc = json.load(f)["generator"]
        return seen, desc

    def test_offset_moves_every_seed(self):
        base, _ = self.seeds()
        moved, desc = self.seeds("--offset", "9000000")
        self.assertEqual(base, [phantom.HELDOUT_SEED_BASE + i for i in range(3)])
        self.assertEqual(moved, [s + 9_000_000 for s in base])
        self.assertIn(str(phantom.HELDOUT_SEED_BASE + 9_000_000), desc)

    def test_offset_adds_to_validation(self):
        val, _ = self.seeds("--validation")
        both, _ = self.seeds("--validation", "--offset", "1000")
        self.assertEqual(both, [s + 1000 for s in val])
        self.assertNotEqual(val[0], phantom.HELDOUT_SEED_BASE)


if __name__ == "__main__":
    unittest.main()
