#!/bin/sh
# runtime_ptx_test: the runtime proper, compiled for ARCH_cuda (nvptx64, sm_80 + PTX 7.0 features,
# the newest clang 14 knows), linked into one module, lowered to PTX by llc and assembled by ptxas
# for sm_90: proof that the CUDA path (warp-representative locked_task, __nvvm atomics and
# fences) is real code, not just code that parses. Skipped (incompatible) without a CUDA toolkit.
# Usage: runtime_ptx_test.sh CLANG LLVM_LINK LLC PTXAS SOURCE...
set -eu
clang=$1 llvm_link=$2 llc=$3 ptxas=$4
shift 4
out=${TEST_TMPDIR:-$(mktemp -d)}
bcs=""
for src in "$@"; do
  bc="$out/$(basename "$src" .cc).bc"
  "$clang" -x c++ -std=c++17 -ffreestanding -nostdinc -fno-exceptions -fno-rtti -O3 -Wall -Werror \
    -I. -target nvptx64-nvidia-cuda -march=sm_80 -Xclang -target-feature -Xclang +ptx70 \
    -DARCH_cuda=1 -c -emit-llvm "$src" -o "$bc"
  bcs="$bcs $bc"
done
# shellcheck disable=SC2086
"$llvm_link" $bcs -o "$out/runtime_cuda.bc"
"$llc" -march=nvptx64 -mcpu=sm_80 -mattr=+ptx70 "$out/runtime_cuda.bc" -o "$out/runtime.ptx"
"$ptxas" -arch=sm_90 "$out/runtime.ptx" -o "$out/runtime.cubin"
for symbol in Pointer_activate Dynamic_allocate Bitmasked_deactivate gc_serial; do
  grep -q "$symbol" "$out/runtime.ptx" || { echo "missing $symbol in PTX"; exit 1; }
done
echo "runtime PTX assembles for sm_90 ($(wc -l < "$out/runtime.ptx") lines)"
