#!/bin/sh
# check_layers_test: runs the unit tests of check_layers.py (check_layers_test.py) with python3.
# Usage: check_layers_test.sh CHECK_LAYERS_TEST_PY
set -eu
exec python3 "$1"
