"""pop_traindata's radiograph pool: --pool-content mixes generators, and a
cached pool is never reused for other contents."""
import os
import tempfile
import unittest

import numpy as np

import pop_traindata as td
import xraysim


class TestPool(unittest.TestCase):
    def setUp(self):
        td._pool = None

    def tearDown(self):
        td._pool = None

    def test_contents_cycle_and_cache_is_checked(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "pool.npz")
            pool = td.load_pool(3, path, contents=("xraysim", "phantom", "xraysim2"))
            self.assertEqual(len(pool), 3)
            for a in pool:
                self.assertEqual(a.dtype, np.uint8)
                self.assertEqual(a.ndim, 2)
                self.assertTrue(260 <= max(a.shape) <= 520, a.shape)
            # Image 0 is the first world's render, as the default pool's.
            self.assertTrue(np.array_equal(pool[0], td._pool_render((0, ("xraysim",)))))
            # Image 2 is the second world's: another picture of the same seed.
            first = np.asarray(xraysim.generate(td.POOL_SEED + 2, long_side=max(pool[2].shape),
                                                present_opts={"lightbox": False, "tint": "grey"})[0].convert("L"))
            self.assertFalse(first.shape == pool[2].shape and np.array_equal(first, pool[2]))
            # The cache answers for its own contents (and for a worker that
            # does not say), and refuses others.
            td._pool = None
            self.assertEqual(len(td.load_pool(0, path, contents=("xraysim", "phantom", "xraysim2"))), 3)
            td._pool = None
            self.assertEqual(len(td.load_pool(0, path)), 3)
            td._pool = None
            with self.assertRaises(SystemExit):
                td.load_pool(0, path, contents=("xraysim",))


if __name__ == "__main__":
    unittest.main()
