#!/bin/sh
# ptxas assembles a PTX kernel for sm_90 and writes a cubin; a PTX syntax error is rejected.
set -eu
ptxas="$1"
ptx="$2"
out="${TEST_TMPDIR:-/tmp}/tiny.cubin"
"$ptxas" -arch=sm_90 -o "$out" "$ptx"
[ -s "$out" ] || { echo "FAIL: ptxas wrote no cubin"; exit 1; }
printf '.version 8.0\n.target sm_90\n.address_size 64\nthis is not ptx\n' > "${TEST_TMPDIR:-/tmp}/bad.ptx"
if "$ptxas" -arch=sm_90 -o "$out.bad" "${TEST_TMPDIR:-/tmp}/bad.ptx" 2>/dev/null; then
  echo "FAIL: ptxas accepted invalid PTX"
  exit 1
fi
echo "PASS: ptxas assembled tiny.ptx for sm_90 and rejected invalid PTX"
