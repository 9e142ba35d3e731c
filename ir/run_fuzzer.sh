#!/bin/bash
# Builds //ir:parser_fuzzer's libFuzzer binary with clang-14 (-fsanitize=fuzzer,address) outside
# Bazel (Bazel's default compiler here is gcc, which has no libFuzzer) and runs it on a copy of
# the ir/testdata corpus.
#
#   ir/run_fuzzer.sh [SECONDS] [WORKDIR]     # default 600 s, /tmp/accelmem_parser_fuzz
#
# Crash reproducers land in WORKDIR/artifacts; the log in WORKDIR/fuzz.log.
set -euo pipefail
seconds="${1:-600}"
work="${2:-/tmp/accelmem_parser_fuzz}"
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$work/corpus" "$work/artifacts"
cp "$root"/ir/testdata/*.tile "$work/corpus/"
srcs=(dtype memory_space memref types expr stmt function program op_registry printer parser
      verifier structural_equal)
files=()
for s in "${srcs[@]}"; do files+=("$root/ir/$s.cc"); done
clang++-14 -std=c++17 -O1 -g -fsanitize=fuzzer,address -fno-omit-frame-pointer -I"$root" \
  "${files[@]}" "$root/ir/parser_fuzzer.cc" -o "$work/parser_fuzzer" \
  -labsl_strings -labsl_strings_internal -labsl_str_format_internal -labsl_hash -labsl_city \
  -labsl_low_level_hash -labsl_raw_hash_set -labsl_status -labsl_statusor -labsl_cord \
  -labsl_cord_internal -labsl_cordz_info -labsl_cordz_functions -labsl_cordz_handle \
  -labsl_int128 -labsl_throw_delegate -labsl_raw_logging_internal -labsl_base \
  -labsl_spinlock_wait -labsl_synchronization
"$work/parser_fuzzer" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$work/corpus" 2>&1 | tee "$work/fuzz.log"
