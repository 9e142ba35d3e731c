"""The sparse workloads of sparse_workload_bench.cc from Python, against the C++ host API.

    ./bazelw run //benchmarks:sparse_workload_bench_py     # optimized (.bazelrc: run -c opt, gcc)

Runs the workloads of //benchmarks:sparse_workload_bench through accelmem.sparse's struct-for
operations, built as the C++ rows build them (same trees, sizes and seeds: std::mt19937 and
libstdc++'s std::shuffle are reproduced below), on 1 and 2 threads (Runtime(num_threads=...),
auto_collect=False). Rounds alternate with the C++ rows (one run of the C++ binary per workload
and round, --benchmark_filter, --benchmark_format=json); per workload and thread count it prints
the medians over the rounds of the Python time, the C++ time and their ratio (the bar: <= 1.2).
Compared, per row:
  copy       y[I] = x[I] after a structure change, so the lists are generated: Runtime.copy
             against BM_Copy's whole struct-for (its real_time: the manual time is the whole
             struct-for, list generation included; the loop_GBps counter leaves it out)
  repeat     the same copy with no change in between (lists reused): BM_Repeat's real_time
  particles  one particle-to-grid frame (activate the touched blocks, scatter_add 1 per particle
             on the frame's threads, transform m / (1 + m), deactivate, collect_garbage):
             BM_Particles' frame_ms
  fill       activate the 1,024 blocks + fill_index: BM_FillClear's fill_ms
  clear+gc   deactivate them + collect_garbage: BM_FillClear's clear_gc_ms
Within a round the Python statistic is the C++ row's: the mean of the iterations for real_time,
their median for the counters. The ratio printed is the median of the rounds' ratios (each
round's two times ran back to back, so load from other processes mostly cancels), with their
range. Between timed calls Python copies memory (untimed) where the C++
row runs its interleaved baseline (memcpy, the reproduction of upstream's struct-for, or the per-cell
visitor frame), so both
start with cold caches.
"""

import argparse
import json
import re
import statistics
import subprocess
import time

import numpy as np

from accelmem import sparse

BAR = 1.2
BLOCKS, BLOCK_CELLS = 4096, 4096
SPARE_BLOCK = BLOCKS - 1
SIDE, BLOCK = 4096, 64
PARTICLES = 1 << 20
FILL_BLOCKS = BLOCKS // 4


class StdMt19937:
    """std::mt19937 with C++'s seeding (np.random.MT19937 seeds differently), vectorized."""

    _UPPER, _LOWER = np.uint32(0x80000000), np.uint32(0x7FFFFFFF)
    _MATRIX = np.uint32(0x9908B0DF)
    # One state refresh in four vectorized steps: each reads only words already final in it.
    _STEPS = [np.arange(lo, hi) for lo, hi in ((0, 227), (227, 454), (454, 623), (623, 624))]

    def __init__(self, seed):
        mt = [seed & 0xFFFFFFFF]
        for i in range(1, 624):
            mt.append((1812433253 * (mt[-1] ^ (mt[-1] >> 30)) + i) & 0xFFFFFFFF)
        self._mt = np.array(mt, dtype=np.uint32)
        self._left = np.empty(0, dtype=np.uint32)

    def _refresh(self):
        mt = self._mt
        for i in self._STEPS:
            y = (mt[i] & self._UPPER) | (mt[(i + 1) % 624] & self._LOWER)
            mt[i] = mt[(i + 397) % 624] ^ (y >> np.uint32(1)) ^ ((y & np.uint32(1)) * self._MATRIX)
        return mt.copy()

    def draw(self, n):
        """The next n outputs, as uint32."""
        parts, have = [self._left], len(self._left)
        while have < n:
            parts.append(self._refresh())
            have += 624
        y = np.concatenate(parts)
        self._left, y = y[n:], y[:n]
        y = y ^ (y >> np.uint32(11))
        y = y ^ ((y << np.uint32(7)) & np.uint32(0x9D2C5680))
        y = y ^ ((y << np.uint32(15)) & np.uint32(0xEFC60000))
        return y ^ (y >> np.uint32(18))


