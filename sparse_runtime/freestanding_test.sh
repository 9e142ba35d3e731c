#!/bin/sh
# freestanding_test: runtime sources (the runtime proper here, the GC phases in gc/) must compile
# as freestanding C++17 (no standard headers, no exceptions, no RTTI) for both architectures they
# become bitcode for: x64 and nvptx64 (ARCH_cuda, sm_80 with PTX 7.0 features for the warp-sync
# builtins).
# Usage: freestanding_test.sh CLANG SOURCE...
set -eu
clang=$1
shift
common="-x c++ -std=c++17 -ffreestanding -nostdinc -fno-exceptions -fno-rtti -Wall -Wextra -Werror -I."
status=0
for src in "$@"; do
  for arch in x64 cuda; do
    if [ "$arch" = x64 ]; then
      flags="-target x86_64-unknown-linux-gnu -DARCH_x64=1"
    else
      flags="-target nvptx64-nvidia-cuda -march=sm_80 -Xclang -target-feature -Xclang +ptx70 -DARCH_cuda=1"
    fi
    # shellcheck disable=SC2086
    if "$clang" $common $flags -fsyntax-only "$src"; then
      echo "ok   $arch $src"
    else
      echo "FAIL $arch $src"
      status=1
    fi
  done
done
exit $status
