#!/usr/bin/python3
"""TEST DOUBLE ONLY: random-weight cardiac models that obey docs/model-contract.md.

These are not trained and measure nothing. They exist so the Go engine can
be developed and benchmarked before the real models land in models/. Never
ship them. Usage:

    /usr/bin/python3 engine/cardiac/testdata/make_test_double.py OUT_DIR [--resnet18]
    VETLENS_TEST_MODELS=OUT_DIR go test ./engine/cardiac/ ./cli/

Writes OUT_DIR/{cardiac_validity,cardiac_landmark_1..5}.onnx and
OUT_DIR/manifest.json (format of engine/manifest). The landmark models put
plausible points (a base layout plus a small, image-dependent, per-model
offset) so every result code path can occur; the validity model says
"radiograph" for low-saturation images and "not" for colourful ones. --resnet18 gives the landmark and validity models
a torchvision ResNet-18 trunk, so benchmarks see a realistic compute cost.
"""
import hashlib
import json
import os
import sys

import torch
import torch.nn as nn

VALIDITY_S = 224
LANDMARK_S = 256
BASE = [  # heart_top, heart_bottom, heart_right, heart_left, VLAS, Vertebra A, Vertebra B
    (0.45, 0.40), (0.55, 0.70), (0.38, 0.58), (0.62, 0.52), (0.55, 0.42), (0.35, 0.25), (0.75, 0.28),
]


RESNET = "--resnet18" in sys.argv


class Block(nn.Module):
    """ResNet basic block (two 3x3 convs, batch norm, identity or 1x1 shortcut)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a = nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
            nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.s = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return torch.relu(self.a(x) + self.s(x))


def resnet18_trunk(cin):
    """ResNet-18 layout (torchvision is not installed here), ending in 64 features."""
    layers = [nn.Conv2d(cin, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    c = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        layers += [Block(c, cout, stride), Block(cout, cout, 1)]
        c = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 64)]
    return nn.Sequential(*layers)


def backbone(cin):
    if RESNET:
        return resnet18_trunk(cin)
    return nn.Sequential(
        nn.Conv2d(cin, 16, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(64, 64, 3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    )


class Landmark(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = backbone(1)
        self.xy = nn.Linear(64, 14)
        self.pk = nn.Linear(64, 7)
        self.register_buffer("base", torch.tensor(BASE, dtype=torch.float32))

    def forward(self, image):
        h = self.f(image)
        lm = self.base[None] + 0.012 * torch.tanh(self.xy(h)).view(-1, 7, 2)
        peak = torch.sigmoid(2.0 + self.pk(h))
        return lm, peak


class Validity(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = backbone(3)
        self.fc = nn.Linear(64, 1)

    def forward(self, image):
        sat = (image.max(dim=1).values - image.min(dim=1).values).mean(dim=(1, 2))
        return torch.sigmoid(4.0 - 40.0 * sat + 0.1 * self.fc(self.f(image)).view(-1))[:, None]


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def export(model, path, s, c, outputs):
    """Exports to ONNX and writes reference outputs the way the real
    exporters do (models/reference/NAME.json plus a little-endian float32
    input file), so the Go reference replay test runs against the double."""
    model.eval()
    x = torch.rand(2, c, s, s)
    axes = {"image": {0: "N"}}
    for o in outputs:
        axes[o] = {0: "N"}
    torch.onnx.export(model, x, path, opset_version=13, input_names=["image"],
                      output_names=outputs, dynamic_axes=axes)
    name = os.path.basename(path)[: -len(".onnx")]
    ref = os.path.join(os.path.dirname(path), "reference")
    os.makedirs(ref, exist_ok=True)
    inp = f"{name}_input_{s}.f32"
    x.numpy().astype("<f4").tofile(os.path.join(ref, inp))
    with torch.no_grad():
        y = model(x)
    if not isinstance(y, tuple):
        y = (y,)
    with open(os.path.join(ref, name + ".json"), "w") as f:
        json.dump({"model": name + ".onnx", "input": inp, "input_shape": list(x.shape),
                   "outputs": {o: t.numpy().ravel().tolist() for o, t in zip(outputs, y)}}, f)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = os.path.abspath(args[0] if args else "test-double-models")
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    models = []
    torch.manual_seed(1)
    export(Validity(), os.path.join(out, "cardiac_validity.onnx"), VALIDITY_S, 3, ["p_radiograph"])
    models.append({"file": "cardiac_validity.onnx", "role": "cardiac_validity",
                   "input_size": [3, VALIDITY_S, VALIDITY_S], "inputs": ["image"],
                   "outputs": ["p_radiograph"], "version": "test-double"})
    for i in range(1, 6):
        torch.manual_seed(100 + i)
        name = f"cardiac_landmark_{i}.onnx"
        export(Landmark(), os.path.join(out, name), LANDMARK_S, 1, ["landmarks", "peak"])
        models.append({"file": name, "role": "cardiac_landmark",
                       "input_size": [1, LANDMARK_S, LANDMARK_S], "inputs": ["image"],
                       "outputs": ["landmarks", "peak"], "version": "test-double"})
    for m in models:
        m["sha256"] = sha256(os.path.join(out, m["file"]))
    manifest = {"families": {"cardiac": {"model_version": "test-double-0.0.0"}}, "models": models}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    print(out)


if __name__ == "__main__":
    main()
