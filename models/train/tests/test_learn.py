"""Tests for cardiac/learn.py (the fine-tuning subprocess of `vetlens learn`) and cardiac/clinic_cases.py.

The end-to-end runs use a tiny base family (width-4 U-Nets on 64 px
inputs, exported the way the shipped ones are) so they take seconds; the
contract (JSON lines, output directory, cancel) is the same.
"""
import glob
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.dirname(HERE)
MODELS = os.path.dirname(TRAIN)
LEARN = ["-m", "cardiac.learn"]  # run from TRAIN, the package root
S = 64

from cardiac import clinic_cases
from cardiac import learn


def make_base(d):
    """A tiny cardiac family in d: the shipped validity model, five width-4
    landmark U-Nets on S px inputs, family file, model card, manifest."""
    import torch
    from cardiac import export_landmarks as E
    import make_manifest
    from cardiac import train_landmarks as T

    os.makedirs(d)
    for name in ("cardiac_validity.onnx", "cardiac_validity.meta.json", "CARDIAC_MODEL_CARD.md"):
        shutil.copyfile(os.path.join(MODELS, name), os.path.join(d, name))
    os.makedirs(os.path.join(d, "reference"))
    for name in ("cardiac_validity.json", "validity_input_96.f32"):
        shutil.copyfile(os.path.join(MODELS, "reference", name), os.path.join(d, "reference", name))
    for k in range(1, 6):
        torch.manual_seed(k)
        net = T.LandmarkNet(4).eval()
        meta = {"role": "cardiac_landmark", "input_size": [1, S, S], "inputs": ["image"],
                "outputs": ["landmarks", "peak"], "version": "v0-test.1", "params": {"seed": k, "flip_tta": False}}
        E.export_model(T.Exported(net).eval(), S, f"cardiac_landmark_{k}", d, meta)
    with open(os.path.join(d, "cardiac.family.json"), "w") as f:
        json.dump({"model_version": "v0-test.1", "params": {"max_spread": 0.009}}, f)
    make_manifest.compose(d)


def run_learn(args, timeout=120):
    """Run cardiac/learn.py; returns (exit status, stdout events)."""
    p = subprocess.run([sys.executable, *LEARN] + args, cwd=TRAIN, capture_output=True, text=True, timeout=timeout)
    return p.returncode, [json.loads(line) for line in p.stdout.splitlines()], p.stderr


class LearnTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="learn-test-")
        cls.base = os.path.join(cls.tmp, "base")
        make_base(cls.base)
        cls.pool = os.path.join(cls.tmp, "pool")
        cls.cases = clinic_cases.build(8, 3, cls.pool, workers=1)
        cls.stems = [c["case"] for c in cls.cases]
        cls.listed = cls.stems[:5]
        # Unlisted cases are unreadable: reading one would fail the run.
        for s in cls.stems[5:]:
            with open(os.path.join(cls.pool, "Images", s + ".png"), "wb") as f:
                f.write(b"not a png")
            with open(os.path.join(cls.pool, "Labels", s + ".mat"), "wb") as f:
                f.write(b"not a mat file")
        cls.cases_json = os.path.join(cls.tmp, "cases.json")
        with open(cls.cases_json, "w") as f:
            json.dump(cls.listed, f)
        cls.synthetic = os.path.join(cls.tmp, "syn.npz")
        cls.out = os.path.join(cls.tmp, "out")
        cls.rc, cls.events, cls.stderr = run_learn(
            ["--pool", cls.pool, "--train-cases", cls.cases_json, "--base", cls.base, "--out", cls.out,
             "--version", "v0-test-clinic.1", "--steps", "3", "--synthetic", cls.synthetic, "--synthetic-n", "4",
             "--threads", "1"])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def args(self, out, *extra):
        return ["--pool", self.pool, "--train-cases", self.cases_json, "--base", self.base, "--out", out,
                "--version", "v0-test-clinic.2", "--synthetic", self.synthetic, "--threads", "1"] + list(extra)

    def test_check(self):
        rc, ev, _ = run_learn(["--check"])
        self.assertEqual(rc, 0)
        self.assertEqual(ev[0]["event"], "ok")
        self.assertTrue(ev[0]["torch"])

    def test_check_without_torch(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "torch"))
            with open(os.path.join(d, "torch", "__init__.py"), "w") as f:
                f.write("raise ImportError('No module named torch (test)')\n")
            p = subprocess.run([sys.executable, *LEARN, "--check"], cwd=TRAIN, capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, PYTHONPATH=d))
        self.assertEqual(p.returncode, 3)
        ev = json.loads(p.stdout.strip())
        self.assertEqual((ev["event"], ev["code"]), ("error", "missing_torch"))
        self.assertIn("apt install python3-torch python3-scipy python3-onnx", ev["message"])

    def test_run_reports_json_lines(self):
        self.assertEqual(self.rc, 0, self.stderr[-2000:])
        kinds = [e["event"] for e in self.events]
        self.assertEqual(kinds[0], "start")
        self.assertEqual(kinds[-1], "done")
        self.assertEqual(self.events[0], {"event": "start", "cases": 5, "synthetic": 4, "members": 5, "steps": 3})
        done = self.events[-1]
        self.assertEqual((done["out"], done["version"], done["cases"]), (self.out, "v0-test-clinic.1", 5))
        stages = {e["stage"] for e in self.events if e["event"] == "progress"}
        self.assertEqual(stages, {"synthetic", "train", "export"})
        fr = [e["fraction"] for e in self.events if e["event"] == "progress"]
        self.assertEqual(fr, sorted(fr))
        self.assertEqual(fr[-1], 1.0)
        self.assertTrue(os.path.exists(self.synthetic), "the synthetic mix is cached")

    def test_output_directory(self):
        self.assertEqual(self.rc, 0, self.stderr[-2000:])
        self.assertFalse(os.path.exists(self.out + ".partial"))
        with open(os.path.join(self.out, "cardiac.family.json")) as f:
            fam = json.load(f)
        self.assertEqual(fam, {"model_version": "v0-test-clinic.1", "params": {"max_spread": 0.009}})
        for name in ("cardiac_validity.onnx", "CARDIAC_MODEL_CARD.md"):
            with open(os.path.join(self.base, name), "rb") as a, open(os.path.join(self.out, name), "rb") as b:
                self.assertEqual(a.read(), b.read(), name)
        with open(os.path.join(self.out, "manifest.json")) as f:
            man = json.load(f)
        files = sorted(m["file"] for m in man["models"])
        self.assertEqual(files, ["cardiac_landmark_%d.onnx" % k for k in range(1, 6)] + ["cardiac_validity.onnx"])
        for m in man["models"]:
            with open(os.path.join(self.out, m["file"]), "rb") as f:
                self.assertEqual(hashlib.sha256(f.read()).hexdigest(), m["sha256"], m["file"])
            if m["role"] == "cardiac_landmark":
                self.assertEqual(m["version"], "v0-test-clinic.1")
                self.assertEqual(m["params"]["base_version"], "v0-test.1")
        with open(os.path.join(self.base, "cardiac_landmark_1.onnx"), "rb") as a, \
                open(os.path.join(self.out, "cardiac_landmark_1.onnx"), "rb") as b:
            self.assertNotEqual(a.read(), b.read(), "the landmark models were trained")
        with open(os.path.join(self.out, "train.json")) as f:
            tr = json.load(f)
        self.assertEqual(tr["cases"], self.listed)
        self.assertEqual((tr["base_version"], tr["synthetic"], tr["steps"]), ("v0-test.1", 4, 3))
        self.assertEqual([m["steps"] for m in tr["members"]], [3] * 5)
        self.assertTrue(all(np.isfinite(m["final_loss_px"]) for m in tr["members"]))

    def test_reference_outputs_reproduce(self):
        """Each new model's reference outputs come back from its ONNX file:
        with onnxruntime when installed, else loaded into PyTorch."""
        import torch
        from cardiac import train_landmarks as T

        self.assertEqual(self.rc, 0, self.stderr[-2000:])
        refs = sorted(glob.glob(os.path.join(self.out, "reference", "cardiac_landmark_*.json")))
        self.assertEqual(len(refs), 5)
        try:
            import onnxruntime
        except ImportError:
            onnxruntime = None
        for r in refs:
            with open(r) as f:
                ref = json.load(f)
            x = np.fromfile(os.path.join(self.out, "reference", ref["input"]), "<f4").reshape(ref["input_shape"])
            path = os.path.join(self.out, ref["model"])
            if onnxruntime is not None:
                sess = onnxruntime.InferenceSession(path)
                c, p = sess.run(["landmarks", "peak"], {"image": x})
            else:
                net = T.LandmarkNet(learn.onnx_width(path))
                T.init_from_onnx(net, path)
                with torch.no_grad():
                    c, p = [t.numpy() for t in T.Exported(net.eval())(torch.from_numpy(x))]
            np.testing.assert_allclose(c.ravel(), ref["outputs"]["landmarks"], atol=1e-4)
            np.testing.assert_allclose(p.ravel(), ref["outputs"]["peak"], atol=1e-4)

    def test_refuses_existing_out_and_bad_cases(self):
        for name, cases, code in [("exists", self.listed, "out_exists"), ("unknown", ["no-such-case"], "bad_cases"),
                                  ("empty", [], "no_cases"), ("unlisted-bad", self.stems[5:6], "bad_pool")]:
            with self.subTest(name):
                cj = os.path.join(self.tmp, name + ".json")
                with open(cj, "w") as f:
                    json.dump(cases, f)
                out = self.base if name == "exists" else os.path.join(self.tmp, "out-" + name)
                a = self.args(out, "--steps", "1")
                a[a.index("--train-cases") + 1] = cj
                rc, ev, _ = run_learn(a)
                self.assertEqual(rc, 1)
                self.assertEqual((ev[-1]["event"], ev[-1]["code"]), ("error", code))
                self.assertEqual(ev[-1], [e for e in ev if e["event"] == "error"][0], "one error line, last")
                if name != "exists":
                    self.assertFalse(os.path.exists(out))

    def test_cached_synthetic_caps_the_count(self):
        self.assertEqual(self.rc, 0, self.stderr[-2000:])
        out = os.path.join(self.tmp, "out-cached")
        rc, ev, err = run_learn(self.args(out, "--steps", "1", "--synthetic-n", "50"))
        self.assertEqual(rc, 0, err[-2000:])
        self.assertEqual(ev[0]["synthetic"], 4, "the cached mix holds 4")
        with open(os.path.join(out, "train.json")) as f:
            self.assertEqual(json.load(f)["synthetic"], 4)

    def test_sigterm_leaves_no_outdir(self):
        out = os.path.join(self.tmp, "out-cancel")
        p = subprocess.Popen([sys.executable, *LEARN] + self.args(out, "--steps", "100000"),
                             cwd=TRAIN, stdout=subprocess.PIPE, text=True)
        try:
            for line in p.stdout:
                ev = json.loads(line)
                if ev["event"] == "progress" and ev["stage"] == "train":
                    break
            self.assertTrue(os.path.isdir(out + ".partial"))
            t = time.time()
            p.send_signal(signal.SIGTERM)
            rest = [json.loads(line) for line in p.stdout]
            rc = p.wait(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
            p.stdout.close()
        self.assertLess(time.time() - t, 10)
        self.assertNotEqual(rc, 0)
        self.assertEqual((rest[-1]["event"], rest[-1]["code"]), ("error", "cancelled"))
        self.assertFalse(os.path.exists(out))
        self.assertFalse(os.path.exists(out + ".partial"))

    def test_shuffle_labels_permutes(self):
        X0, Y0, M0 = learn.load_cases(self.pool, self.listed, S)
        X1, Y1, M1 = learn.load_cases(self.pool, self.listed, S, shuffle_seed=5)
        np.testing.assert_array_equal(X0, X1)  # images stay
        self.assertFalse(np.array_equal(Y0, Y1))
        rows = {r.tobytes() for r in Y0}
        self.assertEqual({r.tobytes() for r in Y1}, rows)  # the same labels, other cases
        self.assertLess(sum(np.array_equal(a, b) for a, b in zip(Y0, Y1)), len(Y0))

    def test_load_cases_reads_vlas_from_provenance(self):
        X, Y, M = learn.load_cases(self.pool, self.listed[:2], S)
        self.assertEqual(X.shape, (2, S, S))
        np.testing.assert_array_equal(M, np.ones((2, 7)))
        c = self.cases[0]
        from cardiac import dataset
        from PIL import Image
        with Image.open(os.path.join(self.pool, "Images", c["case"] + ".png")) as im:
            w, h = im.size
        want = dataset.to_letterbox_coords(np.array([c["vlas_point"]]), w, h, S)[0]
        np.testing.assert_allclose(Y[0, 4], want, atol=1e-5)


class HeldoutCurveTest(unittest.TestCase):
    """--eval-cases: the held-out curve in train.json, measured on cases
    never trained on, without changing what is trained."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="learn-curve-")
        cls.base = os.path.join(cls.tmp, "base")
        make_base(cls.base)
        cls.pool = os.path.join(cls.tmp, "pool")
        stems = [c["case"] for c in clinic_cases.build(7, 4, cls.pool, workers=1)]
        cls.train, cls.held = stems[:5], stems[5:]
        cls.files = {}
        for name, cases in (("train", cls.train), ("held", cls.held), ("overlap", cls.held + cls.train[:1])):
            cls.files[name] = os.path.join(cls.tmp, name + ".json")
            with open(cls.files[name], "w") as f:
                json.dump(cases, f)
        cls.synthetic = os.path.join(cls.tmp, "syn.npz")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def learn(self, name, *extra):
        out = os.path.join(self.tmp, name)
        rc, ev, err = run_learn(["--pool", self.pool, "--train-cases", self.files["train"], "--base", self.base,
                                 "--out", out, "--version", "v0-test-clinic.1", "--steps", "3", "--synthetic",
                                 self.synthetic, "--synthetic-n", "4", "--threads", "1"] + list(extra))
        return out, rc, ev, err

    def test_curve_and_training_unchanged(self):
        plain, rc, _, err = self.learn("plain")
        self.assertEqual(rc, 0, err[-2000:])
        curved, rc, _, err = self.learn("curved", "--eval-cases", self.files["held"])
        self.assertEqual(rc, 0, err[-2000:])
        with open(os.path.join(plain, "train.json")) as f:
            self.assertNotIn("heldout_curve", json.load(f))
        with open(os.path.join(curved, "train.json")) as f:
            curve = json.load(f)["heldout_curve"]
        self.assertEqual(curve["cases"], 2)
        pts = curve["points"]
        self.assertEqual(len(pts), learn.CURVE_POINTS)
        steps = [p["step"] for p in pts]
        self.assertEqual((steps[0], steps[-1]), (0, 3))
        self.assertEqual(steps, sorted(steps))
        self.assertTrue(all(np.isfinite(p["vhs_mae"]) and p["vhs_mae"] >= 0 for p in pts))
        # The curve's first point is the base models' ensemble on the held-out cases.
        X, Y, _ = learn.load_cases(self.pool, self.held, S)
        from cardiac import train_landmarks as T
        prov = learn.read_provenance(self.pool)
        P = []
        for k in range(1, 6):
            path = os.path.join(self.base, "cardiac_landmark_%d.onnx" % k)
            net = learn.base_net(path, None)
            T.init_from_onnx(net, path)
            P.append(learn.curve_predict(net.eval(), X))
        truth = np.array([prov[s]["vhs"] for s in self.held])
        want = float(np.mean(np.abs(learn.span_vhs(np.mean(P, axis=0)) - truth)))
        self.assertAlmostEqual(pts[0]["vhs_mae"], want, places=3)
        # Measuring the curve does not change what is trained.
        for k in range(1, 6):
            name = "cardiac_landmark_%d.onnx" % k
            with open(os.path.join(plain, name), "rb") as a, open(os.path.join(curved, name), "rb") as b:
                self.assertEqual(hashlib.sha256(a.read()).hexdigest(), hashlib.sha256(b.read()).hexdigest(), name)

    def test_refuses_an_eval_case_trained_on(self):
        out, rc, ev, _ = self.learn("overlap", "--eval-cases", self.files["overlap"])
        self.assertEqual(rc, 1)
        self.assertEqual((ev[-1]["event"], ev[-1]["code"]), ("error", "bad_cases"))
        self.assertFalse(os.path.exists(out))

    def test_span_vhs_is_phantom_measure(self):
        from sim import phantom
        rng = np.random.default_rng(3)
        P = rng.uniform(0, 100, (4, len(phantom.LANDMARKS), 2))
        want = [phantom.measure({k: p[i] for i, k in enumerate(phantom.LANDMARKS)})[0] for p in P]
        np.testing.assert_allclose(learn.span_vhs(P), want, rtol=1e-12)


class StepsTest(unittest.TestCase):
    def test_default_steps(self):
        for n, want in [(1, 60), (40, 60), (150, 150), (200, 200), (5000, 300)]:
            self.assertEqual(learn.default_steps(n), want, n)


class ArchitectureTest(unittest.TestCase):
    """cardiac/learn.py rebuilds each member in its sidecar's architecture."""

    def test_shipped_member_round_trips(self):
        # The shipped members (v3.2: MobileNetV2, decoder width in the
        # sidecar) come back from ONNX exactly: the fine-tune starts from
        # what the engine runs.
        import torch
        from cardiac import train_landmarks as T

        path = os.path.join(MODELS, "cardiac_landmark_1.onnx")
        with open(os.path.join(MODELS, "cardiac_landmark_1.meta.json")) as f:
            meta = json.load(f)
        with open(os.path.join(MODELS, "reference", "cardiac_landmark_1.json")) as f:
            ref = json.load(f)
        net = learn.base_net(path, meta)
        self.assertEqual(type(net).__name__,
                         "MobileLandmarkNet" if meta["params"].get("arch") == "mnv2" else "LandmarkNet")
        T.init_from_onnx(net, path)
        x = np.fromfile(os.path.join(MODELS, "reference", ref["input"]), "<f4").reshape(ref["input_shape"])
        with torch.no_grad():
            c, _ = T.Exported(net.eval())(torch.from_numpy(x))
        np.testing.assert_allclose(c.numpy().ravel(), ref["outputs"]["landmarks"], atol=1e-5)

    def test_chunked_trunk_trains_like_the_whole_net(self):
        # forward() runs the frozen trunk without autograd in chunks: the
        # same outputs and the same gradients on every weight that trains.
        import torch
        from cardiac import train_landmarks as T

        torch.manual_seed(0)
        net = T.build_net("mnv2", 8)
        net.train()
        T.freeze_bn(net)
        T.freeze_encoder(net, learn.MNV2_FROZEN_UPTO)
        x = torch.rand(learn.TRUNK_CHUNK + 2, 1, 64, 64)  # a short last chunk
        grads = []
        for f in (net, lambda t: learn.forward(net, t)):
            net.zero_grad()
            out = f(x)
            out.square().mean().backward()
            grads.append((out.detach(), [p.grad.clone() for p in net.parameters() if p.requires_grad]))
        np.testing.assert_allclose(grads[0][0].numpy(), grads[1][0].numpy(), atol=1e-5)
        for a, b in zip(grads[0][1], grads[1][1]):
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)
        self.assertTrue(all(p.grad is None for p in net.enc.stem.parameters()))

    def test_read_base_checks_arch(self):
        with tempfile.TemporaryDirectory() as d:
            base = os.path.join(d, "base")
            shutil.copytree(MODELS, base, ignore=shutil.ignore_patterns("train", "pop_*", "usg*", "reference"))
            learn.read_base(base)  # the shipped family is a valid base
            meta_path = os.path.join(base, "cardiac_landmark_2.meta.json")
            with open(meta_path) as f:
                meta = json.load(f)
            for params, msg in [({"arch": "resnet"}, "resnet"), ({"arch": "mnv2"}, "width")]:
                with open(meta_path, "w") as f:
                    json.dump(dict(meta, params=params), f)
                with self.assertRaisesRegex(learn.Failure, msg):
                    learn.read_base(base)


