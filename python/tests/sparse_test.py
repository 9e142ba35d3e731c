"""Tests of accelmem.sparse: SNode trees, the runtime's batched operations, errors, GC."""

import threading
import unittest

import numpy as np

from accelmem import sparse

BACKENDS = ("native", "jit")


def pointer_grid():
    """A 128x128 grid of f32 `x` and i32 `n`, in 16x16 pointer blocks of 8x8 dense cells."""
    tree = sparse.SNodeTree()
    block = tree.root.pointer((0, 1), (16, 16))
    block.dense((0, 1), (8, 8)).place("x", np.float32).place("n", "i32")
    return tree, block


class TreeTest(unittest.TestCase):

    def test_builder_and_structure(self):
        # The builder chains; SNodes report type, axes, shape, children and extents.
        tree, block = pointer_grid()
        self.assertEqual(block.type, "pointer")
        self.assertEqual(block.axes, [0, 1])
        self.assertEqual(block.shape, [16, 16])
        cell = block.children[0]
        self.assertEqual(cell.type, "dense")
        self.assertEqual([c.name for c in cell.children], ["x", "n"])
        self.assertEqual(cell.children[0].dtype, np.float32)
        self.assertEqual(cell.children[1].dtype, np.int32)
        tree.finalize()
        self.assertEqual(tree.place("x").extents, [128, 128])
        self.assertEqual(block.extents, [16, 16])
        with self.assertRaises(KeyError):
            tree.place("y")

    def test_bad_trees_are_value_errors(self):
        # Invalid trees (no place under a pointer, duplicate names, bad dtype) are ValueErrors.
        tree = sparse.SNodeTree()
        tree.root.pointer(0, 8)
        with self.assertRaises(ValueError):
            sparse.Runtime(tree)
        tree = sparse.SNodeTree()
        tree.root.dense(0, 4).place("a", "f32").place("a", "f32")
        with self.assertRaises(ValueError):
            tree.finalize()
        with self.assertRaises(ValueError):
            sparse.SNodeTree().root.dense(0, 4).place("c", "complex128")
        with self.assertRaises(ValueError):
            sparse.SNodeTree().root.dense((0, 1), (4,))
        with self.assertRaises(ValueError):
            sparse.SNodeTree().root.dense(12, 4)

    def test_no_building_after_finalize(self):
        # A finalized tree cannot grow.
        tree, block = pointer_grid()
        sparse.Runtime(tree)
        with self.assertRaises(ValueError):
            block.dense(2, 4)


