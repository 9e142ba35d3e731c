#!/bin/sh
# memory_map_png_test: runs memory_map_png_test.py (rendering needs rsvg-convert, librsvg2-bin).
# Usage: memory_map_png_test.sh TEST_PY TILE_OPT KERNEL.tile
set -eu
exec python3 "$@"
