#!/usr/bin/env bash
# Checks README.md's "Depending on one accelmem target" recipe as a new user would follow it:
# copies every fenced block whose info string has `file=NAME` (```starlark file=WORKSPACE, ...)
# into an empty workspace, points the WORKSPACE's `/path/to/accelmem` at this checkout, and runs
# `bazelw test //...` there. Extra arguments go to that bazel command.
#
# The workspace lives in a fixed folder per checkout (rewritten on every run) so that repeated
# runs reuse one Bazel output base; its Bazel server is shut down at exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
readme="$root/README.md"
work="${TMPDIR:-/tmp}/accelmem-readme-consumer-$(printf '%s' "$root" | cksum | cut -d' ' -f1)"

rm -rf "$work"
mkdir -p "$work"

# Extract the blocks: NAME -> its lines, exactly as in the README.
awk -v dir="$work" '
  /^```/ {
    if (out != "") { close(out); out = ""; next }
    if (match($0, /file=[^ ]+/)) {
      name = substr($0, RSTART + 5, RLENGTH - 5)
      if (name ~ /(^\/|\.\.)/) { print "bad file name: " name > "/dev/stderr"; exit 2 }
      out = dir "/" name
      if (seen[name]++) { print "file given twice: " name > "/dev/stderr"; exit 2 }
      printf "" > out
      n++
      next
    }
  }
  out != "" { print > out }
  END { if (out != "") { print "unclosed block" > "/dev/stderr"; exit 2 } }
' "$readme"

for f in WORKSPACE .bazelrc BUILD.bazel; do
  if [ ! -s "$work/$f" ]; then
    echo "readme_consumer_check: README.md has no block marked file=$f" >&2
    exit 1
  fi
done
if ! grep -q '"/path/to/accelmem"' "$work/WORKSPACE"; then
  echo 'readme_consumer_check: the WORKSPACE block no longer says path = "/path/to/accelmem"' >&2
  exit 1
fi
sed -i "s#\"/path/to/accelmem\"#\"$root\"#" "$work/WORKSPACE"

echo "readme_consumer_check: workspace $work:" $(cd "$work" && ls -A)
cd "$work"
trap '"$root/bazelw" shutdown >/dev/null 2>&1 || true' EXIT
"$root/bazelw" test //... "$@"