class RuntimeTest(unittest.TestCase):

    def for_each_backend(self, fn):
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                fn(backend)

    def test_write_read_activate(self):
        # Writes activate their path; reads give written values and 0 for inactive cells.
        def run(backend):
            tree, block = pointer_grid()
            rt = sparse.Runtime(tree, backend=backend)
            self.assertEqual(rt.backend, backend)
            coords = np.array([[3, 5], [100, 7], [127, 127]])
            rt.write("x", coords, np.array([1.5, 2.5, 3.5]))
            np.testing.assert_array_equal(rt.read("x", coords), [1.5, 2.5, 3.5])
            self.assertEqual(rt.read("x", coords).dtype, np.float32)
            np.testing.assert_array_equal(rt.read("x", [[0, 100]]), [0.0])
            np.testing.assert_array_equal(
                rt.is_active(block, [[0, 0], [12, 0], [15, 15], [1, 1]]),
                [True, True, True, False])
            rt.write("n", coords, 7)  # scalars broadcast
            np.testing.assert_array_equal(rt.read("n", coords), [7, 7, 7])
        self.for_each_backend(run)

    def test_active_indices_and_to_numpy(self):
        # active_indices lists active cells; to_numpy gives the active set with its values.
        def run(backend):
            tree, block = pointer_grid()
            rt = sparse.Runtime(tree, backend=backend)
            rt.activate(block, [[2, 3], [9, 9]])
            idx = rt.active_indices(block)
            self.assertEqual(sorted(map(tuple, idx.tolist())), [(2, 3), (9, 9)])
            coords = np.array([[16, 24], [72, 79]], dtype=np.int32)
            sparse.from_numpy(rt, "x", coords, [4.0, 5.0])
            indices, values = rt.to_numpy("x")
            self.assertEqual(indices.shape, (128, 2))  # two blocks of 8x8 cells
            self.assertEqual(values.shape, (128,))
            got = {tuple(i): v for i, v in zip(indices.tolist(), values.tolist())}
            self.assertEqual(got[(16, 24)], 4.0)
            self.assertEqual(got[(72, 79)], 5.0)
            self.assertEqual(sum(values), 9.0)
        self.for_each_backend(run)

    def test_deactivate_and_gc(self):
        # Deactivating a block recycles its cell; GC zeroes it and reuse reads 0.
        def run(backend):
            tree, block = pointer_grid()
            rt = sparse.Runtime(tree, backend=backend, auto_collect=False)
            rt.write("x", [[0, 0], [8, 0]], [1.0, 2.0])
            self.assertEqual(rt.stats(block)["cells_in_use"], 2)
            rt.deactivate(block, [[0, 0]])
            self.assertFalse(rt.is_active(block, [[0, 0]])[0])
            s = rt.stats(block)
            self.assertEqual((s["cells_in_use"], s["cells_recycled"]), (1, 1))
            rt.collect_garbage()
            s = rt.stats(block)
            self.assertEqual((s["cells_recycled"], s["cells_free"]), (0, 1))
            self.assertGreaterEqual(rt.num_gc_collections, 1)
            rt.activate(block, [[3, 3]])  # reuses the collected cell
            np.testing.assert_array_equal(rt.read("x", [[24, 24], [8, 0]]), [0.0, 2.0])
            rt.check_invariants()
            self.assertGreater(rt.bytes_mapped, 0)
        self.for_each_backend(run)

    def test_dynamic_append_length(self):
        # append returns positions; length counts per container; overflow is IndexError.
        def run(backend):
            tree = sparse.SNodeTree()
            cell = tree.root.pointer(0, 4)
            lst = cell.dynamic(1, 3)
            lst.place("p", np.int64)
            rt = sparse.Runtime(tree, backend=backend)
            pos = rt.append("p", [0, 0, 2], [10, 11, 12])
            np.testing.assert_array_equal(pos, [0, 1, 0])
            np.testing.assert_array_equal(rt.length(lst, [0, 1, 2]), [2, 0, 1])
            np.testing.assert_array_equal(rt.read("p", [[0, 0], [0, 1], [2, 0]]), [10, 11, 12])
            with self.assertRaises(IndexError):
                rt.append("p", [0, 0], [1, 2])
            rt.deactivate(lst, [0])
            np.testing.assert_array_equal(rt.length("p", [0, 2]), [0, 1])
        self.for_each_backend(run)

    def test_bitmasked(self):
        # Bitmasked cells activate and deactivate one by one and read 0 when inactive.
        tree = sparse.SNodeTree()
        bm = tree.root.dense(0, 4).bitmasked(0, 16)
        bm.place("v", np.float64)
        rt = sparse.Runtime(tree)
        rt.write("v", [5, 6], [1.0, 2.0])
        rt.deactivate(bm, [5])
        np.testing.assert_array_equal(rt.read("v", [5, 6]), [0.0, 2.0])
        np.testing.assert_array_equal(rt.is_active(bm, [5, 6]), [False, True])

    def test_errors(self):
        # Out-of-range coordinates are IndexErrors that leave the runtime unchanged; bad shapes,
        # dtypes and SNodes are ValueErrors.
        tree, block = pointer_grid()
        rt = sparse.Runtime(tree)
        with self.assertRaises(IndexError):
            rt.write("x", [[0, 0], [128, 0]], [1.0, 1.0])
        self.assertEqual(len(rt.active_indices(block)), 0)  # row 0 was not applied
        with self.assertRaises(IndexError):
            rt.read("x", [[-1, 0]])
        with self.assertRaises(IndexError):  # would wrap to [3, 0] as int32
            rt.read("x", np.array([[2**32 + 3, 0]], dtype=np.int64))
        with self.assertRaises(IndexError):
            rt.write("x", np.array([[2**64 - 1, 0]], dtype=np.uint64), [1.0])
        with self.assertRaises(ValueError):
            rt.read("x", [[0, 0, 0]])
        with self.assertRaises(ValueError):
            rt.read("x", np.array([[0.5, 1.0]]))
        with self.assertRaises(ValueError):
            rt.read("nope", [[0, 0]])
        with self.assertRaises(ValueError):
            rt.read(block, [[0, 0]])
        with self.assertRaises(ValueError):
            rt.write("x", [[0, 0]], [1.0, 2.0])
        other, _ = pointer_grid()
        with self.assertRaises(ValueError):
            rt.read(other.root.children[0], [[0, 0]])
        with self.assertRaises(ValueError):
            sparse.Runtime(tree, backend="gpu")

    def test_memory_limit_is_memory_error(self):
        # Exhausting the memory limit raises MemoryError.
        tree = sparse.SNodeTree()
        tree.root.pointer(0, 1 << 16).dense(0, 1024).place("big", np.float64)
        rt = sparse.Runtime(tree, memory_limit_bytes=64 << 20)
        coords = np.arange(0, (1 << 16) * 1024, 1024)
        with self.assertRaises(MemoryError):
            rt.activate(tree.root.children[0], coords // 1024)

    def test_parallel_batches(self):
        # A batch split over threads, and batches from several Python threads, give the same
        # values as a serial batch.
        tree, block = pointer_grid()
        rt = sparse.Runtime(tree)
        ii, jj = np.meshgrid(np.arange(128), np.arange(128), indexing="ij")
        coords = np.stack([ii.ravel(), jj.ravel()], axis=1).astype(np.int32)
        values = np.arange(len(coords), dtype=np.float32)
        rt.write("x", coords, values, num_threads=4)
        np.testing.assert_array_equal(rt.read("x", coords, num_threads=3), values)
        parts = np.array_split(np.arange(len(coords)), 4)
        threads = [threading.Thread(target=rt.write, args=("n", coords[p], p.astype(np.int32)))
                   for p in parts]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        np.testing.assert_array_equal(rt.read("n", coords), np.arange(len(coords)))



def _places(node):
    node.place("a", np.float32).place("b", np.float32).place("k", np.int32)


def _pointer_tree():
    tree = sparse.SNodeTree()
    _places(tree.root.pointer((0, 1), (4, 4)).dense((0, 1), (4, 8)))
    return tree


def _bitmasked_tree():
    tree = sparse.SNodeTree()
    _places(tree.root.dense(0, 2).bitmasked((0, 1), (2, 4)).dense((0, 1), (4, 8)))
    return tree


def _dense_tree():
    tree = sparse.SNodeTree()
    _places(tree.root.dense((0, 1), (4, 4)).dense((0, 1), (4, 8)))
    return tree


def _odd_tree():
    # Shapes that are not powers of two, and a leaf that splits only axis 1.
    tree = sparse.SNodeTree()
    _places(tree.root.pointer((0, 1), (15, 5)).dense(1, 6))
    return tree


def _bitmasked_leaf_tree():
    # Values directly under a bitmasked level: scatter_add's per-row path.
    tree = sparse.SNodeTree()
    _places(tree.root.dense(0, 4).bitmasked((0, 1), (4, 32)))
    return tree


# name -> (builder, the leaf's shape per axis: the cells one activation makes active).
STRUCT_FOR_TREES = {
    "pointer->dense": (_pointer_tree, (4, 8)),
    "bitmasked->dense": (_bitmasked_tree, (4, 8)),
    "dense->dense": (_dense_tree, (4, 8)),
    "pointer->dense(odd)": (_odd_tree, (1, 6)),
    "bitmasked leaf": (_bitmasked_leaf_tree, (1, 1)),
}


class StructForOpsTest(unittest.TestCase):
    """copy, fill_index, transform and scatter_add against a NumPy model of the grid."""

    def for_each_case(self, fn):
        for name, (build, leaf) in STRUCT_FOR_TREES.items():
            for backend in BACKENDS:
                for threads in (1, 2):
                    with self.subTest(tree=name, backend=backend, threads=threads):
                        fn(build(), leaf, backend, threads)

    def state(self, rt, place, shape):
        """The active mask and the values (0 where inactive) of `place`, from to_numpy."""
        idx, values = rt.to_numpy(place)
        active = np.zeros(shape, dtype=bool)
        full = np.zeros(shape, dtype=values.dtype)
        active[idx[:, 0], idx[:, 1]] = True
        full[idx[:, 0], idx[:, 1]] = values
        return active, full

    def assert_state(self, rt, place, active, expected):
        got_active, got = self.state(rt, place, active.shape)
        np.testing.assert_array_equal(got_active, active)
        self.assertEqual(got.dtype, expected.dtype)
        np.testing.assert_array_equal(got, np.where(active, expected, 0))

    def test_ops_match_numpy(self):
        # Each op gives exactly the model's values on the active cells and leaves the active set
        # (scatter_add: plus the touched cells' containers) and the other places as they were.
        # The model's arrays hold 0 where a cell is inactive (as a newly activated cell reads).
        def run(tree, leaf, backend, threads):
            rng = np.random.default_rng(5)
            rt = sparse.Runtime(tree, backend=backend, num_threads=threads)
            shape = tuple(tree.place("a").extents)
            coords = np.stack([rng.integers(0, shape[0], 12), rng.integers(0, shape[1], 12)], 1)
            rt.write("a", coords, rng.random(12).astype(np.float32) * 4)
            rt.write("k", coords[::2], rng.integers(-50, 50, 6).astype(np.int32))
            active, a = self.state(rt, "a", shape)
            _, k = self.state(rt, "k", shape)
            b = np.zeros(shape, np.float32)
            self.assertGreater(active.sum(), 12 if leaf != (1, 1) else 0)
            ii, jj = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), indexing="ij")

            rt.copy("a", "b")
            b = np.where(active, a, 0).astype(np.float32)
            self.assert_state(rt, "b", active, b)
            self.assert_state(rt, "a", active, a)

            rt.fill_index("b", axis=1, scale=0.5, offset=-3.0)
            b = np.where(active, jj * 0.5 - 3.0, 0).astype(np.float32)
            self.assert_state(rt, "b", active, b)
            rt.fill_index(tree.place("k"), axis=0, scale=3, offset=1)
            k = np.where(active, ii * 3 + 1, 0).astype(np.int32)
            self.assert_state(rt, "k", active, k)
            self.assert_state(rt, "a", active, a)

            rt.transform("a", a=2.0, b=1.0, c=1.0, d=1.5)
            f32 = np.float32
            a = np.where(active, (f32(2) * a + f32(1)) / (f32(1) * a + f32(1.5)), f32(0))
            self.assert_state(rt, "a", active, a)
            rt.transform("k", a=3, b=-2, d=2)  # in double, truncated toward zero
            k = np.where(active, np.trunc((3.0 * k - 2.0) / 2.0), 0).astype(np.int32)
            self.assert_state(rt, "k", active, k)

            for scatter_threads in (1, 2):
                # Few distinct cells, so rows repeat; in and out of the active set.
                cells = np.stack([rng.integers(0, shape[0], 9), rng.integers(0, shape[1], 9)], 1)
                rows = cells[rng.integers(0, len(cells), 200)]
                values = rng.random(200).astype(np.float32)
                rt.scatter_add("a", rows, values, num_threads=scatter_threads)
                np.add.at(a, (rows[:, 0], rows[:, 1]), values)
                for i, j in rows:
                    active[i // leaf[0] * leaf[0]:(i // leaf[0] + 1) * leaf[0],
                           j // leaf[1] * leaf[1]:(j // leaf[1] + 1) * leaf[1]] = True
                self.assert_state(rt, "a", active, a)
            rt.scatter_add("k", rows.astype(np.int64), 7, num_threads=threads)
            np.add.at(k, (rows[:, 0], rows[:, 1]), 7)
            self.assert_state(rt, "k", active, k)
            self.assert_state(rt, "b", active, b)
            rt.check_invariants()
        self.for_each_case(run)

    def test_big_containers(self):
        # Containers of more cells than one struct-for task (65,536): every run and row lands.
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                tree = sparse.SNodeTree()
                block = tree.root.pointer(0, 3)
                block.dense(0, 70000).place("u", np.float64).place("v", np.float64)
                rt = sparse.Runtime(tree, backend=backend, num_threads=2)
                rt.activate(block, [0, 2])
                rt.fill_index("u", scale=2.0, offset=0.25)
                rt.copy("u", "v")
                rows = np.array([0, 69999, 65536, 140000, 209999, 140000, 100000])
                rt.scatter_add("v", rows, np.arange(7.0), num_threads=2)
                idx, v = rt.to_numpy("v")
                ii = idx[:, 0]  # in layout order: ascending
                self.assertEqual(len(ii), 210000)  # block 1 activated by row 100000
                expected = np.where((ii >= 70000) & (ii < 140000), 0.0, ii * 2.0 + 0.25)
                np.add.at(expected, np.searchsorted(ii, rows), np.arange(7.0))
                np.testing.assert_array_equal(v, expected)

    def test_scatter_add_big_key_space(self):
        # Far more blocks than rows (the path that sorts the rows' blocks instead of a table).
        for backend in BACKENDS:
            for threads in (1, 2):
                with self.subTest(backend=backend, threads=threads):
                    tree = sparse.SNodeTree()
                    block = tree.root.pointer((0, 1), (1024, 2048))
                    block.dense((0, 1), (2, 2)).place("w", np.int64)
                    rt = sparse.Runtime(tree, backend=backend, num_threads=threads)
                    rt.write("w", [[5, 7]], [100])
                    rows = np.array([[5, 7], [2047, 4095], [5, 6], [2047, 4095], [0, 0]])
                    rt.scatter_add("w", rows, [1, 2, 3, 4, 5], num_threads=threads)
                    idx, w = rt.to_numpy("w")
                    got = {tuple(i): v for i, v in zip(idx.tolist(), w.tolist())}
                    self.assertEqual(len(got), 12)  # three blocks of 2x2 cells
                    self.assertEqual(got[(5, 7)], 101)
                    self.assertEqual(got[(5, 6)], 3)
                    self.assertEqual(got[(2047, 4095)], 6)
                    self.assertEqual(got[(0, 0)], 5)
                    self.assertEqual(sum(got.values()), 115)

    def test_struct_for_errors(self):
        # Mismatched places and bad arguments are ValueErrors naming what is wrong; coordinates
        # are range-checked before anything runs.
        tree = sparse.SNodeTree()
        block = tree.root.pointer(0, 4)
        block.dense(0, 8).place("x", np.float32).place("y", np.float64).place("n", np.int32)
        tree.root.dense(0, 32).place("z", np.float32)
        rt = sparse.Runtime(tree)
        with self.assertRaisesRegex(ValueError, r"f32 x.*f64 y"):
            rt.copy("x", "y")
        with self.assertRaisesRegex(ValueError, r"f32 x.*f32 z"):
            rt.copy("x", "z")
        with self.assertRaises(ValueError):
            rt.copy(block, "x")
        with self.assertRaises(ValueError):
            rt.copy("x", "nope")
        with self.assertRaisesRegex(ValueError, "axis 1"):
            rt.fill_index("x", axis=1)
        with self.assertRaisesRegex(ValueError, "c == 0"):
            rt.transform("n", c=1.0)
        with self.assertRaises(ValueError):
            rt.transform(block)
        with self.assertRaises(IndexError):
            rt.scatter_add("x", [0, 5, 32], 1.0)
        with self.assertRaises(IndexError):
            rt.scatter_add("x", [-1], 1.0)
        self.assertEqual(len(rt.active_indices(block)), 0)  # nothing ran
        with self.assertRaises(ValueError):
            rt.scatter_add("x", np.array([0.5, 1.0]), 1.0)
        with self.assertRaises(ValueError):
            rt.scatter_add("x", [0, 1], [1.0, 2.0, 3.0])
        with self.assertRaises(ValueError):
            rt.scatter_add("x", [[0, 1]], 1.0)
        self.assertEqual(len(rt.active_indices(block)), 0)
        rt.scatter_add("x", np.zeros(0, dtype=np.int32), 1.0)  # an empty batch is fine
        self.assertEqual(len(rt.active_indices(block)), 0)


if __name__ == "__main__":
    unittest.main()
