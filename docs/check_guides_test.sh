#!/bin/sh
# check_guides_test: runs the unit tests of check_guides.py (check_guides_test.py) with python3.
# Usage: check_guides_test.sh CHECK_GUIDES_TEST_PY
set -eu
exec python3 "$1"
