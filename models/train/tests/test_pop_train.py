"""pop/train.py: a shipped ONNX file loaded back into its PyTorch network
computes the export reference; the device-side augmentation keeps the
labels consistent with the flipped images."""
import json
import os
import unittest

import numpy as np
import torch

from pop import train as pt

MODELS = os.path.join(os.path.dirname(__file__), "..", "..")


class TestInitFromOnnx(unittest.TestCase):
    def test_reference_outputs(self):
        for role, spec in sorted(pt.SPECS.items()):
            with self.subTest(role=role):
                with open(os.path.join(MODELS, "reference", f"pop_{role}.json")) as f:
                    ref = json.load(f)
                x = np.fromfile(os.path.join(MODELS, "reference", ref["input"]), "<f4").reshape(ref["input_shape"])
                x = torch.from_numpy(x.copy())
                model = pt.build(spec)
                torch.manual_seed(0)
                # Calibrate on the reference inputs and noise around them.
                calib = torch.cat([x, (x + 0.1 * torch.randn_like(x)).clamp(0, 1)])
                pt.init_from_onnx(model, os.path.join(MODELS, f"pop_{role}.onnx"), calib)
                model.eval()
                with torch.no_grad():
                    out = pt.Export(model, spec["kind"])(x)
                out = out if isinstance(out, tuple) else (out,)
                for o, t in zip(spec["outputs"], out):
                    want = np.array(ref["outputs"][o], np.float32)
                    np.testing.assert_allclose(t.numpy().reshape(-1), want, atol=2e-4, err_msg=f"{role} {o}")
                # Training mode (batch statistics) starts near the same function.
                model.train()
                with torch.no_grad():
                    tr = pt.Export(model, spec["kind"])(calib)
                tr = tr if isinstance(tr, tuple) else (tr,)
                self.assertLess(float((tr[0][:2] - out[0]).abs().max()), 0.1)


class TestTorchBatches(unittest.TestCase):
    def test_flip_moves_points(self):
        n = 16
        x = np.zeros((n, 128, 128), np.uint8)
        x[:, :, :10] = 255  # a bright band on the left
        vp = np.tile(np.array([[0.1, 0.2], [0.6, 0.2], [0.6, 0.7], [0.1, 0.7]], np.float32), (n, 1, 1))
        t = (torch.from_numpy(x), torch.from_numpy(vp))
        gen = torch.Generator()
        gen.manual_seed(3)
        flipped = 0
        for xb, yb in pt.torch_batches("viewport", t, torch.arange(n), gen, 8, True):
            self.assertEqual(tuple(xb.shape[1:]), (1, 128, 128))
            for xi, yi in zip(xb, yb):
                left = float(xi[0, :, :10].mean()) > float(xi[0, :, -10:].mean())
                if not left:
                    flipped += 1
                    np.testing.assert_allclose(yi.numpy(), [[0.4, 0.2], [0.9, 0.2], [0.9, 0.7], [0.4, 0.7]], atol=1e-6)
                else:
                    np.testing.assert_allclose(yi.numpy(), vp[0], atol=1e-6)
        self.assertTrue(0 < flipped < n)


class TestStrongPhotometric(unittest.TestCase):
    """--strong: grey frames get colour casts and gamma only with it; the
    values stay in [0, 1] and the presence labels are untouched."""

    def grey_set(self, n=64):
        rng = np.random.default_rng(5)
        g = rng.integers(0, 256, (n, 1, 160, 160), dtype=np.uint8)
        present = (np.arange(n) % 2).astype(np.float32)
        return {"x160": np.repeat(g, 3, 1), "present": present}

    def channel_spread(self, x):
        return float((x.max(1) - x.min(1)).max())

    def test_numpy_batches(self):
        z = self.grey_set()
        idx = np.arange(len(z["present"]))
        for strong in (False, True):
            with self.subTest(strong=strong):
                xs, ys = zip(*pt.batches("presence", z, idx, np.random.default_rng(1), 16, True, strong))
                x, y = torch.cat(xs).numpy(), torch.cat(ys).numpy()
                self.assertGreaterEqual(float(x.min()), 0.0)
                self.assertLessEqual(float(x.max()), 1.0)
                np.testing.assert_array_equal(y, z["present"])
                if strong:
                    self.assertGreater(self.channel_spread(x), 0.05)
                else:
                    self.assertEqual(self.channel_spread(x), 0.0)

    def test_torch_batches_strong(self):
        z = self.grey_set()
        t = (torch.from_numpy(z["x160"]), torch.from_numpy(z["present"]))
        gen = torch.Generator()
        gen.manual_seed(2)
        xs = [xb for xb, _ in pt.torch_batches("presence", t, torch.arange(len(z["present"])), gen, 16, True, True)]
        x = torch.cat(xs).numpy()
        self.assertGreaterEqual(float(x.min()), 0.0)
        self.assertLessEqual(float(x.max()), 1.0)
        self.assertGreater(self.channel_spread(x), 0.05)

    def test_gamma_moves_mid_grey_both_ways(self):
        x = np.full((200, 1, 8, 8), 0.5, np.float32)  # one channel: gamma only
        y = pt.strong_photometric(x, np.random.default_rng(3))
        self.assertTrue(np.all(y == y[:, :, :1, :1]))  # one value per frame
        self.assertLess(float(y.min()), 0.5 ** 1.5)
        self.assertGreater(float(y.max()), 0.5 ** 0.7)


class TestBestState(unittest.TestCase):
    def test_keeps_the_lowest_metric_state(self):
        model = torch.nn.Linear(2, 1)
        best = pt.BestState()
        self.assertFalse(best.restore(model))
        kept = None
        for step, metric in [(0, float("nan")), (10, 0.5), (20, 0.3), (30, 0.4), (40, 0.3)]:
            with torch.no_grad():
                model.weight.fill_(step)
            best.offer(metric, step, model)
            if step == 20:
                kept = model.weight.clone()
        self.assertEqual((best.metric, best.step), (0.3, 20))
        with torch.no_grad():
            model.weight.fill_(-1)
        self.assertTrue(best.restore(model))
        self.assertTrue(torch.equal(model.weight, kept))


class TestGrey(unittest.TestCase):
    def test_share_of_frames_turned_grey_by_luminance(self):
        rng = np.random.default_rng(3)
        x = rng.random((400, 3, 4, 4)).astype(np.float32)
        y = pt.to_grey(x, np.random.default_rng(5), 0.3)
        grey = np.all(np.isclose(y[:, 0], y[:, 1]) & np.isclose(y[:, 1], y[:, 2]), axis=(1, 2))
        self.assertTrue(80 <= grey.sum() <= 160, grey.sum())
        want = 0.299 * x[:, 0] + 0.587 * x[:, 1] + 0.114 * x[:, 2]
        np.testing.assert_allclose(y[grey, 0], want[grey], rtol=1e-6)
        np.testing.assert_array_equal(y[~grey], x[~grey])
        np.testing.assert_array_equal(pt.to_grey(x, rng, 0.0), x)
        one = x[:, :1]
        np.testing.assert_array_equal(pt.to_grey(one, rng, 1.0), one)  # a grey input is left alone


if __name__ == "__main__":
    unittest.main()
