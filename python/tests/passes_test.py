"""Tests of accelmem.passes and accelmem.backends."""

import unittest

from accelmem import backends, ir, passes

LOOP = """\
@function(type=AIV)
def accumulate(x: Tensor[[64, 64], FP32], out: Tensor[[64, 64], FP32]) -> Tensor[[64, 64], FP32]:
    x0: Tile[[64, 64], FP32, Vec] = tile.load(x, [0, 0], [64, 64])
    other: Tile[[64, 64], FP32, Vec] = tile.exp(x0)
    for i, (acc,) in range(0, 4, 1, init=(x0,)) -> (acc_out: Tile[[64, 64], FP32, Vec],):
        nxt: Tile[[64, 64], FP32, Vec] = tile.add(acc, other)
        yield (nxt,)
    r: Tensor[[64, 64], FP32] = tile.store(acc_out, [0, 0], out)
    return r
"""

# Three 64 KiB tiles live at once: 192 KiB of Vec, more than a 910B core has.
TOO_BIG = """\
@function(type=AIV)
def big(x: Tensor[[128, 128], FP32], y: Tensor[[128, 128], FP32]) -> Tensor[[128, 128], FP32]:
    a: Tile[[128, 128], FP32, Vec] = tile.load(x, [0, 0], [128, 128])
    b: Tile[[128, 128], FP32, Vec] = tile.load(x, [0, 0], [128, 128])
    c: Tile[[128, 128], FP32, Vec] = tile.add(a, b)
    d: Tile[[128, 128], FP32, Vec] = tile.add(c, a)
    e: Tile[[128, 128], FP32, Vec] = tile.add(d, b)
    r: Tensor[[128, 128], FP32] = tile.store(e, [0, 0], y)
    return r
"""


def addresses(program):
    return {t.name: t.memref.address for t in program.functions[0].tiles}


class PassObjectsTest(unittest.TestCase):

    def setUp(self):
        backends.reset()

    def tearDown(self):
        backends.reset()

    def test_passes_one_by_one(self):
        # init_mem_ref gives every tile a MemRef; allocate_memory_addr gives every root an address.
        p = ir.parse(LOOP)
        a = passes.init_mem_ref()(p)
        self.assertTrue(all(t.memref is not None for t in a.functions[0].tiles))
        self.assertTrue(all(t.memref.address == -1 for t in a.functions[0].tiles))
        b = passes.memory_reuse()(a)
        c = passes.allocate_memory_addr()(b)
        self.assertTrue(all(t.memref.address >= 0 for t in c.functions[0].tiles))
        passes.verify_memory_plan(c)
        # The input programs are unchanged (immutable).
        self.assertTrue(all(t.memref is None for t in p.functions[0].tiles))

    def test_pass_names(self):
        # Pass objects carry their kebab-case names, and create() finds them by name.
        self.assertEqual(passes.init_mem_ref().name, "init-memref")
        self.assertEqual(passes.memory_reuse().name, "memory-reuse")
        self.assertEqual(passes.allocate_memory_addr().name, "allocate-memory-addr")
        self.assertEqual(passes.pass_names(),
                         ["init-memref", "memory-reuse", "allocate-memory-addr"])
        with self.assertRaises(ValueError):
            passes.create("no-such-pass")

    def test_pass_needs_memrefs_first(self):
        # A pass error is a PassError naming the function.
        bad = LOOP.replace("Tile[[64, 64], FP32, Vec] = tile.load", "Tile[[n, 64], FP32, Vec] = tile.load")
        with self.assertRaises(passes.PassError) as cm:
            passes.init_mem_ref()(ir.parse(bad))
        self.assertIn("in function 'accumulate'", str(cm.exception))


