#!/bin/bash
# End-to-end checks of the place tool: planning, writing and re-checking placements, and the
# file:line: error: messages and exit status for bad input; the same for schema-v1 JSON problems
# (solve, replay the solution document, reject a tampered one).
set -u
PLACE="$1"
DATA="$2"  # Directory holding minimalloc/ and idealloc/.
CORPUS="$3"  # third_party/dsa_solver_corpus (its pypto-lib/ problems).
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect STATUS PATTERN -- command...: exit status and a pattern in stdout+stderr.
expect() {
  local status="$1" pattern="$2"
  shift 3
  local out
  out="$("$@" 2>&1)"
  local got=$?
  [[ "$got" == "$status" ]] || fail "exit $got (want $status): $*"$'\n'"$out"
  grep -qE -- "$pattern" <<<"$out" || fail "no /$pattern/ in output of: $*"$'\n'"$out"
}

# Greedy placement of the MiniMalloc example, written to a file, then checked.
expect 0 "5 buffers, height 12, LOAD 12, height/LOAD 1.000000" -- \
  "$PLACE" "$DATA/minimalloc/input.12.csv" -o "$TMP/p.csv"
[[ "$(head -1 "$TMP/p.csv")" == "id,offset" ]] || fail "placement header"
[[ "$(wc -l <"$TMP/p.csv")" == 6 ]] || fail "placement has $(wc -l <"$TMP/p.csv") lines"
expect 0 "valid: 5 buffers, height 12" -- \
  "$PLACE" --check="$TMP/p.csv" --capacity=12 "$DATA/minimalloc/input.12.csv"

# Placement on stdout.
expect 0 "^b1,[0-9]+$" -- "$PLACE" "$DATA/minimalloc/input.12.csv"

# Search fits MiniMalloc F under its 1 MiB capacity (it stops as soon as it reaches LOAD).
expect 0 "height 1048576, LOAD 1048576" -- "$PLACE" --mode=search --budget-ms=60000 \
  --capacity=1048576 -o "$TMP/f.csv" "$DATA/minimalloc/F.1048576.csv"
expect 0 "valid" -- "$PLACE" --check="$TMP/f.csv" --capacity=1048576 \
  "$DATA/minimalloc/F.1048576.csv"

# The single-threaded search works too.
expect 0 "height 1048576, LOAD 1048576" -- "$PLACE" --mode=search --budget-ms=60000 \
  --search-threads=1 --capacity=1048576 "$DATA/minimalloc/F.1048576.csv"

# Alignment is honoured and checked.
expect 0 "height" -- "$PLACE" --alignment=4096 -o "$TMP/a.csv" "$DATA/idealloc/resnet50.csv"
expect 0 "valid" -- "$PLACE" --alignment=4096 --check="$TMP/a.csv" "$DATA/idealloc/resnet50.csv"

# A wrong placement names both buffers.
printf 'id,offset\nb1,0\nb2,0\nb3,0\nb4,0\nb5,4\n' >"$TMP/bad.csv"
expect 1 "bad.csv: error: invalid placement: buffer 'b1' \(#0\).* and buffer 'b3' \(#2\)" -- \
  "$PLACE" --check="$TMP/bad.csv" "$DATA/minimalloc/input.12.csv"
printf 'id,offset\nb1,0\nb2,4\n' >"$TMP/short.csv"
expect 1 "short.csv:3: error: no offset for buffer 'b3'" -- \
  "$PLACE" --check="$TMP/short.csv" "$DATA/minimalloc/input.12.csv"

# Over capacity: the placement is still written, the exit status says it does not fit.
expect 1 "error: height 12 exceeds --capacity=8" -- \
  "$PLACE" --capacity=8 -o "$TMP/c.csv" "$DATA/minimalloc/input.12.csv"

# Bad instances and bad flags.
printf 'id,lower,upper,size\na,0,4,8\nb,5,1,8\n' >"$TMP/inv.csv"
expect 1 "inv.csv:3: error: buffer 'b': lower 5 is greater than upper 1" -- "$PLACE" "$TMP/inv.csv"
printf 'id,start,end,size\n' >"$TMP/hdr.csv"
expect 1 "hdr.csv:1: error: header has no column 'lower'" -- "$PLACE" "$TMP/hdr.csv"
expect 1 "missing.csv: error: cannot read file" -- "$PLACE" "$TMP/missing.csv"
expect 1 "error: cannot read file: it is a directory" -- "$PLACE" "$TMP"
expect 1 "unknown option '--frobnicate'" -- "$PLACE" --frobnicate "$TMP/inv.csv"
expect 1 "--mode must be greedy or search" -- "$PLACE" --mode=fast "$TMP/inv.csv"
expect 1 "--budget-ms needs an integer >= 0" -- "$PLACE" --budget-ms=-1 "$TMP/inv.csv"
expect 1 "no instance file" -- "$PLACE"

