#!/bin/sh
# Allocation after a GC, accelmem's NodeManager against upstream's own code, outside Bazel: builds
# upstream_side.cc from a taichi-dev/taichi checkout (its runtime.cpp compiled natively, as the
# runtime's x64 bitcode is, with clang) and driver.cc with accelmem's sources from this checkout,
# then runs them interleaved, pinned to one CPU. Fetches nothing.
# Usage: benchmarks/upstream_check/upstream_check.sh TAICHI_CHECKOUT [ROUNDS]
# Exit status 0 when accelmem is at least as fast (the issue's bar), 2 when not, 1 on errors.
set -eu
upstream=$(cd "$1" && pwd)
rounds=${2:-41}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cxx=${CXX:-clang++-14}
flags="-std=c++17 -O2 -DNDEBUG -march=x86-64-v2"
[ -f "$upstream/taichi/runtime/llvm/runtime_module/runtime.cpp" ] ||
  { echo "no taichi/runtime/llvm/runtime_module/runtime.cpp under $upstream" >&2; exit 1; }
$cxx $flags -DARCH_x64 -w -I"$upstream" -c "$here/upstream_side.cc" -o "$out/upstream_side.o"
objs=""
for src in sparse_runtime/device/arch.cc sparse_runtime/device/runtime_memory.cc \
  sparse_runtime/device/list_manager.cc sparse_runtime/device/node_manager.cc \
  sparse_runtime/host_memory_pool.cc; do
  [ -f "$root/$src" ] || continue
  obj="$out/$(basename "$src" .cc).o"
  $cxx $flags -fno-exceptions -fno-rtti -I"$root" -c "$root/$src" -o "$obj"
  objs="$objs $obj"
done
$cxx $flags -I"$root" -c "$here/driver.cc" -o "$out/driver.o"
$cxx "$out/driver.o" "$out/upstream_side.o" $objs -o "$out/upstream_check" -lpthread
echo "$cxx; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1 /proc/loadavg)"
exec_status=0
taskset -c "${CPU:-1}" "$out/upstream_check" "$rounds" || exec_status=$?
exit $exec_status
