#!/bin/sh
# Fails when a C++ or proto source of ours is not clang-format clean (Google style, .clang-format).
# Usage: tools/check_format.sh [--fix]
set -eu
cd "$(dirname "$0")/.."
clang_format=$(command -v clang-format-14 || command -v clang-format)
files=$(git ls-files '*.h' '*.cc' '*.proto' | grep -v '^third_party/')
[ -n "$files" ] || exit 0
if [ "${1:-}" = "--fix" ]; then
  # shellcheck disable=SC2086
  "$clang_format" -i $files
  exit 0
fi
# shellcheck disable=SC2086
if ! "$clang_format" --dry-run -Werror $files; then
  echo "check_format: run tools/check_format.sh --fix" >&2
  exit 1
fi
echo "check_format: $(echo "$files" | wc -l) files clean"
