#!/usr/bin/env bash
# The TTI CUDA twins on the GPU (docs/tti.md "GPU kernels"): every variant against the CPU
# reference (gpu_tti, < 1e-5, outputs poisoned), the TTI stencil table at 256^3 and 512^3
# of the naive twin, the ring, the column kernel with the naive passes, with the CPML
# column kernel (tuning.cpml 6 and 7) and with the naive passes on a second stream
# (tuning.cpml 8), and the column pairs (tuning.pipe 4, the default; variant 11), all in
# one call, and the reference RTM shot (random strategy).
# OLD: a seislive-bench of another build (e.g. main) for the same RTM shot beside it.
# About 150 s on the H100.
#
#   SEISLIVE_BUILD=build/release [OLD=/path/to/seislive-bench] bash tools/gpu-tti-perf.sh
# Writes the outputs to $OUT (default gpu-out/tti-perf) and prints the rows.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${SEISLIVE_BUILD:-$PWD/build/release}
out=${OUT:-gpu-out}/tti-perf
mkdir -p "$out"
echo "== gpu_tti"
OMP_NUM_THREADS=2 "$B/gpu-tests" --filter 'gpu_tti/*' -j8 > "$out/tests.txt" 2>&1
echo "rc=$?"
grep -E "Synthesis|FAIL" "$out/tests.txt"
grep -E "^  (forward|strip loaded|reverse|after copy_in): " "$out/tests.txt" | awk '{print $NF}' | sort -g | tail -1 |
    sed 's/^/largest relative error: /'
echo "== stencil (variant numbers: tools/bench_stencil_tti.c)"
SEISLIVE_BENCH_TTI_VARIANTS=0,1,2,3,8,9,10,11 "$B/seislive-bench" stencil --physics tti --sizes 256,512 \
    --kernels naive,tiled > "$out/stencil.txt" 2> "$out/stencil.err"
echo "rc=$?"
grep "^| tti" "$out/stencil.txt" | awk -F'|' '{printf "%-112s %s %s %s %s %s\n", $3, $5, $6, $7, $8, $11}'
for b in ${OLD:+"$OLD"} "$B/seislive-bench"; do
    echo "== rtm --physics tti --strategies random: $b"
    "$b" rtm --physics tti --strategies random > "$out/rtm-$(echo "$b" | md5sum | cut -c1-6).txt" 2>&1
    echo "rc=$?"
    grep -E "^\| random" "$out/rtm-$(echo "$b" | md5sum | cut -c1-6).txt" | head -2
done
