"""Tests for the validity trainer's augmentation, ensemble and data cache
(cardiac/train_validity.py) and the landmark trainer's zoom-out framing."""
import os
import tempfile
import unittest
from unittest import mock

import numpy as np
import torch

from cardiac import train_landmarks as T
from cardiac import train_validity as V


class AugmentTest(unittest.TestCase):
    def test_keeps_shape_and_range_and_varies(self):
        g = torch.Generator().manual_seed(1)
        x = torch.rand(32, 3, 48, 48)
        for strength in ("basic", "strong"):
            y = V.augment(x.clone(), g, strength)
            self.assertEqual(y.shape, x.shape)
            self.assertGreaterEqual(float(y.min()), 0.0)
            self.assertLessEqual(float(y.max()), 1.0)
            self.assertGreater(float((y - x).abs().mean()), 0.01, strength)

    def test_strong_adds_borders(self):
        # A white picture shrunk into a border shows other values at the edge.
        g = torch.Generator().manual_seed(2)
        x = torch.ones(64, 3, 48, 48)
        basic = V.augment(x.clone(), g, "basic")
        strong = V.augment(x.clone(), g, "strong")
        spread = lambda t: float(t[:, :, 0, :].std(-1).mean())  # variation along the top row
        self.assertLess(spread(basic), 1e-4)
        self.assertGreater(spread(strong), 0.01)

    def test_gaussian_blur_keeps_flat_fields_and_softens_edges(self):
        x = torch.zeros(1, 1, 21, 21)
        x[..., 10:] = 1
        y = V.gaussian_blur(x, 2.0)
        self.assertEqual(y.shape, x.shape)
        self.assertAlmostEqual(float(y[0, 0, 10, 0]), 0.0, places=5)
        self.assertAlmostEqual(float(y[0, 0, 10, 20]), 1.0, places=5)
        self.assertTrue(0.05 < float(y[0, 0, 10, 9]) < 0.5)


class EnsembleTest(unittest.TestCase):
    def test_mean_of_members(self):
        torch.manual_seed(0)
        ms = [V.ValidityNet().eval() for _ in range(3)]
        e = V.ValidityEnsemble(ms).eval()
        x = torch.rand(4, 3, 64, 64)
        with torch.no_grad():
            want = torch.stack([m(x) for m in ms]).mean(0)
            got = e(x)
        self.assertEqual(got.shape, (4, 1))
        torch.testing.assert_close(got, want)


class MobileNetTest(unittest.TestCase):
    def test_trunk_stays_fixed_while_the_head_learns(self):
        # The ImageNet stem and blocks 0-11 keep weights and BatchNorm
        # statistics through training; block 12 and the head move.
        # Random tensors stand in for the ImageNet weights (no npm here).
        from cardiac import mobilenet
        from tests.test_mobilenet import keras_tensors

        X = torch.randint(0, 256, (128, 3, 32, 32), dtype=torch.uint8)
        Y = (torch.arange(128) % 2).float()
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "mobilenet_v2.npz")
            np.savez(fake, **keras_tensors(mobilenet.Encoder(), np.random.default_rng(0)))
            with mock.patch.object(mobilenet, "fetch_weights", return_value=fake):
                fresh = V.ValidityMobileNet()
                with mock.patch("builtins.print"):
                    net = V.train_member(X, Y, 5, 1, "basic", 0.0, arch="mnv2")
        before, after = fresh.state_dict(), net.state_dict()
        fixed = ("enc.stem.",) + tuple(f"enc.blocks.{i}." for i in range(V.ValidityMobileNet.FIXED_UPTO + 1))
        for k, v in before.items():
            if k.startswith(fixed):
                self.assertTrue(torch.equal(v, after[k]), k)
        self.assertFalse(torch.equal(before["fc.weight"], after["fc.weight"]))
        self.assertFalse(torch.equal(before["enc.blocks.12.project.conv.weight"],
                                     after["enc.blocks.12.project.conv.weight"]))
        p = net(torch.rand(4, 3, 96, 96))
        self.assertEqual(tuple(p.shape), (4, 1))
        self.assertTrue(bool(((p >= 0) & (p <= 1)).all()))


class CacheTest(unittest.TestCase):
    def test_generates_once_then_reads(self):
        calls = []

        def fake_generate(n, seed0, S, heldout, workers):
            calls.append(n)
            return np.full((2 * n, S, S, 3), 7, np.uint8), np.r_[np.ones(n), np.zeros(n)].astype(np.float32)

        with tempfile.TemporaryDirectory() as d, mock.patch.object(V, "_generate", fake_generate):
            path = os.path.join(d, "sub", "v.npz")
            x1, y1 = V.build(3, 0, 8, cache=path)
            x2, y2 = V.build(3, 0, 8, cache=path)
            self.assertEqual(calls, [3])
            np.testing.assert_array_equal(x1, x2)
            np.testing.assert_array_equal(y1, y2)
            self.assertFalse(any(f.endswith(".tmp.npz") for f in os.listdir(os.path.dirname(path))))


class ZoomOutTest(unittest.TestCase):
    def test_landmarks_follow_the_shrunk_picture(self):
        # A bright square with a landmark at each of two corners: after the
        # augmentation the landmarks still sit on the square's corners.
        S = 64
        x = torch.zeros(16, 1, S, S)
        x[:, :, 16:48, 16:48] = 1
        y = torch.tensor([[16.5, 16.5], [47.5, 47.5]]).repeat(16, 1, 1) / S
        y = torch.cat([y, y[:, :1].repeat(1, 5, 1)], 1)  # 7 landmarks
        g = torch.Generator().manual_seed(3)
        xa, ya = T.strong_augment(x.clone(), y.clone(), g, zoom_out=1.0)
        # the span between the two corners shrinks with the picture
        span = (ya[:, 1] - ya[:, 0]).norm(dim=-1)
        self.assertTrue(bool((span < (y[:, 1] - y[:, 0]).norm(dim=-1) * 0.9).all()))
        self.assertTrue(bool((ya >= 0).all() and (ya <= 1).all()))

    def test_default_leaves_framing_alone(self):
        S = 32
        x = torch.rand(64, 1, S, S)
        y = torch.rand(64, 7, 2) * 0.5 + 0.25
        g = torch.Generator().manual_seed(4)
        _, ya = T.strong_augment(x, y.clone(), g)
        ratio = (ya[:, 1] - ya[:, 0]).norm(dim=-1) / (y[:, 1] - y[:, 0]).norm(dim=-1)
        self.assertGreater(float(ratio.min()), 0.8)  # scale stays within exp(+-0.18)


if __name__ == "__main__":
    unittest.main()
