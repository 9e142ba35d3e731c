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


if __name__ == "__main__":
    unittest.main()
