#!/bin/sh
# accelmem's GPU bundle: runs every GPU test, the CUDA tests that need no GPU (PTX generation,
# ptxas assembly, the driver's error paths) and gc_bench's CUDA rows on one CUDA machine.
#
#   sh run.sh OUT_DIR              on a GPU machine: tests (each with a timeout) and benchmark
#   sh run.sh --cpu-only OUT_DIR   anywhere: the tests that need no GPU, and checks that a GPU
#                                  test fails (not skips) when no GPU opens
#
# Both modes then time the CPU GC, allocation and struct-for at 1, 2, 4, 8 and 16 threads
# (cpu_timings.txt) and write every row of a visit to summary.txt, one a line against its target
# with the value predicted.tsv predicts (predictions.tsv; GPU rows read "not measured (no GPU)" in
# --cpu-only mode). The whole run stays within 6 minutes (ACCELMEM_TOTAL_BUDGET).
#
# Needs: the NVIDIA driver (libcuda.so.1) and ptxas (PTXAS, else $CUDA_PATH/bin/ptxas,
# /usr/local/cuda/bin/ptxas or ptxas on PATH). Everything else is in this folder. Writes only to
# OUT_DIR: summary.txt ("N passed, N failed, N skipped"), results.tsv, logs/, gc_bench_cuda.json,
# gpu.txt, tmp/ (the driver's JIT cache is off). Exit status 0 when nothing failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
mode=full
if [ "${1:-}" = "--cpu-only" ]; then
  mode=cpu
  shift
fi
if [ $# -ne 1 ]; then
  echo "usage: sh $0 [--cpu-only] OUT_DIR" >&2
  exit 2
fi
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
rm -rf "$out/logs" "$out/tmp"
mkdir -p "$out/logs" "$out/tmp"

TEST_TIMEOUT=${ACCELMEM_TEST_TIMEOUT:-90}    # seconds per test
BENCH_TIMEOUT=${ACCELMEM_BENCH_TIMEOUT:-150}  # seconds for the whole benchmark
# The whole run stays under this many seconds even if every test hangs: a test starts only with
# BENCH_RESERVE seconds left for the benchmark, and its timeout is cut to what is left.
TOTAL_BUDGET=${ACCELMEM_TOTAL_BUDGET:-360}
BENCH_RESERVE=90  # the benchmark and the CPU timings (at most CPU_TIMEOUT of it)
CPU_TIMEOUT=${ACCELMEM_CPU_TIMEOUT:-45}
CPU_CELLS=${ACCELMEM_CPU_CELLS:-1000000}  # cells per CPU timing row
run_start=$(date +%s)
left() { echo $((TOTAL_BUDGET - ($(date +%s) - run_start))); }
bin=$here/bin/accelmem_gpu

# The bundle's libraries first; the caller's path after them (it may name the driver's folder).
# On a machine whose glibc is older than the bundle needs (GLIBC_REQUIRED; ACCELMEM_BUNDLED_GLIBC=1
# forces it, =0 never), the binary runs under the bundle's own glibc loader and libraries instead,
# and LD_LIBRARY_PATH stays the caller's, so that ptxas and the driver see the machine's own.
need=$(sed -n 's/^GLIBC_//p' "$here/GLIBC_REQUIRED" 2>/dev/null)
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | sed -n 's/^glibc //p')
bundled_glibc=${ACCELMEM_BUNDLED_GLIBC:-auto}
if [ "$bundled_glibc" = auto ]; then
  bundled_glibc=1
  if [ -n "$have" ] && [ -n "$need" ] &&
    [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | tail -n 1)" = "$have" ]; then
    bundled_glibc=0
  fi
fi
caller_path=${LD_LIBRARY_PATH:-}
if [ "$bundled_glibc" = 1 ]; then
  loader=$(ls "$here"/lib/glibc/ld-linux* | head -n 1)
  launch() {
    "$loader" --library-path "$here/lib/glibc:$here/lib${caller_path:+:$caller_path}" "$bin" "$@"
  }
else
  LD_LIBRARY_PATH=$here/lib${caller_path:+:$caller_path}
  export LD_LIBRARY_PATH
  launch() { "$bin" "$@"; }