# ------------------------------------------------------------------------------ schema-v1 JSON
# A small problem of the corpus (7 buffers in one pool, one reuse-penalty edge): solved within
# the default budget, the solution document written, then replayed by --check.
SOFT="$CORPUS/pypto-lib/examples/advanced/topk/pypto_topk_block-cross-pipe-soft.json"
expect 0 "status (optimal|feasible), reuse cost [0-9]+ \(lower bound [0-9]+\), total peak" -- \
  "$PLACE" -o "$TMP/s.json" "$SOFT"
expect 0 "^pool 1 Vec: status (optimal|feasible) peak [0-9]+ \(lower bound [0-9]+\) load [0-9]+ at time [0-9]+ reuse [0-9]+ \(lower bound [0-9]+\)" -- \
  "$PLACE" --budget-ms=50 -o "$TMP/s.json" "$SOFT"
grep -q '"problem_fingerprint": "[0-9a-f]\{16\}"' "$TMP/s.json" || fail "no fingerprint in s.json"
[[ "$(grep -c '"offset":' "$TMP/s.json")" == 7 ]] || fail "s.json has no 7 placements"
expect 0 "s.json: valid: 7 placements, reuse cost [0-9]+, total peak [0-9]+" -- \
  "$PLACE" --check="$TMP/s.json" "$SOFT"
expect 0 "^pool 1 Vec: peak [0-9]+" -- "$PLACE" --check="$TMP/s.json" "$SOFT"

# The solution document on stdout replays too.
"$PLACE" "$SOFT" >"$TMP/stdout.json" 2>/dev/null || fail "solving to stdout"
expect 0 "valid" -- "$PLACE" --check="$TMP/stdout.json" "$SOFT"

# A hard twin: its separations are constraints, and a solution of the soft one is not its solution
# (another instance, another fingerprint).
HARD="$CORPUS/pypto-lib/examples/advanced/topk/pypto_topk_block-cross-pipe-hard.json"
expect 0 "status (optimal|feasible)" -- "$PLACE" -o "$TMP/h.json" "$HARD"
expect 0 "valid" -- "$PLACE" --check="$TMP/h.json" "$HARD"
expect 1 "s.json: error: invalid solution: " -- "$PLACE" --check="$TMP/s.json" "$HARD"

# Tampered solutions: a changed fingerprint, a misaligned offset (every buffer is 32-aligned),
# every buffer at offset 0 (buffers 0 and 1 are live together).
sed -E 's/"problem_fingerprint": "[0-9a-f]{16}"/"problem_fingerprint": "0123456789abcdef"/' \
  "$TMP/s.json" >"$TMP/fp.json"
expect 1 "fp.json: error: invalid solution: .*fingerprint" -- "$PLACE" --check="$TMP/fp.json" "$SOFT"
sed -E '0,/"offset": [0-9]+/s//"offset": 7/' "$TMP/s.json" >"$TMP/misaligned.json"
expect 1 "misaligned.json: error: invalid solution: .*buffer 0 .*not aligned" -- \
  "$PLACE" --check="$TMP/misaligned.json" "$SOFT"
sed -E 's/"offset": [0-9]+/"offset": 0/' "$TMP/s.json" >"$TMP/zero.json"
expect 1 "zero.json: error: invalid solution: .*buffer 0 .* overlaps buffer 1" -- "$PLACE" --check="$TMP/zero.json" "$SOFT"

# Proven infeasible (the same problem with a 4 KiB pool): exit 1, the reason on the pool line, no
# solution written.
sed -E 's/"capacity": [0-9]+/"capacity": 4096/' "$SOFT" >"$TMP/small.json"
expect 1 "small.json: status infeasible" -- "$PLACE" -o "$TMP/none.json" "$TMP/small.json"
expect 1 "^pool 1 Vec: status infeasible .*; .*capacity" -- "$PLACE" "$TMP/small.json"
[[ ! -e "$TMP/none.json" ]] || fail "a solution was written for an infeasible problem"

# The planner's edge problems: each an infeasibility proof or the true optimum, never an
# invalid placement (policy/testdata/README.md).
EDGE=policy/testdata/edge
expect 1 "end past the capacity 160" -- "$PLACE" "$EDGE/pin_inside_larger_class.json"
expect 1 "need alignment 32" -- "$PLACE" "$EDGE/pin_inside_more_aligned_class.json"
expect 1 "no pool in common" -- "$PLACE" "$EDGE/colocated_across_pools.json"
expect 1 "separated but colocated" -- "$PLACE" "$EDGE/separated_through_colocation_chain.json"
expect 0 "status optimal, reuse cost 0 \(lower bound 0\), total peak 200, max peak 100" -- \
  "$PLACE" -o "$TMP/mp.json" "$EDGE/max_peak_before_reuse.json"
