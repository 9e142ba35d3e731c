"""Tests of accelmem.policy: planner, LOAD, checker over NumPy arrays; the constrained planner
on schema-v1 problems."""

import json
import os
import pathlib
import tempfile
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


def repo_file(*parts):
    """A data file of this repository, in the runfiles or the source tree."""
    here = os.path.dirname(os.path.abspath(__file__))
    roots = [os.path.join(here, "..", "..")]
    runfiles = os.environ.get("TEST_SRCDIR")
    if runfiles:
        roots.insert(0, os.path.join(runfiles, "accelmem"))
    for root in roots:
        path = os.path.join(root, *parts)
        if os.path.exists(path):
            return path
    raise unittest.SkipTest("%s is missing" % os.path.join(*parts))


def corpus_file(relative):
    """A file of //third_party/dsa_solver_corpus:pypto_lib."""
    return repo_file("third_party", "dsa_solver_corpus", "pypto-lib", relative)

# 7 buffers in one pool, one reuse-penalty edge, semantic separations: solved to optimality in
# well under the default budget.
TOPK_SOFT = "examples/advanced/topk/pypto_topk_block-cross-pipe-soft.json"
# Four pools (Mat, Left, Right, Acc), some without buffers.
GEMM = "examples/intermediate/gemm__pypto_gemm_tile.json"


def edge_file(name):
    """A problem of //policy/testdata:edge."""
    return repo_file("policy", "testdata", "edge", name + ".json")

class EdgeProblemTest(unittest.TestCase):
    """Problems once answered "optimal" with an invalid placement (policy/testdata/README.md)."""

    def test_infeasible_ones_are_proofs(self):
        for name, words in [("pin_inside_larger_class", "past the capacity"),
                            ("pin_inside_more_aligned_class", "alignment 32"),
                            ("colocated_across_pools", "no pool in common"),
                            ("separated_through_colocation_chain", "separated but colocated")]:
            with self.subTest(name=name):
                result = policy.solve(edge_file(name))
                self.assertEqual(result["status"], "infeasible")
                self.assertEqual(result["placements"], [])
                self.assertIsNone(result["solution"])
                self.assertIsNone(result["relaxed"])
                self.assertIn(words, result["reason"])

    def test_max_peak_before_reuse_is_solved_across_pools(self):
        result = policy.solve(edge_file("max_peak_before_reuse"))
        self.assertEqual(result["status"], "optimal")
        self.assertEqual((result["max_peak"], result["reuse_cost"]), (100, 0))
        self.assertEqual(result["reuse_lower_bound"], 0)
        self.assertEqual(result["max_peak_lower_bound"], 100)

    def test_buffers_allowed_in_several_pools_are_placed(self):
        result = policy.solve(edge_file("multi_pool_buffers"))
        self.assertEqual(result["status"], "optimal")
        self.assertEqual(result["total_peak"], 192)
        pools = {p["buffer"]: p["pool"] for p in result["placements"]}
        self.assertEqual(sorted([pools[0], pools[1]]), [0, 1])  # One in each pool.
        self.assertEqual(pools[2], 1)

    def test_an_in_place_pair_shares_its_base_or_nothing(self):
        # y fits in the 96-byte pool only in x's bytes: from x's base (exact_or_disjoint), which a
        # separation of the same pair forbids.
        path = edge_file("exact_or_disjoint_in_place")
        result = policy.solve(path)
        self.assertEqual(result["status"], "optimal")
        offsets = {p["buffer"]: p["offset"] for p in result["placements"]}
        self.assertEqual(offsets[1], offsets[2])
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
        pair = document["problem"].pop("extensions")["exact_or_disjoint"][0]
        document["problem"]["constraints"]["separations"].append(pair)
        self.assertEqual(policy.solve(document)["status"], "infeasible")

    def test_a_relaxed_answer_is_not_the_answer(self):
        path = corpus_file("models/deepseek/v4/decode_attention_csa/"
                           "pypto_kv_score_proj_0-cross-pipe-hard.json")
        result = policy.solve(path)
        self.assertEqual(result["status"], "infeasible")
        self.assertEqual(result["placements"], [])
        self.assertIsNone(result["solution"])
        relaxed = result["relaxed"]
        self.assertIsNotNone(relaxed)
        self.assertEqual(relaxed["status"], "optimal")
        self.assertTrue(relaxed["relaxed_pipeline_groups"])
        self.assertEqual(relaxed["solution"]["metadata"]["status_as_given"], "infeasible")