class ClinicCasesTest(unittest.TestCase):
    def test_folder_and_provenance(self):
        from cardiac import dataset
        from sim import phantom

        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "c")
            cases = clinic_cases.build(6, 2, out, workers=1)
            again = os.path.join(d, "again")
            self.assertEqual(clinic_cases.build(6, 2, again, workers=1), cases, "deterministic")
            self.assertEqual(len(cases), 6)
            self.assertLess(len({c["patient"] for c in cases}), 6, "patients share cases")
            with open(os.path.join(out, "provenance.json")) as f:
                prov = json.load(f)
            self.assertEqual(prov["format"], "vetlens-dogheart-1")
            for c in prov["cases"]:
                self.assertEqual(c["kind"], "edited")
                self.assertRegex(c["patient"], "^[0-9a-f]{24}$")
                im, pts, mask = dataset.read_dogheart_case(out, c["case"])
                pts[4] = c["vlas_point"]
                vhs, vlas = phantom.measure({k: pts[i] for i, k in enumerate(phantom.LANDMARKS)})
                self.assertAlmostEqual(vhs, c["vhs"], places=3)
                self.assertAlmostEqual(vlas, c["vlas"], places=3)
                with open(os.path.join(out, "Images", c["case"] + ".png"), "rb") as f:
                    self.assertEqual(hashlib.sha256(f.read()).hexdigest(), c["image_sha256"])
            with self.assertRaises(FileExistsError):
                clinic_cases.build(2, 2, out, workers=1)


if __name__ == "__main__":
    unittest.main()
