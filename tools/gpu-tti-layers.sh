#!/usr/bin/env bash
# The TTI layer passes on the GPU (docs/tti.md "The layer boxes' passes"): the CUDA twins
# with every layer arrangement against the CPU reference (gpu_tti, < 1e-5, outputs
# poisoned), the TTI stencil rows with and without CPML at 256^3, 512^3 and the RTM
# reference shot's 400 x 400 x 200 for the naive passes (bench variant 2: tuning.cpml 1),
# the layer boxes' two passes (12: tuning.cpml 10), their pass 2 after the naive pass 1
# (14: 12, the default) and that on a second stream (15: 13) in one call, ncu of one
# step's layer launches (instructions, DRAM bytes, time), and the reference RTM shot
# (random).
# OLD: a seislive-bench of another build (e.g. main) for the same rows and shot beside it.
# About 150 s on the H100.
#
#   SEISLIVE_BUILD=build/release [OLD=/path/to/seislive-bench] bash tools/gpu-tti-layers.sh
# Writes the outputs to $OUT (default gpu-out)/tti-layers and prints the rows.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${SEISLIVE_BUILD:-$PWD/build/release}
out=${OUT:-gpu-out}/tti-layers
mkdir -p "$out"
echo "== gpu_tti"
OMP_NUM_THREADS=2 timeout 60 "$B/gpu-tests" --filter 'gpu_tti/*' -j8 > "$out/tests.txt" 2>&1
echo "rc=$?"
grep -E "Synthesis|FAIL" "$out/tests.txt"
grep -E "^  (forward|strip loaded|reverse|after copy_in): " "$out/tests.txt" | awk '{print $NF}' | sort -g | tail -1 |
    sed 's/^/largest relative error: /'
echo "== stencil (variant numbers: tools/bench_stencil_tti.c)"
for b in ${OLD:+"$OLD"} "$B/seislive-bench"; do
    v=2,12,14,15
    [ "$b" = "${OLD:-}" ] && v=2
    SEISLIVE_BENCH_TTI_VARIANTS=$v timeout 60 "$b" stencil --physics tti --sizes 256,512 --grids 400x400x200 \
        --kernels tiled > "$out/stencil-$(echo "$b" | md5sum | cut -c1-6).txt" 2>&1
    echo "rc=$? ($b)"
    grep "^| tti" "$out/stencil-$(echo "$b" | md5sum | cut -c1-6).txt" |
        awk -F'|' '{printf "%-100s %s %s %s %s\n", $3, $5, $6, $7, $8}'
done
if command -v ncu > /dev/null; then
    echo "== ncu: one CPML step's layer launches at 512^3 (naive passes: 12; layer boxes: 2)"
    m=smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
    SEISLIVE_BENCH_TTI_VARIANTS=2 timeout 40 ncu --clock-control none -k regex:k_tti_pass --launch-skip 24 \
        --launch-count 12 --metrics "$m" --csv "$B/seislive-bench" stencil --physics tti --sizes 512 \
        --kernels tiled --steps 1 > "$out/ncu-naive.csv" 2> /dev/null
    SEISLIVE_BENCH_TTI_VARIANTS=12 timeout 40 ncu --clock-control none -k regex:k_lb_pass --launch-skip 4 \
        --launch-count 2 --metrics "$m" --csv "$B/seislive-bench" stencil --physics tti --sizes 512 \
        --kernels tiled --steps 1 > "$out/ncu-boxes.csv" 2> /dev/null
    for f in "$out/ncu-naive.csv" "$out/ncu-boxes.csv"; do
        grep -E '^"[0-9]+"' "$f" | awk -F'","' '{gsub(/,/, "", $15); sub(/"$/, "", $15); print $1 "\t" substr($5, 1, 24) "\t" $9 "\t" $13 "=" $15}' |
            sed 's/^"//'
    done
fi
for b in ${OLD:+"$OLD"} "$B/seislive-bench"; do
    echo "== rtm --physics tti --strategies random: $b"
    f="$out/rtm-$(echo "$b" | md5sum | cut -c1-6).txt"
    timeout 60 "$b" rtm --physics tti --strategies random > "$f" 2>&1
    echo "rc=$?"
    grep -E "^\| random" "$f" | head -2
done
