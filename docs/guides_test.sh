#!/bin/sh
# guides_test: runs check_guides.py on the guides of the source tree this test was built from. The
# tree is found through the runfiles' symlink to the first guide (docs/guides/X.md, three folders
# below the root); the test is tagged "external" and "local" so that it always runs (Bazel cannot
# see every file it reads) and can read the tree.
# Usage: guides_test.sh CHECK_GUIDES_PY GUIDE...
set -eu
script=$1
shift
guide=$(readlink -f "$1")
root=$(dirname "$(dirname "$(dirname "$guide")")")
exec python3 "$script" --root="$root" "$@"
