"""Tests for the ImageNet-initialised MobileNetV2 landmark network (cardiac/mobilenet.py)."""
import os
import tempfile
import unittest

import numpy as np
import torch

from cardiac import mobilenet
from cardiac import train_landmarks as T


def keras_tensors(enc, rng):
    """Random tensors under the Keras names and layouts load_keras_weights reads."""
    t = {}

    def add(mod, prefix, bn, depthwise=False):
        w = mod.conv.weight
        o, i, kh, kw = w.shape
        if depthwise:
            t[prefix + "/depthwise_kernel"] = rng.standard_normal((kh, kw, o, 1)).astype(np.float32)
        else:
            t[prefix + "/kernel"] = rng.standard_normal((kh, kw, i, o)).astype(np.float32)
        for s in ("gamma", "beta", "moving_mean"):
            t[f"{bn}/{s}"] = rng.standard_normal(o).astype(np.float32)
        t[f"{bn}/moving_variance"] = rng.uniform(0.5, 2, o).astype(np.float32)

    add(enc.stem, "Conv1", "bn_Conv1")
    for name, b in zip(mobilenet.keras_block_names(), enc.blocks):
        if b.expand is not None:
            add(b.expand, name + "_expand", name + "_expand_BN")
        add(b.depthwise, name + "_depthwise", name + "_depthwise_BN", depthwise=True)
        add(b.project, name + "_project", name + "_project_BN")
    return t


class MobileNetTest(unittest.TestCase):
    def test_landmark_contract(self):
        net = T.build_net("mnv2", 16).eval()
        with torch.no_grad():
            out = net(torch.rand(2, 1, 96, 96))
        self.assertEqual(tuple(out.shape), (2, T.K, 24, 24))

    def test_trunk_split_is_the_whole_network(self):
        torch.manual_seed(3)
        net = mobilenet.MobileLandmarkNet(T.K, 16).eval()
        x = torch.rand(1, 1, 64, 64)
        with torch.no_grad():
            whole = net(x)
            for upto in (10, 12):
                part = net.from_trunk(*net.trunk(x, upto), upto)
                self.assertLess(float((whole - part).abs().max()), 1e-6, upto)

    def test_keras_layouts_map_onto_torch(self):
        net = mobilenet.MobileLandmarkNet(T.K, 16)
        t = keras_tensors(net.enc, np.random.default_rng(0))
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "w.npz")
            np.savez(p, **t)
            n = mobilenet.load_keras_weights(net.enc, p)
        self.assertEqual(n, len(t))
        # a regular convolution: HWIO -> OIHW
        k = t["block_3_expand/kernel"]
        w = net.enc.blocks[3].expand.conv.weight.detach().numpy()
        self.assertEqual(w[5, 2, 0, 0], k[0, 0, 2, 5])
        # a depthwise convolution: HWC1 -> C1HW
        k = t["block_3_depthwise/depthwise_kernel"]
        w = net.enc.blocks[3].depthwise.conv.weight.detach().numpy()
        self.assertEqual(w[7, 0, 2, 1], k[2, 1, 7, 0])
        self.assertEqual(float(net.enc.blocks[15].project.bn.running_var[4]),
                         float(t["block_15_project_BN/moving_variance"][4]))

    def test_keras_padding_on_stride_two(self):
        # Keras pads stride-2 convolutions only after (bottom/right): a 3x3
        # kernel that picks its top-left tap reads input (2i, 2j).
        m = mobilenet.KConv(1, 1, 3, 2, act=False).eval()
        with torch.no_grad():
            m.conv.weight.zero_()
            m.conv.weight[0, 0, 0, 0] = 1.0
            m.bn.running_mean.zero_()
            m.bn.running_var.fill_(1 - m.bn.eps)
            m.bn.weight.fill_(1)
            m.bn.bias.zero_()
            x = torch.arange(36.0).view(1, 1, 6, 6)
            y = m(x)
        self.assertEqual(tuple(y.shape), (1, 1, 3, 3))
        self.assertEqual(y[0, 0].tolist(), x[0, 0, ::2, ::2].tolist())


if __name__ == "__main__":
    unittest.main()
