#!/bin/bash
# End-to-end checks of tile_opt: the upstream pass's two examples give exactly their "after" allocs,
# flags, exit statuses (0 ok, 1 error, 2 bad flags) and error formats.
set -u
TILE_OPT="$1"
PLACE="$2"
SHED="$3"  # a testdata case whose pipelined loop's depth memory-reuse sheds
EX="passes/examples"
fail=0
check() {  # check NAME CONDITION...
  local name="$1"; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fail=1; fi
}
tmp="${TEST_TMPDIR:-/tmp}/tile_opt_test.$$"
mkdir -p "$tmp"

# Upstream example 1 through allocate-memory-addr alone: its "before" -> its "after".
"$TILE_OPT" --passes=allocate-memory-addr "$EX/seed_vec_before.tile" > "$tmp/a.txt"
check "seed1 exit 0" test $? -eq 0
check "seed1 mem_vec_0 at 0" grep -qx '    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)' "$tmp/a.txt"
check "seed1 mem_vec_1 at 16384" grep -qx '    mem_vec_1: MemRefType = tile.alloc(Vec, 16384, 16384, 1)' "$tmp/a.txt"

# Seed example 1 as a whole function through the default pipeline: the same two allocs, only.
"$TILE_OPT" --pipeline=default "$EX/seed_vec.tile" > "$tmp/b.txt"
check "seed1 pipeline exit 0" test $? -eq 0
check "seed1 pipeline allocs" test "$(grep 'tile.alloc' "$tmp/b.txt")" = "$(printf '    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 16384, 0)\n    mem_vec_1: MemRefType = tile.alloc(Vec, 16384, 16384, 1)')"

# Seed example 2: one root per space, each at address 0 (stdin input, -o output).
"$TILE_OPT" --passes=init-memref,memory-reuse,allocate-memory-addr -o "$tmp/c.txt" - < "$EX/seed_multi_space.tile"
check "seed2 exit 0" test $? -eq 0
check "seed2 allocs" test "$(grep 'tile.alloc' "$tmp/c.txt")" = "$(printf '    mem_vec_0: MemRefType = tile.alloc(Vec, 0, 2048, 0)\n    mem_left_1: MemRefType = tile.alloc(Left, 0, 2048, 1)\n    mem_right_2: MemRefType = tile.alloc(Right, 0, 2048, 2)\n    mem_acc_3: MemRefType = tile.alloc(Acc, 0, 2048, 3)')"

# The output parses back and is a fixed point of the pipeline's last pass.
"$TILE_OPT" --passes=allocate-memory-addr "$tmp/b.txt" > "$tmp/b2.txt"
check "fixed point" cmp -s "$tmp/b.txt" "$tmp/b2.txt"

# Backends: ascend910b plans the same example; print-after-all names each pass on stderr.
"$TILE_OPT" --pipeline=default --backend=ascend910b --print-after-all "$EX/seed_vec.tile" > /dev/null 2> "$tmp/d.err"
check "print-after-all" test "$(grep -c '^# ----- IR after' "$tmp/d.err")" -eq 3

# A pipelined loop whose stages do not fit: memory-reuse sheds its depth and tile_opt says so on
# stderr, naming the function, the space and the loop; the run still succeeds.
sed '/^# ==== expected ====/,$d' "$SHED" > "$tmp/shed.tile"
"$TILE_OPT" --pipeline=default --backend=ascend910b "$tmp/shed.tile" > /dev/null 2> "$tmp/shed.err"
check "shed exit 0" test $? -eq 0
check "shed note" grep -q "^note: in function 'mm': Left cannot hold the stages of the pipelined loop over 'k'" "$tmp/shed.err"

# memory-map: one SVG per function into a directory.
"$TILE_OPT" --pipeline=default --emit=memory-map -o "$tmp/map" "$EX/seed_multi_space.tile"
check "memory-map exit 0" test $? -eq 0
check "memory-map file" grep -q '<svg' "$tmp/map/multi.svg"
check "memory-map panels" test "$(grep -c 'class="space"' "$tmp/map/multi.svg")" -eq 4

# proto output is binary and non-empty.
"$TILE_OPT" --pipeline=default --emit=proto -o "$tmp/p.bin" "$EX/seed_vec.tile"
check "proto exit 0" test $? -eq 0
check "proto non-empty" test -s "$tmp/p.bin"

