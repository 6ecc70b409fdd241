#!/usr/bin/env bash
# Issue 20 on the GPU (docs/TUNING.md, "The ring CPML"): the ring CPML's GPU tests and the
# RTM tests against the CPU, then the order-8 step with 12 CPML layers at 512^3 and at the
# reference shot's 400 x 400 x 200 for the library's shape and each research shape of
# session 13 (z-layer orders zo / zo2, the z terms in the core's pass lz16 / lz36), the
# core's z chunks (--ring-waves), and the RTM reference shot (boundary and random, xcorr
# every step, median of 3).  With BASE (another build's seislive-bench) its stencil and
# rtm rows run first, in the same call.  About 100 s on the H100.
#
#   SEISLIVE_BUILD=build/release [BASE=/path/to/main/seislive-bench] bash tools/gpu-cpml-ring.sh
# Writes each run's output to $OUT (default gpu-out/cpml-ring) and prints the rows.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${SEISLIVE_BUILD:-$PWD/build/release}
out=${OUT:-gpu-out}/cpml-ring
mkdir -p "$out"
row() { grep -E '^\| tiled' "$1" | awk -F'|' '{printf "  %-12s %-4s %7s ms %6s %% of floor\n", $5, $6, $7, $11}'; }
echo "== gpu-tests gpu_wave/ring_cpml_*, gpu_rtm/*"
SEISLIVE_REQUIRE_GPU=1 OMP_NUM_THREADS=8 "$B/gpu-tests" --jobs=2 --filter 'gpu_wave/ring_cpml_*' > "$out/tests.log" 2>&1
echo "exit $?"; grep -E 'Synthesis|FAIL' "$out/tests.log"
SEISLIVE_REQUIRE_GPU=1 OMP_NUM_THREADS=8 "$B/gpu-tests" --jobs=2 --filter 'gpu_rtm/*' > "$out/tests_rtm.log" 2>&1
echo "exit $?"; grep -E 'Synthesis|FAIL' "$out/tests_rtm.log"
S="stencil --sizes 512 --grids 400x400x200 --orders 8 --kernels tiled --physics acoustic --pml 12"
if [ -n "${BASE:-}" ]; then
  "$BASE" $S > "$out/st_base.md" 2>&1; echo "== stencil, BASE: exit $?"; row "$out/st_base.md"
fi
"$B/seislive-bench" $S > "$out/st.md" 2>&1; echo "== stencil, this build: exit $?"; row "$out/st.md"
for shape in zo zo2 lz16 lz36; do
  "$B/seislive-bench" $S --no-cpml-rows --ring-shape 8x2d2p/lines-$shape > "$out/st_$shape.md" 2>&1
  echo "== stencil --ring-shape 8x2d2p/lines-$shape: exit $?"; row "$out/st_$shape.md"
done
for w in 3 9; do
  "$B/seislive-bench" $S --ring-waves $w > "$out/st_w$w.md" 2>&1; echo "== stencil --ring-waves $w: exit $?"; row "$out/st_w$w.md"
done
R="rtm --strategies random,boundary --image-every 1 --repeat 3"
if [ -n "${BASE:-}" ]; then
  "$BASE" $R > "$out/rtm_base.md" 2>&1; echo "== rtm, BASE: exit $?"; grep -E '^\| (boundary|random) ' "$out/rtm_base.md"
fi
"$B/seislive-bench" $R > "$out/rtm.md" 2>&1; echo "== rtm, this build: exit $?"; grep -E '^\| (boundary|random) ' "$out/rtm.md"