class SolveTest(unittest.TestCase):

    def test_path_and_dict_give_the_same_result(self):
        # A corpus file by path (str and pathlib) and the same document as a dict.
        path = corpus_file(TOPK_SOFT)
        by_path = policy.solve(path)
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
        self.assertEqual(policy.solve(document), by_path)
        self.assertEqual(policy.solve(pathlib.Path(path), budget_ms=100), by_path)

        self.assertIn(by_path["status"], ("optimal", "feasible"))
        self.assertLessEqual(by_path["reuse_lower_bound"], by_path["reuse_cost"])
        buffers = document["problem"]["buffers"]
        self.assertEqual(sorted(p["buffer"] for p in by_path["placements"]),
                         sorted(b["id"] for b in buffers))
        self.assertEqual(set(by_path["placements"][0]), {"buffer", "pool", "offset"})
        pools = by_path["pools"]
        self.assertEqual([p["pool"] for p in pools], [1])
        self.assertEqual(set(pools[0]), {
            "pool", "name", "status", "peak", "peak_lower_bound", "load", "load_time",
            "reuse_cost", "reuse_lower_bound", "reason", "relaxed_pipeline_groups"})
        self.assertIsNone(by_path["relaxed"])
        self.assertEqual(pools[0]["name"], "Vec")
        self.assertLessEqual(pools[0]["peak_lower_bound"], pools[0]["peak"])
        self.assertEqual(by_path["max_peak"], pools[0]["peak"])

        # Every placement is aligned, inside the pool and clear of the buffers live with it.
        by_id = {b["id"]: b for b in buffers}
        capacity = document["problem"]["pools"][0]["capacity"]
        spans = []
        for p in by_path["placements"]:
            b = by_id[p["buffer"]]
            self.assertEqual(p["offset"] % b["alignment"], 0)
            self.assertLessEqual(p["offset"] + b["size"], capacity)
            spans.append((p["offset"], p["offset"] + b["size"], b["live_intervals"]))
        for i, (lo1, hi1, live1) in enumerate(spans):
            for lo2, hi2, live2 in spans[i + 1:]:
                together = any(a["lower"] < c["upper"] and c["lower"] < a["upper"]
                               for a in live1 for c in live2)
                if together:
                    self.assertTrue(hi1 <= lo2 or hi2 <= lo1)

    def test_solution_document(self):
        # The solution document names the instance, carries a fingerprint and the placements.
        path = corpus_file(TOPK_SOFT)
        result = policy.solve(path)
        solution = result["solution"]
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
        self.assertEqual(solution["instance"], document["instance"])
        self.assertEqual(solution["schema_version"], 1)
        self.assertRegex(solution["problem_fingerprint"], "^[0-9a-f]{16}$")
        self.assertEqual(solution["placements"],
                         sorted(result["placements"], key=lambda p: p["buffer"]))
        self.assertEqual(solution["metadata"]["status"], result["status"])

    def test_several_pools(self):
        # One entry per pool of the problem, pools without buffers too.
        path = corpus_file(GEMM)
        result = policy.solve(path)
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
        self.assertEqual([p["pool"] for p in result["pools"]],
                         [p["id"] for p in document["problem"]["pools"]])
        self.assertEqual(result["total_peak"], sum(p["peak"] for p in result["pools"]))

    def test_infeasible(self):
        # A pool too small for what is live at once: proven infeasible, no placement.
        with open(corpus_file(TOPK_SOFT), encoding="utf-8") as f:
            document = json.load(f)
        document["problem"]["pools"][0]["capacity"] = 4096
        result = policy.solve(document)
        self.assertEqual(result["status"], "infeasible")
        self.assertEqual(result["placements"], [])
        self.assertIsNone(result["solution"])
        self.assertTrue(result["pools"][0]["reason"])

    def test_bad_input_names_the_file(self):
        # Malformed JSON and a document of the wrong shape raise ValueError naming the file.
        with tempfile.TemporaryDirectory() as tmp:
            broken = os.path.join(tmp, "broken.json")
            with open(broken, "w", encoding="utf-8") as f:
                f.write('{"schema_version": 1, "profile": ')
            with self.assertRaises(ValueError) as cm:
                policy.solve(broken)
            self.assertIn(broken, str(cm.exception))

            with open(corpus_file(TOPK_SOFT), encoding="utf-8") as f:
                document = json.load(f)
            document["problem"]["buffers"][0]["size"] = "big"
            shape = os.path.join(tmp, "shape.json")
            with open(shape, "w", encoding="utf-8") as f:
                json.dump(document, f)
            with self.assertRaises(ValueError) as cm:
                policy.solve(pathlib.Path(shape))
            self.assertIn(shape, str(cm.exception))
            self.assertIn("problem.buffers[0].size", str(cm.exception))
            # The same document as a dict: the message names the JSON path.
            with self.assertRaises(ValueError) as cm:
                policy.solve(document)
            self.assertIn("problem.buffers[0].size", str(cm.exception))

            with self.assertRaises(OSError):
                policy.solve(os.path.join(tmp, "missing.json"))
        with self.assertRaises(TypeError):
            policy.solve(42)
        with self.assertRaises(ValueError):
            policy.solve(corpus_file(TOPK_SOFT), budget_ms=-1)


if __name__ == "__main__":
    unittest.main()
