#!/bin/sh
# On a machine with an NVIDIA GPU and accelmem's build dependencies: runs every gpu-tagged test
# (--config=gpu: a test that cannot open the GPU fails) and the CUDA rows of gc_bench, printing
# what the device is. Usage: benchmarks/run_gpu.sh [extra bazel flags]
# For a machine with only the driver and the CUDA toolkit, build //tools/gpu_bundle instead and
# run its run.sh there (docs/gpu.md).
set -u
cd "$(dirname "$0")/.."
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
status=0
./bazelw test --config=gpu --test_tag_filters=gpu "$@" //... || status=1
./bazelw run --config=gpu "$@" //benchmarks:gc_bench -- --benchmark_filter=Cuda || status=1
exit $status
