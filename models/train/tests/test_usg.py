"""The USG trainer: the simulated cohort, the CSV reader's corrections and
checks, the patient split, Platt scaling, the conformal quantile, the
Shapley values and the numpy ONNX runner against the exported model."""
import math
import os
import tempfile
import unittest

import numpy as np

from usg import cohort, onnxnp, train

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


class CohortTest(unittest.TestCase):
    def test_simulation_is_deterministic_and_plausible(self):
        a, b = cohort.simulate(30, seed=7), cohort.simulate(30, seed=7)
        self.assertEqual(a, b)
        self.assertNotEqual(a, cohort.simulate(30, seed=8))
        self.assertEqual(len({r["patient_id"] for r in a}), 30)
        values = 0
        for r in a:
            if r["USG"] != "":
                self.assertTrue(0.99 <= float(r["USG"]) <= 1.11, r["USG"])
            for f in cohort.FEATURES:
                if r[f] == "":  # the simulation leaves some values missing, as clinics do
                    continue
                values += 1
                self.assertTrue(math.isfinite(float(r[f])) and float(r[f]) > 0, (f, r[f]))
        self.assertGreater(values, len(a) * len(cohort.FEATURES) * 0.8)

    def test_corrections_follow_the_spec(self):
        cases = [("CREATININE", 176.8, 2.0), ("CREATININE", 2.0, 2.0), ("ABSOLUTE LYMPHOCYTES", 1.5, 1500.0),
                 ("ABSOLUTE LYMPHOCYTES", 1500.0, 1500.0), ("BUN", 30.0, 30.0)]
        for name, v, want in cases:
            self.assertAlmostEqual(cohort.correct(name, v), want, places=9, msg=name)

    def test_read_cohort_corrects_and_drops(self):
        def read(rows):
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "c.csv")
                cohort.write_csv(rows, path)
                return cohort.read_cohort(path)

        clean = [r for r in cohort.simulate(40, seed=3) if all(r[f] != "" for f in cohort.FEATURES + ["USG"])]
        clean = [dict(r) for r in clean[:5]]
        X0, _, _, _ = read(clean)
        self.assertEqual(len(X0), 5)  # the simulated rows are all usable
        rows = [dict(r) for r in clean]
        rows[0]["CREATININE"] = str(float(rows[0]["CREATININE"]) * 88.4)  # umol/L
        rows[1]["BUN"] = ""  # missing
        rows[2]["USG"] = "1.300"  # outside 1.000-1.100
        X, usg, pids, stats = read(rows)
        self.assertEqual(len(X), 3)
        self.assertEqual(stats["missing"], 1)
        self.assertEqual(stats["bad_usg"], 1)
        self.assertGreaterEqual(stats["corrected"], 1)
        i = cohort.FEATURES.index("CREATININE")
        self.assertAlmostEqual(X[0][i], X0[0][i], places=3)  # read back in mg/dL
        self.assertEqual(len(pids), len(X))
        self.assertTrue(np.all((usg >= 1.0) & (usg <= 1.1)))


class TrainTest(unittest.TestCase):
    def test_split_is_stable_and_proportioned(self):
        ids = [f"p{i}" for i in range(20000)]
        first = [train.split_of(p) for p in ids]
        self.assertEqual(first, [train.split_of(p) for p in ids])
        share = {k: first.count(k) / len(ids) for k in ("train", "platt", "conformal", "test")}
        for k, want in {"train": 0.6, "platt": 0.1, "conformal": 0.1, "test": 0.2}.items():
            self.assertAlmostEqual(share[k], want, delta=0.015, msg=k)

    def test_platt_recovers_a_known_calibration(self):
        rng = np.random.default_rng(1)
        s = rng.normal(0, 2, 20000)
        y = (rng.random(len(s)) < 1 / (1 + np.exp(-(0.5 * s - 1.0)))).astype(float)
        a, b = train.platt(s, y)
        self.assertAlmostEqual(a, 0.5, delta=0.05)
        self.assertAlmostEqual(b, -1.0, delta=0.07)

    def test_conformal_quantile_covers(self):
        rng = np.random.default_rng(2)
        y = (rng.random(4000) < 0.3).astype(int)
        p = np.clip(0.3 + 0.4 * (y - 0.3) + rng.normal(0, 0.2, len(y)), 0, 1)
        q = train.conformal_qhat(p[:2000], y[:2000], 0.1)
        s = np.where(y[2000:] == 1, 1 - p[2000:], p[2000:])
        coverage = np.mean(s <= q)
        self.assertGreaterEqual(coverage, 0.87)
        self.assertLessEqual(coverage, 0.93)
        self.assertEqual(train.conformal_qhat(p[:5], y[:5], 0.01), 1.0)  # too few points: the full set

    def test_shapley_values_add_up_and_are_exact(self):
        rng = np.random.default_rng(3)
        bg = rng.normal(0, 1, (8, 5))
        w = np.full(8, 1 / 8)
        x = rng.normal(0, 1, 5)
        coef = np.array([1.0, -2.0, 0.5, 0.0, 3.0])
        f = lambda rows: rows @ coef + 0.7 * rows[:, 0] * rows[:, 1]  # noqa: E731
        base, phi = train.exact_shap(f, x, bg, w)
        self.assertAlmostEqual(base, float(np.sum(w * f(bg))), places=9)
        self.assertAlmostEqual(base + phi.sum(), float(f(x[None, :])[0]), places=9)  # efficiency
        self.assertAlmostEqual(phi[3], 0.0, places=9)  # a feature f ignores gets nothing
        linear = lambda rows: rows @ coef  # noqa: E731
        _, phi_lin = train.exact_shap(linear, x, bg, w)
        np.testing.assert_allclose(phi_lin, coef * (x - bg.mean(axis=0)), atol=1e-9)


class ExportedModelTest(unittest.TestCase):
    def test_shipped_model_runs_in_numpy_and_reads_creatinine(self):
        path = os.path.join(MODELS, "usg_ensemble.onnx")
        if not os.path.exists(path):
            self.skipTest("no exported USG model")
        run = onnxnp.Runner(path)
        # A healthy young cat, a middle-aged one with borderline values, an
        # old cat with the renal picture (high BUN and creatinine, anaemia).
        x = np.array([[27, 1.2, 15.1, 1435, 14], [40, 2.5, 11, 1500, 150], [80, 6, 9, 800, 180]], dtype=np.float32)
        out = run(x)
        logit, members = np.ravel(out["logit"]), np.asarray(out["member_logits"])
        self.assertEqual(members.shape, (3, 5))
        self.assertTrue(np.all(np.isfinite(logit)) and np.all(np.isfinite(members)))
        self.assertTrue(np.all(np.diff(logit) > 0), logit)  # in that order, more likely impaired
        self.assertLess(logit[0], 0)  # the healthy cat is screened adequate
        self.assertGreater(logit[-1], 0)
        # The members agree in sign with the ensemble on these clear cases.
        self.assertTrue(np.all(np.sign(members[0]) < 0) and np.all(np.sign(members[2]) > 0), members)


if __name__ == "__main__":
    unittest.main()
