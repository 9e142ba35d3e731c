"""Batched write of 10^6 coordinates from NumPy vs the same batch through the C++ host API.

    ./bazelw run //benchmarks:python_write_bench_py        # optimized (.bazelrc: run -c opt)

Times accelmem.sparse.Runtime.write on an [N, 2] int32 coordinate array (best of --repeats),
runs //benchmarks:python_write_bench (google-benchmark, BM_Write_HostApi: the host API called
once per coordinate in C++) and prints both and their ratio; the bar is a ratio <= 2. Also
reports int64 coordinates (converted once by the binding) and the batch split over 2 threads.
Both sides build the same tree and write the same cells in the same order (see the .cc file).
"""

import argparse
import json
import subprocess
import time

import numpy as np

from accelmem import sparse

WRITES = 1000000


def coords():
    i = np.arange(WRITES, dtype=np.uint64)
    k = (i * np.uint64(2654435761)) & np.uint64((1 << 20) - 1)
    return np.stack([k >> np.uint64(10), k & np.uint64(1023)], axis=1).astype(np.int32)


def best_ms(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, (time.perf_counter() - start) * 1e3)
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cc_bench", help="path of the python_write_bench binary")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    tree = sparse.SNodeTree()
    tree.root.pointer((0, 1), (64, 64)).dense((0, 1), (16, 16)).place("x", np.float32)
    rt = sparse.Runtime(tree)
    c32 = coords()
    c64 = c32.astype(np.int64)
    values = np.arange(WRITES, dtype=np.float32)
    rt.write("x", c32, values)  # activate every block first
    assert np.array_equal(rt.read("x", c32), values)

    py_ms = best_ms(lambda: rt.write("x", c32, values), args.repeats)
    py64_ms = best_ms(lambda: rt.write("x", c64, values), args.repeats)
    py2t_ms = best_ms(lambda: rt.write("x", c32, values, num_threads=2), args.repeats)
    print("python write, int32 coords:        %8.1f ms  (%.1f ns/write)" % (py_ms, py_ms * 1e6 / WRITES))
    print("python write, int64 coords:        %8.1f ms" % py64_ms)
    print("python write, int32, 2 threads:    %8.1f ms" % py2t_ms)

    if args.cc_bench:
        out = subprocess.run(
            [args.cc_bench, "--benchmark_format=json",
             "--benchmark_repetitions=%d" % args.repeats,
             "--benchmark_report_aggregates_only=false"],
            check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
        runs = [b for b in json.loads(out)["benchmarks"]
                if b.get("run_type") == "iteration" and b["name"].startswith("BM_Write_HostApi")]
        cc_ms = min(b["real_time"] for b in runs)  # unit: ms
        print("C++ host API (BM_Write_HostApi):   %8.1f ms  (%.1f ns/write)" % (cc_ms, cc_ms * 1e6 / WRITES))
        print("ratio python / C++ (int32):        %8.2f  (bar: <= 2)" % (py_ms / cc_ms))
        print("ratio python / C++ (int64):        %8.2f" % (py64_ms / cc_ms))


if __name__ == "__main__":
    main()