fi
TEST_TMPDIR=$out/tmp
TMPDIR=$out/tmp
CUDA_CACHE_DISABLE=1
ACCELMEM_FAKE_LIBCUDA=$here/testdata/libfake_cuda.so
export LD_LIBRARY_PATH TEST_TMPDIR TMPDIR CUDA_CACHE_DISABLE ACCELMEM_FAKE_LIBCUDA
unset TEST_SRCDIR ACCELMEM_REQUIRE_GPU
if [ "$mode" = full ]; then
  ACCELMEM_REQUIRE_GPU=1  # a GPU test that cannot open the GPU fails
  export ACCELMEM_REQUIRE_GPU
fi

cuda_root=${CUDA_PATH:-/usr/local/cuda}
ptxas=${PTXAS:-}
[ -n "$ptxas" ] || { [ -x "$cuda_root/bin/ptxas" ] && ptxas=$cuda_root/bin/ptxas; }
[ -n "$ptxas" ] || { [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas; }
[ -n "$ptxas" ] || ptxas=$(command -v ptxas 2>/dev/null || true)
for stub in "$cuda_root/lib64/stubs/libcuda.so" /usr/local/cuda/lib64/stubs/libcuda.so; do
  if [ -f "$stub" ]; then
    ACCELMEM_STUB_LIBCUDA=$stub
    export ACCELMEM_STUB_LIBCUDA
    break
  fi
done

# run_timeout SECONDS accelmem_gpu ARGS...: runs the bundle's binary; exit status 124 when it ran
# out of time.
run_timeout() {
  seconds=$1
  shift 2
  if [ "$bundled_glibc" = 1 ]; then
    set -- "$loader" --library-path "$here/lib/glibc:$here/lib${caller_path:+:$caller_path}" \
      "$bin" "$@"
  else
    set -- "$bin" "$@"
  fi
  if command -v timeout >/dev/null 2>&1; then
    timeout -k 10 "$seconds" "$@"
  else
    python3 -c 'import subprocess, sys
try:
    sys.exit(subprocess.run(sys.argv[2:], timeout=float(sys.argv[1])).returncode)
except subprocess.TimeoutExpired:
    sys.exit(124)' "$seconds" "$@"
  fi
}

passed=0
failed=0
skipped=0
: >"$out/results.tsv"
record() {  # record NAME STATUS SECONDS
  printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$out/results.tsv"
  case $2 in
    passed) passed=$((passed + 1)) ;;
    skipped) skipped=$((skipped + 1)) ;;
    *) failed=$((failed + 1)) ;;
  esac
  printf '%-70s %s (%ss)\n' "$1" "$2" "$3"
}
log_name() { echo "$1" | tr '/.' '__'; }

# Host and device.
{
  echo "bundle: $here"
  echo "mode: $mode"
  echo "host: $(uname -srm)"
  echo "glibc: ${have:-unknown}, the bundle needs ${need:-?}; bundled glibc: $bundled_glibc"
  echo "ptxas: ${ptxas:-none} $([ -n "$ptxas" ] && "$ptxas" --version 2>/dev/null | tail -n 1)"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=index,name,driver_version,memory.total,compute_cap --format=csv 2>&1
    nvidia-smi 2>&1
  else
    echo "nvidia-smi: not found"
  fi
} >"$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
echo

if ! launch --gtest_list_tests >"$out/tmp/list.txt" 2>"$out/logs/list.log"; then
  echo "cannot start $bin (see $out/logs/list.log):"
  cat "$out/logs/list.log"
  echo "0 passed, 1 failed, 0 skipped" | tee "$out/summary.txt"
  exit 1
fi
# ACCELMEM_TEST_FILTER: an extended regular expression on the test names (default: all).
awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }' "$out/tmp/list.txt" |
  grep -E -- "${ACCELMEM_TEST_FILTER:-.}" >"$out/tmp/tests.txt"

if [ -z "$ptxas" ]; then
  record "ptxas (set PTXAS or CUDA_PATH)" "failed: not found" 0
fi