class PipelineTest(unittest.TestCase):

    def setUp(self):
        backends.reset()

    def tearDown(self):
        backends.reset()

    def test_default_pipeline_matches_passes(self):
        # pipeline() equals the three passes run in order.
        p = ir.parse(LOOP)
        by_hand = passes.allocate_memory_addr()(passes.memory_reuse()(passes.init_mem_ref()(p)))
        run = passes.pipeline()
        self.assertEqual(run.passes, ["init-memref", "memory-reuse", "allocate-memory-addr"])
        self.assertEqual(run(p), by_hand)

    def test_greedy_planner_shares_disjoint_lifetimes(self):
        # The greedy planner never uses more Vec bytes than the sequential default.
        p = ir.parse(TOO_BIG)
        seq = passes.pipeline(passes="init-memref,allocate-memory-addr")(p)
        greedy = passes.pipeline(passes="init-memref,allocate-memory-addr", planner="greedy",
                                 verify_plan=True)(p)
        high = lambda q: passes.memory_plan(q)[0]["spaces"]["Vec"]["high_water"]
        self.assertLess(high(greedy), high(seq))
        self.assertEqual(high(greedy), passes.memory_plan(greedy)[0]["spaces"]["Vec"]["load"])

    def test_constrained_planner_fits_where_sequential_does_not(self):
        # On the 950 (240 KiB of Vec), sequential placement of the big program overflows Vec
        # without a proof; the constrained planner fits it (its plan checked by verify_plan).
        p = ir.parse(TOO_BIG)
        with self.assertRaises(passes.PassError) as cm:
            passes.pipeline(passes="init-memref,allocate-memory-addr", backend="ascend950")(p)
        self.assertIn("it is not proven that nothing fits", str(cm.exception))
        self.assertIn("largest live buffers: 'mem_vec_0' ('a') 65536 bytes", str(cm.exception))
        q = passes.pipeline(passes="init-memref,allocate-memory-addr", backend="ascend950",
                            planner="constrained", verify_plan=True)(p)
        self.assertEqual(passes.memory_plan(q)[0]["spaces"]["Vec"]["high_water"], 196608)
        # On the 910B (184 KiB) three 64 KiB tiles are live at once: no fit is proven.
        with self.assertRaises(passes.PassError) as cm:
            passes.pipeline(passes="init-memref,allocate-memory-addr", backend="ascend910b",
                            planner="constrained")(p)
        self.assertIn("LOAD 196608 bytes against a capacity of 188416", str(cm.exception))
        self.assertIn("no fit is proven", str(cm.exception))
        single = passes.allocate_memory_addr(planner="constrained")(passes.init_mem_ref()(p))
        passes.verify_memory_plan(single)

    def test_backend_capacity_error(self):
        # With the 910B backend, sequential placement of the big program overflows Vec.
        p = ir.parse(TOO_BIG)
        with self.assertRaises(passes.PassError) as cm:
            passes.pipeline(passes="init-memref,allocate-memory-addr", backend="ascend910b")(p)
        self.assertIn("exceeds platform limit", str(cm.exception))
        # The pipeline selected the backend only while it ran.
        self.assertIsNone(backends.current())
        # Without a backend there is no capacity check.
        passes.pipeline(passes="init-memref,allocate-memory-addr")(p)

    def test_unknown_options(self):
        # Unknown planner, backend or pass names are ValueErrors when the pipeline is made.
        with self.assertRaises(ValueError):
            passes.pipeline(planner="best")
        with self.assertRaises(ValueError):
            passes.pipeline(backend="ascend000")
        with self.assertRaises(ValueError):
            passes.pipeline(passes="init-memref,nope")

    def test_after_pass_callback(self):
        # after_pass sees every pass name with the program it produced.
        seen = []
        passes.pipeline(after_pass=lambda name, prog: seen.append((name, prog.print())))(
            ir.parse(LOOP))
        self.assertEqual([n for n, _ in seen],
                         ["init-memref", "memory-reuse", "allocate-memory-addr"])
        self.assertIn("tile.alloc(Vec, 0,", seen[-1][1])

    def test_search_planner_runs(self):
        # The search planner with a small budget gives a verified plan.
        out = passes.pipeline(planner="search", budget_ms=20, verify_plan=True)(ir.parse(TOO_BIG))
        passes.verify_memory_plan(out)


class BackendsTest(unittest.TestCase):

    def tearDown(self):
        backends.reset()

    def test_names_and_selection(self):
        # Both Ascend SoCs are registered; set/current/use select them process-wide.
        names = backends.names()
        self.assertIn("ascend910b", names)
        self.assertIn("ascend950", names)
        self.assertIsNone(backends.current())
        with backends.use("ascend950"):
            self.assertEqual(backends.current(), "ascend950")
        self.assertIsNone(backends.current())
        backends.set("ascend910b")
        self.assertEqual(backends.current(), "ascend910b")
        with self.assertRaises(ValueError):
            backends.set("nope")

    def test_capacity(self):
        # Capacities are positive for on-chip spaces and differ between the SoCs.
        vec910 = backends.capacity("ascend910b", "Vec")
        vec950 = backends.capacity("ascend950", "Vec")
        self.assertGreater(vec910, 0)
        self.assertGreater(vec950, 0)
        with self.assertRaises(ValueError):
            backends.capacity("ascend910b", "Nowhere")

    def test_selected_backend_reaches_passes(self):
        # A backend selected with backends.set() applies to individual pass objects.
        p = passes.init_mem_ref()(ir.parse(TOO_BIG))
        passes.allocate_memory_addr()(p)  # fine without a backend
        with backends.use("ascend910b"):
            with self.assertRaises(passes.PassError):
                passes.allocate_memory_addr()(p)


if __name__ == "__main__":
    unittest.main()
