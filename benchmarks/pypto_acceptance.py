#!/usr/bin/env python3
"""The constrained planner on dsa-solver's held-out PyPTO set (benchmarks/pypto/).

The planner is developed on pypto-lib/ (vendored in third_party/dsa_solver_corpus); pypto/ is
kept for acceptance and is not vendored, so this reads it from a checkout of
github.com/tonibohnlein/dsa-solver:

    ./bazelw build -c opt //tools:place
    python3 benchmarks/pypto_acceptance.py PATH/TO/dsa-solver [--place bazel-bin/tools/place]

It runs `place` (default budget, one thread) on every problem, prints the statuses, the median
and 95th percentile of the planner's own time, and joins the hard/soft pairs to the published
results/dsa-rp-v1/paired-objectives.csv by the soft problem's source fingerprint: pairs that
fit, total soft reuse cost against the published best, pairs proven (soft optimal, or both
infeasible) against the published proofs, and any pair above its published best.
"""
import argparse
import csv
import glob
import json
import os
import re
import subprocess
import sys
import tempfile


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dsa_solver", help="a checkout of github.com/tonibohnlein/dsa-solver")
    parser.add_argument("--place", default="bazel-bin/tools/place")
    args = parser.parse_args()
    root = os.path.join(args.dsa_solver, "benchmarks")
    published = {}
    with open(os.path.join(root, "results/dsa-rp-v1/paired-objectives.csv")) as f:
        for row in csv.DictReader(f):
            if row["source"] == "PyPTO":
                published[row["source_fingerprint"]] = row
    files = sorted(glob.glob(os.path.join(root, "pypto/**/*.json"), recursive=True))
    if not files:
        sys.exit("no problems under " + os.path.join(root, "pypto"))
    line = re.compile(r"status (\S+), reuse cost (\d+) \(lower bound (\d+)\).*, ([\d.]+) ms")
    results, statuses = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            run = subprocess.run([args.place, path, "-o", os.path.join(tmp, "solution.json")],
                                 capture_output=True, text=True)
            match = line.search(run.stdout + run.stderr)
            if match is None:
                sys.exit("%s: unexpected output:\n%s%s" % (path, run.stdout, run.stderr))
            status = match.group(1)
            results[path] = (status, int(match.group(2)), float(match.group(4)))
            statuses[status] = statuses.get(status, 0) + 1
    times = sorted(r[2] for r in results.values())
    print("%d problems: %s; planner time median %.3f ms, p95 %.3f ms" %
          (len(files), ", ".join("%s %d" % kv for kv in sorted(statuses.items())),
           times[len(times) // 2], times[int(len(times) * 0.95)]))
    pairs = fit = proven = published_proven = above = 0
    total = published_total = 0
    for path in files:
        if not path.endswith("-soft.json"):
            continue
        with open(path) as f:
            fingerprint = json.load(f)["metadata"]["corpus_source_fingerprint_fnv1a64"]
        row = published[fingerprint]
        pairs += 1
        published_proven += row["optimum_proven"] == "true"
        soft, hard = results[path], results[path.replace("-soft.json", "-hard.json")]
        if soft[0] in ("optimal", "feasible"):
            fit += 1
            total += soft[1]
            best = int(row["best_known_cost"])
            published_total += best
            if soft[1] > best:
                above += 1
                print("above the published best: %s %d > %d" % (path, soft[1], best))
        if soft[0] == "optimal" or (soft[0] == "infeasible" and hard[0] == "infeasible"):
            proven += 1
    print("%d pairs: %d fit, total soft reuse %d (published best %d), proven %d (published %d), "
          "%d above the published best" % (pairs, fit, total, published_total, proven,
                                           published_proven, above))


if __name__ == "__main__":
    main()
