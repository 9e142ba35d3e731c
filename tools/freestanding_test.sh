#!/bin/sh
# freestanding_test: device sources (device_cc_library targets, see bazel/device_code.bzl) must
# compile as freestanding C++ (no standard headers, no exceptions, no RTTI) for every architecture
# they become bitcode for. The flags come from the device_code_test macro, which owns them: the
# common freestanding flags, then per architecture `--arch=NAME FLAGS...`, then `--` and sources.
# Usage: freestanding_test.sh CLANG COMMON_FLAGS... --arch=A FLAGS... [--arch=B FLAGS...] -- SOURCE...
set -eu
clang=$1
shift
common=""
while [ $# -gt 0 ] && [ "${1#--arch=}" = "$1" ] && [ "$1" != -- ]; do
  common="$common $1"
  shift
done
# Each architecture becomes one line "NAME FLAGS..." of $arches.
arches=""
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  case $1 in
    --arch=*) arches="$arches
${1#--arch=}" ;;
    *) arches="$arches $1" ;;
  esac
  shift
done
[ $# -gt 0 ] && shift  # --
if [ -z "$arches" ] || [ $# -eq 0 ]; then
  echo "usage: freestanding_test.sh CLANG FLAGS... --arch=A FLAGS... -- SOURCE..." >&2
  exit 2
fi
status=0
for src in "$@"; do
  while read -r arch flags; do
    [ -n "$arch" ] || continue
    # shellcheck disable=SC2086
    if "$clang" -x c++ $common $flags -Wall -Wextra -Werror -I. -fsyntax-only "$src" </dev/null; then
      echo "ok   $arch $src"
    else
      echo "FAIL $arch $src"
      status=1
    fi
  done <<ARCHES
$arches
ARCHES
done
exit $status