expect 0 "valid" -- "$PLACE" --check="$TMP/mp.json" "$EDGE/max_peak_before_reuse.json"
expect 0 "status optimal, reuse cost 0 \(lower bound 0\), total peak 192" -- \
  "$PLACE" -o "$TMP/multi.json" "$EDGE/multi_pool_buffers.json"
expect 0 "valid" -- "$PLACE" --check="$TMP/multi.json" "$EDGE/multi_pool_buffers.json"
# An in-place pair (problem.extensions.exact_or_disjoint) shares its base where apart it cannot
# fit; the solution replays. An extension place does not know is a warning, and ignored.
expect 0 "status optimal, reuse cost 0 \(lower bound 0\), total peak 96" -- \
  "$PLACE" -o "$TMP/eod.json" "$EDGE/exact_or_disjoint_in_place.json"
expect 0 "valid" -- "$PLACE" --check="$TMP/eod.json" "$EDGE/exact_or_disjoint_in_place.json"
# offset_of BUFFER FILE: the offset a solution document gives a buffer.
offset_of() {
  awk -v b="\"buffer\": $1," '$0 ~ b {getline; gsub(/[^0-9]/, ""); print}' "$2"
}
x_at="$(offset_of 1 "$TMP/eod.json")"
[[ -n "$x_at" && "$x_at" == "$(offset_of 2 "$TMP/eod.json")" ]] || fail "y is not at x's base"
sed "/\"buffer\": 2,/{n;s/\"offset\": [0-9]*/\"offset\": $((x_at + 32))/}" "$TMP/eod.json" \
  >"$TMP/partial.json"
expect 1 "exact_or_disjoint pair 1-2 violated: buffer 1 'x' at offset $x_at with size 64 partially" -- \
  "$PLACE" --check="$TMP/partial.json" "$EDGE/exact_or_disjoint_in_place.json"
sed 's/"exact_or_disjoint": \[/"x_future": 7, "exact_or_disjoint": [/' \
  "$EDGE/exact_or_disjoint_in_place.json" >"$TMP/future.json"
expect 0 "future.json: warning: problem.extensions.x_future: unknown extension, ignored" -- \
  "$PLACE" "$TMP/future.json"
sed 's/"exact_or_disjoint"/"separations_too"/' "$EDGE/exact_or_disjoint_in_place.json" \
  >"$TMP/unknown_pairs.json"
expect 0 "status optimal" -- "$PLACE" "$TMP/unknown_pairs.json"
# A buffer larger than its only pool is a proof naming it.
sed 's/"size": 64/"size": 262144/' "$EDGE/exact_or_disjoint_in_place.json" >"$TMP/big.json"
expect 1 "buffer 1 'x' of 262144 bytes, aligned to 32, fits in no pool it may go to: pool 0 'Vec' has 96 usable bytes" -- \
  "$PLACE" "$TMP/big.json"

# A problem that fits only with pipeline depth relaxed is infeasible as given: exit 3, and the
# solution written is the relaxed problem's (its own fingerprint), so it fails the original.
RELAX="$CORPUS/pypto-lib/models/deepseek/v4/decode_attention_csa/pypto_kv_score_proj_0-cross-pipe-hard.json"
expect 3 "status infeasible" -- "$PLACE" -o "$TMP/relaxed.json" "$RELAX"
expect 3 "pipeline-relaxed problem: status optimal" -- "$PLACE" -o "$TMP/relaxed.json" "$RELAX"
grep -q '"status_as_given": "infeasible"' "$TMP/relaxed.json" || fail "relaxed.json does not say so"
expect 1 "relaxed.json: error: invalid solution: .*fingerprint" -- \
  "$PLACE" --check="$TMP/relaxed.json" "$RELAX"

# Bad JSON input names the file (and the JSON path of a shape error).
printf '{"schema_version": 1, "profile": ' >"$TMP/truncated.json"
expect 1 "truncated.json: byte [0-9]+: JSON syntax error" -- "$PLACE" "$TMP/truncated.json"
sed -E '0,/"size": [0-9]+/s//"size": "big"/' "$SOFT" >"$TMP/shape.json"
expect 1 "shape.json: problem\.buffers\[0\]\.size" -- "$PLACE" "$TMP/shape.json"
expect 1 "truncated.json: byte [0-9]+: JSON syntax error" -- \
  "$PLACE" --check="$TMP/truncated.json" "$SOFT"
expect 1 "missing.json: error: cannot read file" -- "$PLACE" "$TMP/missing.json"
expect 1 "--capacity applies to CSV instances only" -- "$PLACE" --capacity=8 "$SOFT"

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all place checks passed"