# GPU tests first (in full mode), then the rest.
{
  grep 'GpuTest[.]' "$out/tmp/tests.txt"
  grep -v 'GpuTest[.]' "$out/tmp/tests.txt"
} >"$out/tmp/ordered.txt"
while read -r test; do
  case $test in
    *GpuTest.*) [ "$mode" = full ] || continue ;;
  esac
  log=$out/logs/$(log_name "$test").log
  limit=$(($(left) - BENCH_RESERVE))
  [ "$limit" -le "$TEST_TIMEOUT" ] || limit=$TEST_TIMEOUT
  if [ "$limit" -le 0 ]; then
    record "$test" "failed: not run, the ${TOTAL_BUDGET}s budget is spent" 0
    continue
  fi
  start=$(date +%s)
  run_timeout "$limit" "$bin" --gtest_filter="$test" ${ptxas:+"$ptxas"} >"$log" 2>&1
  rc=$?
  seconds=$(($(date +%s) - start))
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    record "$test" "failed: timed out after ${limit}s (last lines in logs/$(log_name "$test").log)" "$seconds"
  elif [ $rc -ne 0 ]; then
    record "$test" "failed: exit $rc, see logs/$(log_name "$test").log" "$seconds"
  elif grep -q '^\[  SKIPPED \]' "$log"; then
    record "$test" skipped "$seconds"
  else
    record "$test" passed "$seconds"
  fi
done <"$out/tmp/ordered.txt"

