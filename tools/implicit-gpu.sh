#!/usr/bin/env bash
# The implicit operator's GPU checks (issue 15) in one device call: its GPU tests (CUDA
# against the CPU reference, < 1e-5; the boundary and random strategies on the GPU,
# < 1e-4) and the stencil rows at 512^3 (the tiled Taylor 8th-order row of the same run
# beside it, and the ratio of their times per point).  Build and bundle here first:
#   make -j2 all build/release/gpu-tests build/release/unit-tests && bash tools/gpu-bundle.sh
# then, on the GPU machine (device call with carry [".gpubundle", ".devlibs"]):
#   SEISLIVE_BUILD=$PWD/.gpubundle bash tools/implicit-gpu.sh
# Logs go to $OUT (or ./gpu-out).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
B=${SEISLIVE_BUILD:-$PWD/build/release}
export SEISLIVE_BUILD=$B
export SEISLIVE_REQUIRE_GPU=1
status=0
( "$B/gpu-tests" --jobs=1 --verbose --filter 'gpu_implicit/*' 2>&1 ) | tee "$out/implicit-tests.log" | tail -n 40
grep -q 'Failing: 0 | Crashing: 0' "$out/implicit-tests.log" || status=1
timeout 300 "$B/seislive-bench" stencil --sizes 512 --orders 8 --kernels tiled --operators taylor,implicit \
  --physics acoustic 2>"$out/implicit-stencil.err" | tee "$out/implicit-stencil.md" || status=1
exit $status