def std_shuffle(items, rng):
    """libstdc++'s std::shuffle (GCC 12): two swap positions per draw, Lemire's bounded draws."""

    def below(bound):  # uniform_int_distribution over [0, bound)
        product = int(rng.draw(1)[0]) * bound
        threshold = ((1 << 32) - bound) % bound
        while product & 0xFFFFFFFF < threshold:
            product = int(rng.draw(1)[0]) * bound
        return product >> 32

    i = 1
    if len(items) % 2 == 0:
        j = below(2)
        items[i], items[j] = items[j], items[i]
        i += 1
    while i != len(items):
        r = i + 1
        x = below(r * (r + 1))
        for j in (x // (r + 1), x % (r + 1)):
            items[i], items[j] = items[j], items[i]
            i += 1


def active_blocks():
    """ActiveBlocks() of the C++ file: blocks 0..4094 shuffled, the first 2,048, sorted."""
    blocks = list(range(BLOCKS - 1))
    std_shuffle(blocks, StdMt19937(2024))
    return np.array(sorted(blocks[:BLOCKS // 2]), dtype=np.int32)


def particles():
    """The particles' cells ([N, 2] int32) and the touched blocks in order of first touch."""
    r = StdMt19937(7).draw(2 * PARTICLES) % np.uint32(SIDE)
    cells = np.stack([r[0::2], r[1::2]], axis=1).astype(np.int32)
    per_side = SIDE // BLOCK
    block = (cells[:, 0] // BLOCK) * per_side + cells[:, 1] // BLOCK
    _, first = np.unique(block, return_index=True)
    touched = block[np.sort(first)]
    return cells, np.stack([touched // per_side, touched % per_side], axis=1).astype(np.int32)


class Flush:
    """A copy between timed calls, where the C++ row runs its interleaved baseline (which evicts
    the caches): 32 MiB as BM_Copy's memcpy, 64 MiB for the bigger ones."""

    def __init__(self, mib):
        self.src = np.ones(mib << 18, dtype=np.float32)
        self.dst = np.zeros_like(self.src)

    def __call__(self):
        np.copyto(self.dst, self.src)


def timed(fn):
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def copy_grid(threads, blocks):
    tree = sparse.SNodeTree()
    pointer = tree.root.pointer(0, BLOCKS)
    pointer.dense(0, BLOCK_CELLS).place("x", np.float32).place("y", np.float32)
    rt = sparse.Runtime(tree, num_threads=threads, auto_collect=False)
    rt.activate(pointer, blocks)
    rt.fill_index("x")
    return rt, pointer


def py_copy(threads, blocks, iters, flush):
    rt, pointer = copy_grid(threads, blocks)
    spare = np.array([SPARE_BLOCK], dtype=np.int32)
    times = []
    for n in range(1, iters + 1):
        rt.activate(pointer, spare)  # a structure change: the copy generates its lists
        rt.deactivate(pointer, spare)
        if n % 64 == 0:
            rt.collect_garbage()
        times.append(timed(lambda: rt.copy("x", "y")))
        flush()
    check = np.array([blocks[0] * BLOCK_CELLS + 5, blocks[-1] * BLOCK_CELLS + 7])
    assert np.array_equal(rt.read("y", check), check.astype(np.float32))
    return {"copy": statistics.mean(times)}


def py_repeat(threads, blocks, iters, flush):
    rt, _ = copy_grid(threads, blocks)
    rt.copy("x", "y")  # the lists exist
    times = []
    for _ in range(iters):
        times.append(timed(lambda: rt.copy("x", "y")))
        flush()
    return {"repeat": statistics.mean(times)}


def py_particles(threads, cells, touched, iters, flush):
    tree = sparse.SNodeTree()
    per_side = SIDE // BLOCK
    pointer = tree.root.pointer((0, 1), (per_side, per_side))
    pointer.dense((0, 1), (BLOCK, BLOCK)).place("m", np.float32)
    rt = sparse.Runtime(tree, num_threads=threads, auto_collect=False)

    def frame(check=False):
        rt.activate(pointer, touched)
        rt.scatter_add("m", cells, 1.0, num_threads=threads)  # as the C++ frame, on its threads
        rt.transform("m", c=1.0)  # m / (1 + m)
        if check:
            counts = np.bincount(cells[:, 0] * SIDE + cells[:, 1], minlength=SIDE * SIDE)
            got = rt.read("m", cells[:4096])
            want = counts[cells[:4096, 0] * SIDE + cells[:4096, 1]].astype(np.float32)
            assert np.array_equal(got, want / (np.float32(1) + want))
        rt.deactivate(pointer, touched)
        rt.collect_garbage()

    frame(check=True)
    times = []
    for _ in range(iters):
        times.append(timed(frame))
        flush()
    return {"particles": statistics.median(times)}


def py_fill_clear(threads, iters):
    tree = sparse.SNodeTree()
    pointer = tree.root.pointer(0, FILL_BLOCKS)
    pointer.dense(0, BLOCK_CELLS).place("x", np.float32)
    rt = sparse.Runtime(tree, num_threads=threads, auto_collect=False)
    every = np.arange(FILL_BLOCKS, dtype=np.int32)
    fill, clear = [], []
    for _ in range(iters):
        fill.append(timed(lambda: (rt.activate(pointer, every), rt.fill_index("x"))))
        clear.append(timed(lambda: (rt.deactivate(pointer, every), rt.collect_garbage())))
    return {"fill": statistics.median(fill), "clear+gc": statistics.median(clear)}


# C++ row -> (workload, what of its JSON entry is compared).
CC_ROWS = {
    "BM_Copy": [("copy", "real_time")],
    "BM_Repeat": [("repeat", "real_time")],
    "BM_Particles": [("particles", "frame_ms")],
    "BM_FillClear": [("fill", "fill_ms"), ("clear+gc", "clear_gc_ms")],
}


# A row's name: BM_Copy/threads:1/jit:0/manual_time (or BM_Copy/1/manual_time without ArgNames).
ROW_NAME = re.compile(r"^(\w+)/(?:threads:)?(\d+)(?:/jit:(\d+))?/")


def run_cc(cc_bench, row, min_time):
    """{(workload, threads): ms} of one run of the C++ row's native variants (both thread counts;
    the Python runtimes are native)."""
    run = subprocess.run(
        [cc_bench, "--benchmark_format=json",
         "--benchmark_filter=^%s/(threads:)?[0-9]+/(jit:0/)?manual_time" % row,
         "--benchmark_min_time=%g" % min_time],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    if run.returncode != 0:
        raise SystemExit("%s failed (%d):\n%s" % (cc_bench, run.returncode, run.stderr))
    out = run.stdout
    result = {}
    for b in json.loads(out)["benchmarks"]:
        name = ROW_NAME.match(b["name"])
        if b.get("run_type") != "iteration" or name is None or (name.group(3) or "0") != "0":
            continue
        assert b["time_unit"] == "ms", b["time_unit"]
        threads = int(name.group(2))
        for workload, field in CC_ROWS[row]:
            result[(workload, threads)] = b[field]
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cc_bench", required=True, help="the sparse_workload_bench binary")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--min_time", type=float, default=0.2,
                        help="--benchmark_min_time of each C++ run (seconds)")
    parser.add_argument("--threads", default="1,2")
    args = parser.parse_args()
    thread_counts = [int(t) for t in args.threads.split(",")]

    start = time.perf_counter()
    blocks = active_blocks()
    cells, touched = particles()
    print("inputs (mt19937, shuffle): %.2f s" % (time.perf_counter() - start))
    flush32, flush64 = Flush(32), Flush(64)
    python_rows = {
        "BM_Copy": lambda t: py_copy(t, blocks, 40, flush32),
        "BM_Repeat": lambda t: py_repeat(t, blocks, 40, flush64),
        "BM_Particles": lambda t: py_particles(t, cells, touched, 6, flush64),
        "BM_FillClear": lambda t: py_fill_clear(t, 20),
    }
    py_ms, cc_ms = {}, {}
    for r in range(args.rounds):
        for row, python_row in python_rows.items():
            cc = run_cc(args.cc_bench, row, args.min_time)
            for t in thread_counts:
                for workload, _ in CC_ROWS[row]:
                    if (workload, t) not in cc:
                        raise SystemExit("no %s row on %d threads in %s" % (row, t, args.cc_bench))
                    cc_ms.setdefault((workload, t), []).append(cc[(workload, t)])
            for t in thread_counts:
                for workload, ms in python_row(t).items():
                    py_ms.setdefault((workload, t), []).append(ms)
        print("round %d/%d done (%.0f s)" % (r + 1, args.rounds, time.perf_counter() - start))

    print()
    print("%-10s %7s %10s %10s %11s %13s" %
          ("workload", "threads", "python ms", "C++ ms", "python/C++", "round range"))
    over = []
    for row in python_rows:
        for workload, _ in CC_ROWS[row]:
            for t in thread_counts:
                py, cc = py_ms[(workload, t)], cc_ms[(workload, t)]
                # Each round's Python and C++ times ran back to back: their ratio is paired.
                ratios = [p / c for p, c in zip(py, cc)]
                ratio = statistics.median(ratios)
                mark = "" if ratio <= BAR else "  over the bar"
                if mark:
                    over.append((workload, t))
                print("%-10s %7d %10.3f %10.3f %11.2f %6.2f-%-6.2f%s" %
                      (workload, t, statistics.median(py), statistics.median(cc), ratio,
                       min(ratios), max(ratios), mark))
    print("medians over %d rounds (ratio: of the rounds' ratios); bar: python/C++ <= %.1f; %s" %
          (args.rounds, BAR, "all within" if not over else "%d over" % len(over)))


if __name__ == "__main__":
    main()