# Without a GPU: a GPU test skips by default, fails when ACCELMEM_REQUIRE_GPU=1, and names the
# toolkit's stub libcuda when that is what the loader finds.
expect_gpu_test() {  # expect_gpu_test NAME skip|fail TEXT STUB_FIRST(0|1) [VAR=VALUE...]
  name=$1
  want=$2
  text=$3
  stub_first=$4
  shift 4
  log=$out/logs/$name.log
  start=$(date +%s)
  (
    [ $# -eq 0 ] || export "$@"
    if [ "$stub_first" = 1 ]; then  # the toolkit's stub before the driver, as a bad setup has it
      mkdir -p "$out/tmp/stub"
      ln -sf "$ACCELMEM_STUB_LIBCUDA" "$out/tmp/stub/libcuda.so.1"
      caller_path=$out/tmp/stub${caller_path:+:$caller_path}
      LD_LIBRARY_PATH=$out/tmp/stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      export LD_LIBRARY_PATH
    fi
    launch --gtest_filter=CudaDriverGpuTest.IotaKernelRoundTrip
  ) >"$log" 2>&1
  rc=$?
  seconds=$(($(date +%s) - start))
  if [ "$want" = skip ] && [ $rc -eq 0 ] && grep -q '^\[  SKIPPED \]' "$log" && grep -q "$text" "$log"; then
    record "$name" passed "$seconds"
  elif [ "$want" = fail ] && [ $rc -ne 0 ] && grep -q '^\[  FAILED  \]' "$log" && grep -q "$text" "$log"; then
    record "$name" passed "$seconds"
  else
    record "$name" "failed: expected $want with '$text', exit $rc, see logs/$name.log" "$seconds"
  fi
}
if [ "$mode" = cpu ]; then
  expect_gpu_test nogpu_default_skips skip "no CUDA device visible" 0
  expect_gpu_test nogpu_required_fails fail "ACCELMEM_REQUIRE_GPU is set" 0 ACCELMEM_REQUIRE_GPU=1
  if [ -n "${ACCELMEM_STUB_LIBCUDA:-}" ]; then
    expect_gpu_test nogpu_stub_library_fails fail "CUDA_ERROR_STUB_LIBRARY" 1 ACCELMEM_REQUIRE_GPU=1
  fi
fi

# The CPU rows: GC, allocation and struct-for at each thread count (the GPU machine has 16 cores).
limit=$(($(left) - 10))
[ "$limit" -le "$CPU_TIMEOUT" ] || limit=$CPU_TIMEOUT
[ "$limit" -gt 5 ] || limit=5
start=$(date +%s)
run_timeout "$limit" "$bin" cpu-timings "$CPU_CELLS" 1 2 4 8 16 >"$out/cpu_timings.txt" \
  2>"$out/logs/cpu_timings.log"
rc=$?
seconds=$(($(date +%s) - start))
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
  record cpu_timings "failed: timed out after ${limit}s (rows so far in cpu_timings.txt)" "$seconds"
elif [ $rc -ne 0 ]; then
  record cpu_timings "failed: exit $rc, see cpu_timings.txt and logs/cpu_timings.log" "$seconds"
else
  record cpu_timings passed "$seconds"
fi
cat "$out/cpu_timings.txt"

bench="not run (--cpu-only)"
if [ "$mode" = full ]; then
  limit=$(left)
  [ "$limit" -le "$BENCH_TIMEOUT" ] || limit=$BENCH_TIMEOUT
  [ "$limit" -gt 10 ] || limit=10
  start=$(date +%s)
  run_timeout "$limit" "$bin" bench --benchmark_min_time=0.05 \
    --benchmark_out="$out/gc_bench_cuda.json" --benchmark_out_format=json \
    >"$out/logs/gc_bench_cuda.log" 2>&1
  rc=$?
  seconds=$(($(date +%s) - start))
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    bench="failed: timed out after ${limit}s"
  elif [ $rc -ne 0 ]; then
    bench="failed: exit $rc"
  elif grep -q '"error_occurred": true' "$out/gc_bench_cuda.json" 2>/dev/null; then
    bench="failed: rows with errors (error_message in gc_bench_cuda.json)"
  else
    bench="ok"
  fi
  record gc_bench_cuda "$([ "$bench" = ok ] && echo passed || echo "$bench")" "$seconds"
  cat "$out/logs/gc_bench_cuda.log"
fi

{
  echo "$passed passed, $failed failed, $skipped skipped"
  echo "mode: $mode"
  echo "benchmark: $bench$([ "$mode" = full ] && echo ", gc_bench_cuda.json")"
  grep -v "	passed	" "$out/results.tsv" | sed 's/^/not passed: /'
  if [ -s "$out/gc_bench_cuda.json" ] && command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json, sys
for b in json.load(open(sys.argv[1])).get("benchmarks", []):
    if b.get("error_occurred"):
        print("bench %s: error: %s" % (b["name"], b.get("error_message", "")))
    else:
        print("bench %s: %.1f %s, %.2f GB/s, vs_memset %.3f" % (b["name"], b["real_time"],
              b.get("time_unit", ""), b.get("bytes_per_second", 0) / 1e9, b.get("vs_memset", 0)))
' "$out/gc_bench_cuda.json" 2>&1
  fi
  # Every row of the visit against its target: the GPU rows (predicted; measured where a
  # benchmark row measures them), the CPU rows, and the build checks (PTX budgets, ptxas).
  if [ "$mode" = full ] && [ -s "$out/gc_bench_cuda.json" ] && command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json, sys
rows = {b["name"]: b for b in json.load(open(sys.argv[1])).get("benchmarks", [])}
for line in open(sys.argv[2]):
    if line.startswith("#") or not line.strip():
        continue
    row, target, predicted, key = line.rstrip("\n").split("\t")
    measured = "not measured (no benchmark row yet)"
    if key != "-":
        name, counter, unit = key.split("|")
        b = rows.get(name)
        if b is None or b.get("error_occurred"):
            measured = "not measured (benchmark row missing or failed)"
        else:
            value = b.get(counter, b.get("counters", {}).get(counter))
            if value is not None:
                measured = "%s %.4g %s" % (counter, value, unit)
                if "vs_memset" in b and counter != "vs_memset":
                    measured += ", vs_memset %.3f" % b["vs_memset"]
    print("gpu %s: target %s | predicted %s | measured %s" % (row, target, predicted, measured))
' "$out/gc_bench_cuda.json" "$here/predictions.tsv" 2>&1
  else
    why="not measured (no GPU)"
    [ "$mode" = full ] && why="not measured (no benchmark output)"
    awk -F '\t' -v why="$why" '!/^#/ && NF == 4 {
      printf "gpu %s: target %s | predicted %s | measured %s\n", $1, $2, $3, why }' \
      "$here/predictions.tsv"
  fi
  sed -n 's/^\(cpu_[a-z_]*\) \(.*\)/cpu \1 \2 | target: none (scaling of the CPU paths, 1 to 16 threads)/p' \
    "$out/cpu_timings.txt"
  awk -F '\t' '$1 ~ /Ptx|ptxas|KernelPtx/ { printf "build %s: %s | target passed\n", $1, $2 }' \
    "$out/results.tsv"
} >"$out/summary.txt"
echo
cat "$out/summary.txt"
[ "$failed" -eq 0 ]
