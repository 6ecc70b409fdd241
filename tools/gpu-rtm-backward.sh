#!/usr/bin/env bash
# The backward sweep's three ways (rtm_tuning.backward, docs/rtm.md "The backward sweep in
# one pass") side by side on the GPU: the fused kernels' tests against the CPU, then the
# reference shot of seislive-bench rtm (400 x 400 x 200, 3000 steps, order 8, xcorr every
# step) with each of separate, fused and image, boundary and random, median of 3.  The
# three give the same image (the tests say so); the table says which is fastest, which is
# what decides the default (kernels/rtm.h, enum rtm_backward).  About 120 s on the H100.
#
#   SEISLIVE_BUILD=build/release bash tools/gpu-rtm-backward.sh
# Writes each run's tables to $OUT (default gpu-out/rtm-backward) and prints the rows.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${SEISLIVE_BUILD:-$PWD/build/release}
out=${OUT:-gpu-out}/rtm-backward
mkdir -p "$out"
echo "== gpu-tests gpu_rtm_fused/*"
SEISLIVE_REQUIRE_GPU=1 SEISLIVE_BUILD=$B "$B/gpu-tests" --jobs=1 --verbose --filter 'gpu_rtm_fused/*' \
  > "$out/tests.log" 2>&1
echo "exit $?"
grep -E 'Synthesis|FAIL' "$out/tests.log"
for mode in separate fused image; do
  "$B/seislive-bench" rtm --strategies random,boundary --repeat 3 --backward "$mode" > "$out/$mode.md" \
    2> "$out/$mode.err"
  echo "== --backward $mode: exit $?"
  grep -E '^\| (boundary|random) ' "$out/$mode.md"
done
