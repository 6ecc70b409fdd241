#!/usr/bin/env bash
# Issue 15, the optimized operator on the GPU machine (after tools/gpu-run.sh's set-up:
# SEISLIVE_BUILD the CUDA build or .gpubundle, LD_LIBRARY_PATH with .devlibs):
#   1. CUDA vs CPU with operator = optimized (tests/gpu/test_gpu_operator.c, < 1e-5);
#   2. seislive-bench stencil rows at 512^3, order 8, Taylor and optimized (same kernels,
#      so the same Gpts/s and byte floor are expected);
#   3. seislive-bench dispersion: the dispersion table and the end-to-end trade-off (the
#      coarsest grid for a 1 % trace and the time per shot of a 4 x 4 x 2 km, 4 s survey)
#      at cfl 0.9 and 0.2, orders 8 and 16, taylor, optimized and implicit, each without
#      and with the time-dispersion correction (--tdc both, the default).
# Logs into $OUT (or ./gpu-out).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
B=${SEISLIVE_BUILD:-$PWD/build/release}
export SEISLIVE_BUILD=$B SEISLIVE_REQUIRE_GPU=1
status=0
"$B/gpu-tests" --jobs=1 --verbose --filter 'gpu_operator/*' 2>&1 | tee "$out/operator-tests.log" | tail -n 30
grep -q 'Failing: 0 | Crashing: 0' "$out/operator-tests.log" || status=1
for op in taylor optimized; do
    "$B/seislive-bench" stencil --sizes 512 --orders 8 --physics acoustic --operator "$op" 2>&1 \
        | tee "$out/stencil-$op.md" | tail -n 8 || status=1
done
"$B/seislive-bench" dispersion --orders 8,16 --cfl 0.9,0.2 --device cuda:0 2>&1 | tee "$out/dispersion.md" || status=1
exit $status
