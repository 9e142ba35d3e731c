#!/bin/sh
# gpu_bundle_selfcontained_test: the GPU bundle works on a machine that has only the C library,
# the NVIDIA driver and ptxas. Unpacks the archive into a temporary folder, then
#   1. every binary and library in it resolves its shared libraries (ldd, with the bundle's
#      LD_LIBRARY_PATH as run.sh sets it) inside the bundle, except the C library, the dynamic
#      loader and libcuda (dlopened at run time, never linked);
#   2. run.sh --cpu-only, in a scrubbed environment (env -i: no PATH beyond /usr/bin:/bin, a fresh
#      HOME), passes: PTX generation and ptxas assembly of every kernel, the driver's error
#      paths, and GPU tests that fail when no GPU opens and ACCELMEM_REQUIRE_GPU=1;
#   3. the same with the bundle's own glibc (what run.sh does on a machine with an older glibc),
#      for the quick tests;
#   4. run.sh wrote nothing into HOME or the bundle folder;
#   5. summary.txt has every row of a visit: the GPU rows predicted and "not measured (no GPU)",
#      the CPU timing rows at 1 to 16 threads, the PTX budget checks.
# Usage: selfcontained_test.sh BUNDLE.tar.xz PTXAS
set -eu
bundle=$1
ptxas=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
tmp=${TEST_TMPDIR:-$(mktemp -d)}
rm -rf "$tmp/unpacked" "$tmp/out" "$tmp/home"
mkdir -p "$tmp/unpacked" "$tmp/home"
tar -xJf "$bundle" -C "$tmp/unpacked"
root=$tmp/unpacked/accelmem_gpu_bundle
[ -x "$root/bin/accelmem_gpu" ] || { echo "FAIL: no bin/accelmem_gpu in the bundle"; exit 1; }
echo "bundle: $(du -sh "$root" | cut -f1) unpacked, $(wc -c <"$bundle") bytes packed"

status=0
for file in "$root"/bin/* "$root"/lib/* "$root"/testdata/*; do
  [ -f "$file" ] || continue
  env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH="$root/lib" ldd "$file" >"$tmp/ldd.txt" 2>&1 || true
  while read -r name arrow path _; do
    case $name in
      linux-vdso.so.* | /lib*/ld-linux* | statically) continue ;;
    esac
    if [ "$arrow" != "=>" ]; then
      continue
    fi
    case $name in
      libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) continue ;;
    esac
    case $path in
      "$root"/lib/*) ;;
      *)
        echo "FAIL: $(basename "$file") loads $name from $path, outside the bundle"
        status=1
        ;;
    esac
  done <"$tmp/ldd.txt"
done
[ $status -eq 0 ] && echo "ok: every shared library resolves inside the bundle (or is the C library)"

find "$root" -newer "$root/run.sh" >"$tmp/before.txt"
# ACCELMEM_CPU_CELLS: small CPU timing rows, so that the check stays quick on a loaded machine.
if env -i PATH=/usr/bin:/bin HOME="$tmp/home" PTXAS="$ptxas" ACCELMEM_CPU_CELLS=20000 \
  sh "$root/run.sh" --cpu-only "$tmp/out"; then
  echo "ok: run.sh --cpu-only passed"
else
  echo "FAIL: run.sh --cpu-only failed; its summary:"
  cat "$tmp/out/summary.txt" 2>/dev/null || true
  for log in "$tmp"/out/logs/*.log; do
    if ! grep -q '^\[  PASSED  \]' "$log" 2>/dev/null; then
      echo "--- $log"
      tail -n 40 "$log"
    fi
  done
  status=1
fi
if ! grep -q '^[1-9][0-9]* passed, 0 failed, 0 skipped' "$tmp/out/summary.txt"; then
  echo "FAIL: summary.txt does not say 'N passed, 0 failed, 0 skipped'"
  status=1
fi
# Every row of a visit is in the summary: each GPU row of predictions.tsv with its prediction and
# "not measured (no GPU)", the CPU rows at 1 to 16 threads, and the PTX budget checks.
gpu_rows=$(grep -v '^#' "$root/predictions.tsv" | grep -c .)
if [ "$(grep -c '^gpu .*| measured not measured (no GPU)$' "$tmp/out/summary.txt")" -eq "$gpu_rows" ] &&
  [ "$gpu_rows" -gt 0 ]; then
  echo "ok: summary.txt has all $gpu_rows GPU rows, predicted and marked not measured"
else
  echo "FAIL: summary.txt lacks GPU rows of predictions.tsv"
  status=1
fi
for what in gc allocate recycle struct_for; do
  for threads in 1 2 4 8 16; do
    if ! grep -q "^cpu cpu_$what threads=$threads .* us " "$tmp/out/summary.txt"; then
      echo "FAIL: summary.txt has no cpu_$what row at $threads threads"
      status=1
    fi
  done
done
if grep -q '^build GcCudaTest.PtxBudgetsPerEntry: passed' "$tmp/out/summary.txt"; then
  echo "ok: the PTX budget check is a summary row"
else
  echo "FAIL: summary.txt has no passed PTX budget row"
  status=1
fi
if grep -q "^nogpu_required_fails	passed" "$tmp/out/results.tsv"; then
  echo "ok: a GPU test fails without a GPU when ACCELMEM_REQUIRE_GPU=1"
else
  echo "FAIL: the require-GPU check did not run or did not pass"
  status=1
fi
if env -i PATH=/usr/bin:/bin HOME="$tmp/home" PTXAS="$ptxas" ACCELMEM_BUNDLED_GLIBC=1 \
  ACCELMEM_TEST_FILTER='^(CudaDriverTest|GpuTestSupportTest|PtxCodegenTest)[.]' \
  sh "$root/run.sh" --cpu-only "$tmp/out_glibc" >"$tmp/glibc.txt" 2>&1 &&
  grep -q "bundled glibc: 1" "$tmp/out_glibc/gpu.txt" &&
  grep -q '^[1-9][0-9]* passed, 0 failed, 0 skipped' "$tmp/out_glibc/summary.txt"; then
  echo "ok: run.sh passes under the bundle's own glibc"
else
  echo "FAIL: run.sh under the bundle's own glibc:"
  cat "$tmp/glibc.txt"
  status=1
fi
if [ -n "$(ls -A "$tmp/home")" ]; then
  echo "FAIL: run.sh wrote into HOME:"
  ls -A "$tmp/home"
  status=1
fi
find "$root" -newer "$root/run.sh" >"$tmp/after.txt"
if ! cmp -s "$tmp/before.txt" "$tmp/after.txt"; then
  echo "FAIL: run.sh wrote into the bundle folder:"
  diff "$tmp/before.txt" "$tmp/after.txt" || true
  status=1
fi
exit $status
