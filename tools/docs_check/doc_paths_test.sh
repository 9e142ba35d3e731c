#!/bin/sh
# doc_paths_test: runs check_doc_paths.py on the source tree this test was built from, found
# through the runfiles' symlink to the script (the test is tagged "local" so it can read it).
# Usage: doc_paths_test.sh CHECK_DOC_PATHS_PY
set -eu
script=$(readlink -f "$1")
root=$(dirname "$(dirname "$(dirname "$script")")")
exec python3 "$script" --root="$root"