# Errors: parse errors with file:line:col, pass errors naming the function, status 1.
printf 'def f(a: Tensor[[4], FP32]) -> Tensor[[4], FP32]:\n    b: Tile[[4], FP32, Vec] = tile.nope(a)\n    return a\n' > "$tmp/bad.tile"
"$TILE_OPT" --pipeline=default "$tmp/bad.tile" > /dev/null 2> "$tmp/e1.err"
check "parse error exit 1" test $? -eq 1
check "parse error format" grep -q "bad.tile:2:[0-9]*: error: " "$tmp/e1.err"
printf 'def f(a: Tensor[[4], FP32], n: Index) -> Tensor[[4], FP32]:\n    b: Tile[[n], FP32, Vec] = tile.load(a, [0], [n])\n    return a\n' > "$tmp/dyn.tile"
"$TILE_OPT" --pipeline=default "$tmp/dyn.tile" > /dev/null 2> "$tmp/e2.err"
check "pass error exit 1" test $? -eq 1
check "pass error format" grep -q "^error: in function 'f': value 'b' has a non-static shape" "$tmp/e2.err"
printf '@function(type=InCore)\ndef big(a: Tensor[[512, 512], FP32]) -> Tensor[[512, 512], FP32]:\n    t: Tile[[512, 512], FP32, Vec] = tile.load(a, [0, 0], [512, 512])\n    r: Tensor[[512, 512], FP32] = tile.store(t, [0, 0], a)\n    return r\n' > "$tmp/big.tile"
"$TILE_OPT" --pipeline=default --backend=ascend910b "$tmp/big.tile" > /dev/null 2> "$tmp/e3.err"
check "capacity exit 1" test $? -eq 1
check "capacity message" grep -qx "error: in function 'big': Vec buffer usage (1048576 bytes) exceeds platform limit (188416 bytes); the peak is at statement 2 (line 3, where 't' is defined): LOAD 1048576 bytes against a capacity of 188416; largest live buffers: 'mem_vec_0' ('t') 1048576 bytes; no fit is proven: LOAD exceeds the capacity" "$tmp/e3.err"
check "capacity one line" test "$(wc -l < "$tmp/e3.err")" -eq 1

# Six 32 KiB tiles, three live at once: sequential placement overflows the 910B Vec (184 KiB),
# without a proof; the constrained planner fits them and proves its plan optimal.
cat > "$tmp/six.tile" <<'SIX'
@function(type=AIV)
def six(x: Tensor[[64, 128], FP32]) -> Tensor[[64, 128], FP32]:
    a: Tile[[64, 128], FP32, Vec] = tile.load(x, [0, 0], [64, 128])
    b: Tile[[64, 128], FP32, Vec] = tile.load(x, [0, 0], [64, 128])
    c: Tile[[64, 128], FP32, Vec] = tile.add(a, b)
    d: Tile[[64, 128], FP32, Vec] = tile.exp(c)
    e: Tile[[64, 128], FP32, Vec] = tile.mul(d, a)
    f: Tile[[64, 128], FP32, Vec] = tile.sub(e, b)
    r: Tensor[[64, 128], FP32] = tile.store(f, [0, 0], x)
    return r
SIX
SIXP="--passes=init-memref,allocate-memory-addr --backend=ascend910b"
"$TILE_OPT" $SIXP "$tmp/six.tile" > /dev/null 2> "$tmp/six.err"
check "unproven overflow exit 1" test $? -eq 1
check "unproven overflow names the peak" grep -q "the peak is at statement 9 (line 5, where 'c' is defined): LOAD 98304 bytes against a capacity of 188416; largest live buffers: 'mem_vec_0' ('a') 32768 bytes, 'mem_vec_1' ('b') 32768 bytes, 'mem_vec_2' ('c') 32768 bytes; it is not proven that nothing fits" "$tmp/six.err"
"$TILE_OPT" $SIXP --planner=constrained --stats "$tmp/six.tile" > "$tmp/six.txt" 2> "$tmp/six.stats"
check "constrained fits exit 0" test $? -eq 0
check "stats per pass" grep -q "^# stats: pass allocate-memory-addr took [0-9.]* ms$" "$tmp/six.stats"
check "stats per space" grep -qx "# stats: function 'six' Vec: peak 98304 bytes, LOAD 98304 bytes, capacity 188416, reuse cost 0 (lower bound 0), plan constrained, status optimal" "$tmp/six.stats"
"$TILE_OPT" $SIXP --planner=constrained --print-after-all "$tmp/six.tile" > /dev/null 2> "$tmp/six.dump"
check "print-after-all stats" grep -q "^# stats: function 'six' Vec: .*status optimal$" "$tmp/six.dump"

