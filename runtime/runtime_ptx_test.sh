#!/bin/sh
# runtime_ptx_test: the runtime's nvptx64 bitcode (//runtime:runtime_cuda: the sparse runtime's
# and the GC's device sources, compiled for ARCH_cuda with the flags of bazel/device_code.bzl),
# lowered to PTX by llc and assembled by ptxas for sm_90: proof that the CUDA path
# (warp-representative locked_task, __nvvm atomics and fences) is real code, not just code that
# parses. Skipped (incompatible) without a CUDA toolkit.
# Usage: runtime_ptx_test.sh LLC PTXAS RUNTIME_CUDA_BC
set -eu
llc=$1 ptxas=$2 bc=$3
out=${TEST_TMPDIR:-$(mktemp -d)}
"$llc" -march=nvptx64 -mcpu=sm_80 -mattr=+ptx70 "$bc" -o "$out/runtime.ptx"
"$ptxas" -arch=sm_90 "$out/runtime.ptx" -o "$out/runtime.cubin"
for symbol in Pointer_activate Dynamic_allocate Bitmasked_deactivate gc_serial; do
  grep -q "$symbol" "$out/runtime.ptx" || { echo "missing $symbol in PTX"; exit 1; }
done
echo "runtime PTX assembles for sm_90 ($(wc -l < "$out/runtime.ptx") lines)"
