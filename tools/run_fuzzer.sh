#!/bin/bash
# `bazel run` wrapper of an accelmem_cc_fuzzer target (see bazel/fuzz.bzl, docs/fuzzing.md).
#
#   run_fuzzer.sh BINARY NAME SEED... -- DEFAULT_FLAG... -- [USER_FLAG...] [INPUT...]
#
# Without INPUT files: copies the initial corpus into $ACCELMEM_FUZZ_DIR/NAME/corpus (default
# /tmp/accelmem_fuzz/NAME; new seeds are added, the corpus grows across runs) and fuzzes it,
# writing reproducers to $ACCELMEM_FUZZ_DIR/NAME/artifacts/. With INPUT files or directories
# (relative to where `bazel run` was called): runs just those, to reproduce a finding.
set -euo pipefail
binary="$1"
name="$2"
shift 2
seeds=()
while [[ $# -gt 0 && "$1" != "--" ]]; do
  seeds+=("$1")
  shift
done
shift
flags=()
while [[ $# -gt 0 && "$1" != "--" ]]; do
  flags+=("$1")
  shift
done
shift
inputs=()
for a in "$@"; do
  if [[ "$a" == -* ]]; then
    flags+=("$a")
  elif [[ "$a" == /* ]]; then
    inputs+=("$a")
  else
    inputs+=("${BUILD_WORKING_DIRECTORY:-.}/$a")
  fi
done
if [[ ${#inputs[@]} -gt 0 ]]; then
  exec "$binary" "${flags[@]}" "${inputs[@]}"
fi
work="${ACCELMEM_FUZZ_DIR:-/tmp/accelmem_fuzz}/$name"
mkdir -p "$work/corpus" "$work/artifacts"
for s in "${seeds[@]}"; do
  # Seeds keep their name with the package path flattened, so files of different folders with the
  # same basename do not collide; existing corpus files are never overwritten.
  dest="$work/corpus/seed_${s//\//_}"
  [[ -e "$dest" ]] || cp -L "$s" "$dest"
done
echo "run_fuzzer: corpus $work/corpus, artifacts $work/artifacts/" >&2
exec "$binary" -artifact_prefix="$work/artifacts/" -print_final_stats=1 "${flags[@]}" "$work/corpus"