# --emit=dsa-json: one problem per function, which place solves; the solution replays.
"$TILE_OPT" $SIXP --emit=dsa-json -o "$tmp/problems" "$tmp/six.tile"
check "dsa-json exit 0" test $? -eq 0
check "dsa-json file" grep -q '"instance": "six"' "$tmp/problems/six.json"
"$TILE_OPT" $SIXP --emit=dsa-json "$tmp/six.tile" > "$tmp/six.stream.json"
check "dsa-json stream = file" cmp -s "$tmp/six.stream.json" "$tmp/problems/six.json"
"$PLACE" -o "$tmp/six.solution.json" "$tmp/problems/six.json" 2> /dev/null
check "place solves the export" test $? -eq 0
"$TILE_OPT" $SIXP --planner="$tmp/six.solution.json" --stats "$tmp/six.tile" > "$tmp/six.replayed" 2> "$tmp/replay.err"
check "replay exit 0" test $? -eq 0
check "replay stats" grep -q "plan replay, status replayed$" "$tmp/replay.err"
sed 's/"problem_fingerprint": "[0-9a-f]*"/"problem_fingerprint": "0000000000000000"/' "$tmp/six.solution.json" > "$tmp/bad.solution.json"
"$TILE_OPT" $SIXP --planner="$tmp/bad.solution.json" "$tmp/six.tile" > /dev/null 2> "$tmp/replay2.err"
check "stale replay exit 1" test $? -eq 1
check "stale replay message" grep -q "^error: in function 'six': the replayed solution does not solve the function's problem: .*fingerprint" "$tmp/replay2.err"
"$TILE_OPT" --planner=/nonexistent/solution.json "$tmp/six.tile" > /dev/null 2>&1
check "missing solution file exit 2" test $? -eq 2

# A verifier error in the input names the file, line and column.
printf 'def f(a: Tensor[[4], FP32]) -> Tensor[[4], FP32]:\n    b: Tile[[4], FP16, Vec] = tile.load(a, [0], [4])\n    return a\n' > "$tmp/type.tile"
"$TILE_OPT" --pipeline=default "$tmp/type.tile" > /dev/null 2> "$tmp/e4.err"
check "verifier error exit 1" test $? -eq 1
check "verifier error format" grep -q "type.tile:2:[0-9]*: error: in function 'f'" "$tmp/e4.err"

# Unreadable paths (a directory, a missing file, an unwritable output) give one error line and
# status 1, never an abort.
"$TILE_OPT" --pipeline=default "$tmp" > /dev/null 2> "$tmp/e5.err"
check "directory exit 1" test $? -eq 1
check "directory message" grep -qx "$tmp: error: cannot read file: it is a directory" "$tmp/e5.err"
check "directory one line" test "$(wc -l < "$tmp/e5.err")" -eq 1
"$TILE_OPT" --pipeline=default "$tmp/no_such.tile" > /dev/null 2> "$tmp/e6.err"
check "missing exit 1" test $? -eq 1
check "missing message" grep -q "no_such.tile: error: cannot read file: " "$tmp/e6.err"
"$TILE_OPT" --pipeline=default -o "$tmp/no_such_dir/out.tile" "$EX/seed_vec.tile" 2> "$tmp/e7.err"
check "unwritable exit 1" test $? -eq 1
check "unwritable message" grep -q "out.tile: error: cannot write file: " "$tmp/e7.err"

# Bad flags: usage on stderr, status 2.
"$TILE_OPT" --frobnicate "$EX/seed_vec.tile" > /dev/null 2> "$tmp/f.err"
check "bad flag exit 2" test $? -eq 2
check "bad flag usage" grep -q "^usage: tile_opt" "$tmp/f.err"
"$TILE_OPT" --passes=no-such-pass "$EX/seed_vec.tile" > /dev/null 2>&1
check "unknown pass exit 2" test $? -eq 2
"$TILE_OPT" --backend=tpu "$EX/seed_vec.tile" > /dev/null 2>&1
check "unknown backend exit 2" test $? -eq 2

