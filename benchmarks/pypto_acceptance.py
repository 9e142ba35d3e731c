#!/usr/bin/env python3
"""The constrained planner on dsa-solver's held-out PyPTO set (benchmarks/pypto/).

The planner is developed on pypto-lib/ (vendored in third_party/dsa_solver_corpus); pypto/ is
kept for acceptance and is not vendored, so this reads it from a checkout of
github.com/tonibohnlein/dsa-solver:

    ./bazelw build -c opt //tools:place
    python3 benchmarks/pypto_acceptance.py PATH/TO/dsa-solver [--place bazel-bin/tools/place]

It runs `place` (default budget, one thread) on every problem, prints the statuses, the median
and 95th percentile of the planner's own time, and joins the hard/soft pairs to the published
results/dsa-rp-v1/paired-objectives.csv by the source fingerprint (every pair, hash-suffixed
names included): pairs that
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
    relaxed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            run = subprocess.run([args.place, path, "-o", os.path.join(tmp, "solution.json")],
                                 capture_output=True, text=True)
            match = line.search(run.stdout + run.stderr)
            if match is None:
                sys.exit("%s: unexpected output:\n%s%s" % (path, run.stdout, run.stderr))
            # The first status line is the problem as given; exit 3 means it is infeasible and
            # only the pipeline-relaxed problem (another problem) fits: counted apart.
            status = match.group(1)
            if run.returncode == 3:
                relaxed += 1
            results[path] = (status, int(match.group(2)), float(match.group(4)))
            statuses[status] = statuses.get(status, 0) + 1
    times = sorted(r[2] for r in results.values())
    print("%d problems as given: %s; %d of the infeasible fit with pipeline depth relaxed "
          "(not counted as fitting); planner time median %.3f ms, p95 %.3f ms" %
          (len(files), ", ".join("%s %d" % kv for kv in sorted(statuses.items())), relaxed,
           times[len(times) // 2], times[int(len(times) * 0.95)]))
    # Pairs by the source fingerprint: file names carry hash suffixes that a name swap misses.
    by_fingerprint = {}
    for path in files:
        with open(path) as f:
            fingerprint = json.load(f)["metadata"].get("corpus_source_fingerprint_fnv1a64")
        name = os.path.basename(path)
        kind = "soft" if "-soft" in name else "hard" if "-hard" in name else None
        if fingerprint is None or kind is None:
            continue
        by_fingerprint.setdefault(fingerprint, {})[kind] = path
    pairs = fit = proven = published_proven = above = 0
    total = published_total = 0
    for fingerprint, pair in sorted(by_fingerprint.items()):
        if "soft" not in pair or "hard" not in pair:
            print("unpaired: %s" % pair)
            continue
        row = published.get(fingerprint)
        if row is None:
            print("no published result for %s" % pair["soft"])
            continue
        pairs += 1
        published_proven += row["optimum_proven"] == "true"
        published_total += int(row["best_known_cost"]) if row["best_known_cost"] else 0
        soft, hard = results[pair["soft"]], results[pair["hard"]]
        if soft[0] in ("optimal", "feasible"):
            fit += 1
            total += soft[1]
            best = int(row["best_known_cost"])
            if soft[1] > best:
                above += 1
                print("above the published best: %s %d > %d" % (pair["soft"], soft[1], best))
        if soft[0] == "optimal" or (soft[0] == "infeasible" and hard[0] == "infeasible"):
            proven += 1
    print("%d pairs: %d fit, total soft reuse %d (published best total %d), proven %d "
          "(published %d), %d above the published best" %
          (pairs, fit, total, published_total, proven, published_proven, above))

if __name__ == "__main__":
    main()
