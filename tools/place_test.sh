#!/bin/bash
# End-to-end checks of the place tool: planning, writing and re-checking placements, and the
# file:line: error: messages and exit status for bad input.
set -u
PLACE="$1"
DATA="$2"  # Directory holding minimalloc/ and idealloc/.
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect STATUS PATTERN -- command...: exit status and a pattern in stdout+stderr.
expect() {
  local status="$1" pattern="$2"
  shift 3
  local out
  out="$("$@" 2>&1)"
  local got=$?
  [[ "$got" == "$status" ]] || fail "exit $got (want $status): $*"$'\n'"$out"
  grep -qE -- "$pattern" <<<"$out" || fail "no /$pattern/ in output of: $*"$'\n'"$out"
}

# Greedy placement of the MiniMalloc example, written to a file, then checked.
expect 0 "5 buffers, height 12, LOAD 12, height/LOAD 1.000000" -- \
  "$PLACE" "$DATA/minimalloc/input.12.csv" -o "$TMP/p.csv"
[[ "$(head -1 "$TMP/p.csv")" == "id,offset" ]] || fail "placement header"
[[ "$(wc -l <"$TMP/p.csv")" == 6 ]] || fail "placement has $(wc -l <"$TMP/p.csv") lines"
expect 0 "valid: 5 buffers, height 12" -- \
  "$PLACE" --check="$TMP/p.csv" --capacity=12 "$DATA/minimalloc/input.12.csv"

# Placement on stdout.
expect 0 "^b1,[0-9]+$" -- "$PLACE" "$DATA/minimalloc/input.12.csv"

# Search fits MiniMalloc F under its 1 MiB capacity (it stops as soon as it reaches LOAD).
expect 0 "height 1048576, LOAD 1048576" -- "$PLACE" --mode=search --budget-ms=60000 \
  --capacity=1048576 -o "$TMP/f.csv" "$DATA/minimalloc/F.1048576.csv"
expect 0 "valid" -- "$PLACE" --check="$TMP/f.csv" --capacity=1048576 \
  "$DATA/minimalloc/F.1048576.csv"

# The single-threaded search works too.
expect 0 "height 1048576, LOAD 1048576" -- "$PLACE" --mode=search --budget-ms=60000 \
  --search-threads=1 --capacity=1048576 "$DATA/minimalloc/F.1048576.csv"

# Alignment is honoured and checked.
expect 0 "height" -- "$PLACE" --alignment=4096 -o "$TMP/a.csv" "$DATA/idealloc/resnet50.csv"
expect 0 "valid" -- "$PLACE" --alignment=4096 --check="$TMP/a.csv" "$DATA/idealloc/resnet50.csv"

# A wrong placement names both buffers.
printf 'id,offset\nb1,0\nb2,0\nb3,0\nb4,0\nb5,4\n' >"$TMP/bad.csv"
expect 1 "bad.csv: error: invalid placement: buffer 'b1' \(#0\).* and buffer 'b3' \(#2\)" -- \
  "$PLACE" --check="$TMP/bad.csv" "$DATA/minimalloc/input.12.csv"
printf 'id,offset\nb1,0\nb2,4\n' >"$TMP/short.csv"
expect 1 "short.csv:3: error: no offset for buffer 'b3'" -- \
  "$PLACE" --check="$TMP/short.csv" "$DATA/minimalloc/input.12.csv"

# Over capacity: the placement is still written, the exit status says it does not fit.
expect 1 "error: height 12 exceeds --capacity=8" -- \
  "$PLACE" --capacity=8 -o "$TMP/c.csv" "$DATA/minimalloc/input.12.csv"

# Bad instances and bad flags.
printf 'id,lower,upper,size\na,0,4,8\nb,5,1,8\n' >"$TMP/inv.csv"
expect 1 "inv.csv:3: error: buffer 'b': lower 5 is greater than upper 1" -- "$PLACE" "$TMP/inv.csv"
printf 'id,start,end,size\n' >"$TMP/hdr.csv"
expect 1 "hdr.csv:1: error: header has no column 'lower'" -- "$PLACE" "$TMP/hdr.csv"
expect 1 "missing.csv: error: cannot read file" -- "$PLACE" "$TMP/missing.csv"
expect 1 "error: cannot read file: it is a directory" -- "$PLACE" "$TMP"
expect 1 "unknown option '--frobnicate'" -- "$PLACE" --frobnicate "$TMP/inv.csv"
expect 1 "--mode must be greedy or search" -- "$PLACE" --mode=fast "$TMP/inv.csv"
expect 1 "--budget-ms needs an integer >= 0" -- "$PLACE" --budget-ms=-1 "$TMP/inv.csv"
expect 1 "no instance file" -- "$PLACE"

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all place checks passed"
