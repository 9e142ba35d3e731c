#!/bin/sh
# layering_test: runs check_layers.py on the source tree this test was built from. The tree is
# found through the runfiles' symlink to layers.txt; the test is tagged "external" and "local" so
# that it always runs (Bazel cannot see every file it reads) and can read the tree.
# Usage: layering_test.sh CHECK_LAYERS_PY LAYERS_TXT
set -eu
table=$(readlink -f "$2")
root=$(dirname "$(dirname "$(dirname "$table")")")
exec python3 "$1" --root="$root" --table="$table"
