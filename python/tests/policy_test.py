"""Tests of accelmem.policy: planner, LOAD, checker over NumPy arrays."""

import unittest

import numpy as np

from accelmem import policy


def random_instance(seed, n=200, steps=100):
    rng = np.random.default_rng(seed)
    lower = rng.integers(0, steps, n)
    upper = lower + rng.integers(1, 20, n)
    size = rng.integers(1, 4096, n)
    return lower.astype(np.int64), upper.astype(np.int64), size.astype(np.int64)


class PlaceTest(unittest.TestCase):

    def test_small_instance_reaches_load(self):
        # Greedy places a simple instance at LOAD and the checker accepts it.
        lower = np.array([0, 1, 2], dtype=np.int64)
        upper = np.array([2, 3, 4], dtype=np.int64)
        size = np.array([64, 32, 64], dtype=np.int64)
        offsets = policy.place(lower, upper, size)
        self.assertEqual(offsets.dtype, np.int64)
        self.assertEqual(offsets.shape, (3,))
        policy.check(lower, upper, size, offsets)
        self.assertEqual(policy.load(lower, upper, size), 96)
        self.assertEqual(policy.height(lower, upper, size, offsets), 96)

    def test_random_instances_are_valid_and_aligned(self):
        # On random instances every placement is valid, aligned, and no lower than LOAD.
        for seed in range(5):
            lower, upper, size = random_instance(seed)
            offsets = policy.place(lower, upper, size, alignment=32)
            self.assertTrue(np.all(offsets % 32 == 0))
            policy.check(lower, upper, size, offsets, alignment=32)
            self.assertGreaterEqual(policy.height(lower, upper, size, offsets),
                                    policy.load(lower, upper, size))

    def test_search_not_worse_than_greedy(self):
        # Search starts from greedy and never returns a higher placement.
        lower, upper, size = random_instance(7, n=60)
        greedy = policy.plan(lower, upper, size)
        search = policy.plan(lower, upper, size, mode="search", budget_ms=50)
        self.assertLessEqual(search.height, greedy.height)
        self.assertGreaterEqual(search.lower_bound, search.load)
        policy.check(lower, upper, size, search.offsets)

    def test_other_integer_arrays_and_lists(self):
        # int32 arrays and Python lists are accepted (converted once).
        offsets = policy.place(np.array([0, 0], np.int32), [1, 1], (8, 8))
        self.assertEqual(sorted(offsets.tolist()), [0, 8])

    def test_capacity_flag(self):
        # plan() reports whether the placement fits the capacity.
        lower, upper, size = [0, 0], [1, 1], [64, 64]
        self.assertTrue(policy.plan(lower, upper, size, capacity=128).within_capacity)
        self.assertFalse(policy.plan(lower, upper, size, capacity=100).within_capacity)

    def test_invalid_instances(self):
        # Bad instances and options are ValueErrors.
        with self.assertRaises(ValueError):
            policy.place([0], [1], [-1])
        with self.assertRaises(ValueError):
            policy.place([2], [1], [8])
        with self.assertRaises(ValueError):
            policy.place([0, 1], [1], [8])
        with self.assertRaises(ValueError):
            policy.place([0], [1], [8], mode="best")


class CheckTest(unittest.TestCase):

    def test_overlap_raises(self):
        # Two buffers live at once at the same address are rejected, naming both.
        lower, upper, size = [0, 1], [2, 3], [64, 64]
        with self.assertRaises(policy.PlacementError) as cm:
            policy.check(lower, upper, size, [0, 32])
        self.assertIn("#0", str(cm.exception))
        self.assertIn("#1", str(cm.exception))
        policy.check(lower, upper, size, [0, 64])

    def test_disjoint_lifetimes_may_share(self):
        # Buffers whose lifetimes do not intersect may take the same address.
        policy.check([0, 2], [2, 4], [64, 64], [0, 0])

    def test_alignment_and_capacity(self):
        # Misaligned offsets and buffers above the capacity are rejected.
        with self.assertRaises(policy.PlacementError):
            policy.check([0], [1], [8], [4], alignment=8)
        with self.assertRaises(policy.PlacementError):
            policy.check([0], [1], [8], [0], capacity=4)
        self.assertTrue(issubclass(policy.PlacementError, ValueError))


if __name__ == "__main__":
    unittest.main()