# --planner: two tiles with disjoint lifetimes and no memory-reuse. Sequential gives them separate
# slots (as upstream), greedy and search let them share address 0; all pass verify_memory_plan.
printf 'def f(x: Tensor[[16, 16], FP32]) -> Tensor[[16, 16], FP32]:\n    a: Tile[[16, 16], FP32, Vec] = tile.load(x, [0, 0], [16, 16])\n    s1: Tensor[[16, 16], FP32] = tile.store(a, [0, 0], x)\n    b: Tile[[16, 16], FP32, Vec] = tile.load(x, [0, 0], [16, 16])\n    s2: Tensor[[16, 16], FP32] = tile.store(b, [0, 0], s1)\n    return s2\n' > "$tmp/two.tile"
"$TILE_OPT" --passes=init-memref,allocate-memory-addr --verify-memory-plan "$tmp/two.tile" > "$tmp/p0.txt"
check "planner default exit 0" test $? -eq 0
"$TILE_OPT" --passes=init-memref,allocate-memory-addr --planner=sequential --verify-memory-plan "$tmp/two.tile" > "$tmp/p1.txt"
check "planner=sequential is the default" cmp -s "$tmp/p0.txt" "$tmp/p1.txt"
check "sequential separate slots" test "$(grep -c 'tile.alloc(Vec, 1024,' "$tmp/p1.txt")" -eq 1
"$TILE_OPT" --passes=init-memref,allocate-memory-addr --planner=greedy --verify-memory-plan "$tmp/two.tile" > "$tmp/p2.txt"
check "planner=greedy exit 0" test $? -eq 0
check "greedy shares address 0" test "$(grep -c 'tile.alloc(Vec, 0, 1024' "$tmp/p2.txt")" -eq 2
"$TILE_OPT" --passes=init-memref,allocate-memory-addr --planner=search --planner-budget-ms=20 --verify-memory-plan "$tmp/two.tile" > "$tmp/p3.txt"
check "planner=search exit 0" test $? -eq 0
check "search shares address 0" test "$(grep -c 'tile.alloc(Vec, 0, 1024' "$tmp/p3.txt")" -eq 2
# --planner without memory-reuse on a loop whose init is read after it: init-memref puts the
# iter-arg in the init's root, so the sequential plan fails verify_memory_plan; greedy first does
# memory-reuse's carry fix-up (a fresh root, the init moved into it) and passes.
printf 'def k(x: Tensor[[16, 16], FP32]) -> Tensor[[16, 16], FP32]:\n    a: Tile[[16, 16], FP32, Vec] = tile.load(x, [0, 0], [16, 16])\n    for i, (c,) in range(0, 2, 1, init=(a,)) -> (o: Tile[[16, 16], FP32, Vec],):\n        n: Tile[[16, 16], FP32, Vec] = tile.exp(c)\n        yield (n,)\n    b: Tile[[16, 16], FP32, Vec] = tile.add(o, a)\n    r: Tensor[[16, 16], FP32] = tile.store(b, [0, 0], x)\n    return r\n' > "$tmp/carry.tile"
"$TILE_OPT" --passes=init-memref,allocate-memory-addr --verify-memory-plan "$tmp/carry.tile" > /dev/null 2> "$tmp/c0.err"
check "carry: sequential without reuse unsafe" test $? -eq 1
check "carry: sequential error names the overlap" grep -q "overlap in address" "$tmp/c0.err"
"$TILE_OPT" --passes=init-memref,allocate-memory-addr --planner=greedy --verify-memory-plan "$tmp/carry.tile" > "$tmp/c1.txt"
check "carry: greedy without reuse safe" test $? -eq 0
check "carry: greedy moved the init" grep -q "a_mv: Tile\[\[16, 16\], FP32, memref=mem_vec_.*\] = tile.move(a, Vec)" "$tmp/c1.txt"
"$TILE_OPT" --planner=best "$tmp/two.tile" > /dev/null 2> "$tmp/g.err"
check "bad planner exit 2" test $? -eq 2
check "bad planner usage" grep -q "^usage: tile_opt" "$tmp/g.err"
"$TILE_OPT" --planner=greedy --planner-budget-ms=abc "$tmp/two.tile" > /dev/null 2>&1
check "bad budget exit 2" test $? -eq 2
"$TILE_OPT" --planner-budget-ms=-5 "$tmp/two.tile" > /dev/null 2>&1
check "negative budget exit 2" test $? -eq 2

rm -rf "$tmp"
exit $fail
