"""accelmem's Python package used from a downstream Bazel workspace."""

import unittest

import numpy as np

import accelmem


class ConsumerTest(unittest.TestCase):
    def test_pipeline_gives_addresses(self):
        # The default pipeline gives both tiles a Vec buffer with an address.
        program = accelmem.ir.parse(
            "@function(type=AIV)\n"
            "def f(x: Tensor[[16, 16], FP32]) -> Tensor[[16, 16], FP32]:\n"
            "    a: Tile[[16, 16], FP32, Vec] = tile.load(x, [0, 0], [16, 16])\n"
            "    b: Tile[[16, 16], FP32, Vec] = tile.muls(a, 2.0)\n"
            "    r: Tensor[[16, 16], FP32] = tile.store(b, [0, 0], x)\n"
            "    return r\n",
            filename="f.tile")
        planned = accelmem.passes.pipeline()(program)
        text = planned.print()
        self.assertIn("tile.alloc(Vec, 0,", text)
        self.assertNotIn("tile.alloc(Vec, -1,", text)

    def test_place_separates_overlapping_buffers(self):
        # Two buffers alive at the same time get disjoint ranges; a third, later one reuses 0.
        lower = np.array([0, 0, 5], dtype=np.int64)
        upper = np.array([4, 4, 9], dtype=np.int64)
        size = np.array([32, 32, 64], dtype=np.int64)
        offsets = accelmem.policy.place(lower, upper, size)
        self.assertEqual(sorted(offsets[:2].tolist()), [0, 32])
        self.assertEqual(int(offsets[2]), 0)
        accelmem.policy.check(lower, upper, size, offsets)


if __name__ == "__main__":
    unittest.main()
