#!/usr/bin/env bash
# Session 13's TTI measurements (docs/tti.md "The plane's last loads off the scoreboard" and
# "The reference shot (session 13)") on the GPU: the gpu_tti cases of tuning.pipe 8 (the
# default core), tuning.cpml 14 (pass 2 in pairs) and the default path against the CPU
# reference (< 1e-5, outputs poisoned), gpu_tti_rtm; the TTI stencil rows at 256^3 / 512^3
# (variant 17: the defaults, 22: tuning.pipe 4, main's default) and on the shot's grid
# with 10-cell layers (23: tuning.cpml 14); the reference shot with random (beside OLD's)
# and boundary on the old interior (--n 380 380 180, repeat 3: the first run pins 82.6 GiB
# of host memory, the median is the steady state); ncu of the pipe 8 core at 512^3.
# About 4-5 minutes on the H100 (the boundary runs most of it).
#
#   SEISLIVE_BUILD=build/release [OLD=/path/to/seislive-bench] bash tools/gpu-tti-async.sh
# Writes the outputs to $OUT (default gpu-out/tti-async) and prints the rows.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${SEISLIVE_BUILD:-$PWD/build/release}
out=${OUT:-gpu-out}/tti-async
mkdir -p "$out"
row() { grep -E "^\| tti" "$1" | cut -d'|' -f3,5,6,7,8,10,11; }
echo "== gpu_tti (default path, pipe 8, cpml 14), gpu_tti_rtm"
SEISLIVE_REQUIRE_GPU=1 OMP_NUM_THREADS=8 "$B/gpu-tests" --jobs=2 \
    --filter 'gpu_tti/@(tiled_*|pairs_a_*|lpairs_*|pairs_3d_*|naive_3d_*|lboxes_p2_*)' > "$out/tests.txt" 2>&1
echo "rc=$?"; grep -E "Synthesis|FAIL" "$out/tests.txt"
SEISLIVE_REQUIRE_GPU=1 OMP_NUM_THREADS=8 "$B/gpu-tests" --jobs=2 --filter 'gpu_tti_rtm/*' > "$out/tests_rtm.txt" 2>&1
echo "rc=$?"; grep -E "Synthesis|FAIL" "$out/tests_rtm.txt"
echo "== stencil: 256^3, 512^3 (17 defaults, 22 pipe 4); 380x380x180 with 10-cell layers (17, 23 cpml 14)"
SEISLIVE_BENCH_TTI_VARIANTS=17,22 "$B/seislive-bench" stencil --physics tti --sizes 256,512 --orders 8 \
    --kernels tiled > "$out/st.txt" 2>&1; echo "rc=$?"; row "$out/st.txt"
SEISLIVE_BENCH_TTI_VARIANTS=17,23 "$B/seislive-bench" stencil --physics tti --grids 380x380x180 --orders 8 \
    --kernels tiled --pml 10 > "$out/st_shot.txt" 2>&1; echo "rc=$?"; row "$out/st_shot.txt"
if [ -n "${OLD:-}" ]; then
    SEISLIVE_BENCH_TTI_VARIANTS=17 "$OLD" stencil --physics tti --sizes 256,512 --orders 8 --kernels tiled \
        > "$out/st_old.txt" 2>&1; echo "old rc=$?"; row "$out/st_old.txt"
fi
echo "== rtm random (400 x 400 x 200), --verbose: tti_create's stages"
"$B/seislive-bench" rtm --physics tti --strategies random --verbose > "$out/random.txt" 2>&1; echo "rc=$?"
grep -E "^\| *random|created|setup:" "$out/random.txt"
if [ -n "${OLD:-}" ]; then
    "$OLD" rtm --physics tti --strategies random > "$out/random_old.txt" 2>&1; echo "old rc=$?"
    grep -E "^\| *random" "$out/random_old.txt"
fi
echo "== rtm boundary (--n 380 380 180, repeat 3)"
"$B/seislive-bench" rtm --physics tti --strategies boundary --n 380 380 180 --repeat 3 > "$out/boundary.txt" 2>&1
echo "rc=$?"; grep -E "^\| *boundary" "$out/boundary.txt"
echo "== ncu of the pipe 8 core (512^3, CPML off)"
SEISLIVE_BENCH_TTI_VARIANTS=21 ncu --clock-control none -k regex:k_tti_cols2 --launch-skip 6 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section InstructionStats \
    --section SourceCounters -o "$out/ncu8" "$B/seislive-bench" stencil --physics tti --sizes 512 --orders 8 \
    --kernels tiled --steps 3 > "$out/ncu8.txt" 2>&1
echo "rc=$?"
