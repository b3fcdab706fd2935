"""train_gpu member --init-onnx: continue a shipped member with its BatchNorm statistics fixed."""
import os
import sys
import tempfile
import time
import unittest
from unittest import mock

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from cardiac import train_gpu  # noqa: E402
from cardiac import train_landmarks as T  # noqa: E402

SHIPPED = os.path.join(os.path.dirname(__file__), "..", "..", "cardiac_landmark_1.onnx")


@unittest.skipUnless(os.path.exists(SHIPPED), "no shipped landmark member")
class TestMemberFromONNX(unittest.TestCase):
    def test_continues_shipped_member_with_fixed_statistics(self):
        torch.set_num_threads(2)
        r = np.random.default_rng(0)
        n, S = 10, 224
        with tempfile.TemporaryDirectory() as d:
            data = os.path.join(d, "tiny.npz")
            lm = np.stack([r.uniform(0.2, 0.8, (T.K, 2)) for _ in range(n)]).astype(np.float32)
            np.savez(data, images=r.integers(0, 256, (n, S, S), dtype=np.uint8), landmarks=lm,
                     mask=np.ones((n, T.K), np.float32))
            out = os.path.join(d, "m.pt")
            argv = ["train_gpu.py", "member", "--data", data, "--seed", "3", "--out", out,
                    "--init-onnx", SHIPPED, "--max-rot", "30", "--batch", "2", "--every", "1000",
                    "--device", "cpu", "--deadline", str(time.time() + 4)]
            with mock.patch.object(sys, "argv", argv):
                train_gpu.main()
            ck = torch.load(out, map_location="cpu")
            self.assertTrue(ck["frozen_bn"])
            self.assertEqual(ck["max_rot_deg"], 30.0)
            self.assertTrue(ck["init_onnx"].endswith("cardiac_landmark_1.onnx"))
            self.assertGreaterEqual(ck["step"], 1)
            # The export folded BatchNorm into the convolutions: its
            # statistics must still be the identity's after training.
            means = [v for k, v in ck["state"].items() if k.endswith("running_mean")]
            self.assertTrue(means)
            for v in means:
                self.assertEqual(float(v.abs().max()), 0.0)


if __name__ == "__main__":
    unittest.main()
