#!/usr/bin/env bash
# The TTI column-pair kernels of docs/tti.md "Fewer instructions" on the GPU: their
# gpu_tti cases against the CPU reference (< 1e-5, outputs poisoned), the TTI stencil
# table at 256^3 and 512^3 (order 8) of the naive twin, the defaults (variant 17: column
# pairs, tuning.pipe 4), tuning.pipe 5 (18), 6 (19) and 7 (20), and the reference RTM shot
# (random strategy) beside OLD's.  About 140 s on the H100.
#
#   SEISLIVE_BUILD=build/release [OLD=/path/to/seislive-bench] bash tools/gpu-tti-int.sh
# Writes the outputs to $OUT (default gpu-out/tti-int) and prints the rows.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${SEISLIVE_BUILD:-$PWD/build/release}
out=${OUT:-gpu-out}/tti-int
mkdir -p "$out"
echo "== gpu_tti column pairs"
SEISLIVE_REQUIRE_GPU=1 OMP_NUM_THREADS=8 "$B/gpu-tests" --jobs=2 --filter 'gpu_tti/pairs_*' > "$out/tests.txt" 2>&1
echo "rc=$?"
grep -E "Synthesis|FAIL" "$out/tests.txt"
echo "== stencil (variant numbers: tools/bench_stencil_tti.c)"
SEISLIVE_BENCH_TTI_VARIANTS=0,17,18,19,20 "$B/seislive-bench" stencil --physics tti --sizes 256,512 --orders 8 \
    --kernels naive,tiled > "$out/stencil.txt" 2> "$out/stencil.err"
echo "rc=$?"
grep "^| tti" "$out/stencil.txt" | awk -F'|' '{printf "%-112s %s %s %s %s %s\n", $3, $5, $6, $7, $8, $11}'
for b in ${OLD:+"$OLD"} "$B/seislive-bench"; do
    f="$out/rtm-$(echo "$b" | md5sum | cut -c1-6).txt"
    echo "== rtm --physics tti --strategies random: $b"
    "$b" rtm --physics tti --strategies random > "$f" 2>&1
    echo "rc=$?"
    grep -E "^\| random" "$f" | head -2
done
