#!/usr/bin/env bash
# The headline of issue 15 as configured jobs (docs/operators.md, "The end-to-end
# trade-off"): one shot of the reference survey (4000 x 4000 x 2000 m, 2000 m/s, Ricker
# f_peak 15 Hz, fmax 37.5 Hz, 4 s, 100 x 100 receivers 36 m apart, time_dispersion =
# "correct", cfl 0.9, the default 12 CPML cells) modeled by `seislive model` with Taylor 8,
# optimized 8 (operator_band = "auto") and implicit 8 (auto), each on several grids around
# the coarsest one seislive-bench dispersion found within 1 % (3.8, 3.0 and 2.4 points per
# wavelength).  The spacing makes 600 m a whole number of cells (CELLS below) and the source
# a grid node, and one receiver of the grid sits 600 m from the source along x at its depth:
# its trace is compared here with s(t - r/v) / (4 pi r) over the pulse (od + awk: the GPU
# machine has no numpy), so every row says the accuracy it was timed at.  The headline
# rows: for each operator the coarsest grid whose trace is within TARGET (1 %), and its time
# per shot against Taylor 8's.  Times: the job's own "shot 1/1 done" (propagation, the
# trace transforms on the host, writing) and the whole process's wall time.
#
#   tools/headline.sh [DEVICE] [OUTDIR]
#   env: SEISLIVE_BUILD (default build/release), TARGET (0.01), TMAX (4.0), SURVEY ("4000 2000"),
#        FP (15: f_peak; the checked receiver is then 600 x 15 / FP m away, the same number
#        of wavelengths, so each operator's grids keep their points per wavelength)
set -euo pipefail
dev=${1:-cuda:0}
out=${2:-headline-out}
B=${SEISLIVE_BUILD:-build/release}
TARGET=${TARGET:-0.01}
read -r LX LZ <<<"${SURVEY:-4000 2000}"
mkdir -p "$out"
V=2000 FP=${FP:-15}
# the checked receiver: 600 m at 15 Hz, the same number of wavelengths at another f_peak
R=$(awk -v f=$FP 'BEGIN { printf "%g", 600 * 15 / f }')
: > "$out/rows.txt"
# OPS (default: every row below) picks them by "name order", e.g. OPS="taylor 8,optimized 16"
#          name      order op         band  cells of 600 m (coarsest last)
SPECS=("taylor    8  taylor    -    50 47 45 43"
       "optimized 8  optimized auto 40 38 36 34"
       "implicit  8  implicit  auto 31 29 27 25"
       "taylor    16 taylor    -    36 34 32 30"
       "optimized 16 optimized auto 31 29 28 27")
for spec in "${SPECS[@]}"; do
  set -- $spec
  name=$1 order=$2 op=$3 band=$4; shift 4
  if [ -n "${OPS:-}" ]; then case ",$OPS," in *",$name $order,"*) ;; *) continue;; esac; fi
  for cells in "$@"; do
    h=$(awk -v r=$R -v c=$cells 'BEGIN { printf "%.6f", r / c }')
    # the survey in whole cells; the source at the node nearest its middle; a 100 x 100
    # receiver grid at the source's depth (36 m apart, less where the survey is smaller)
    # whose receiver (I0, 50) is 600 m from the source along x
    read -r nx nz sx sz ox oy step i0 <<<"$(awk -v h=$h -v lx=$LX -v lz=$LZ -v r=$R 'BEGIN {
        nx = int(lx / h + 0.5) + 1; nz = int(lz / h + 0.5) + 1
        i = int(lx / 2 / h + 0.5); k = int(lz / 2 / h + 0.5)
        s = (lx - 200) / 99; if (s > 36) s = 36
        i0 = int((i * h + r - 100) / s + 0.5); if (i0 > 99) i0 = 99
        printf "%d %d %.6f %.6f %.6f %.6f %.6f %d", nx, nz, i * h, k * h, i * h + r - i0 * s, i * h - 50 * s, s, i0 }')"
    bandline=""
    [ "$band" = auto ] && bandline='operator_band = "auto"'
    tag=$name$order-$cells
    cat > "$out/$tag.toml" <<TOML
[job]
kind = "model"
name = "headline-$tag"

[model]
type = "constant"
velocity = $V.0
n = [$nx, $nx, $nz]
d = [$h, $h, $h]

[propagator]
order = $order
operator = "$op"
$bandline
t_max = ${TMAX:-4.0}
f_peak = $FP.0
cfl = 0.9
free_surface = false
time_dispersion = "correct"

[acquisition]
sources = [[$sx, $sx, $sz]]
rx_origin = [$ox, $oy, $sz]
rx_step = [$step, $step]
rx_count = [100, 100]
dt_out = 0.001

[runtime]
device = "$dev"
TOML
    t0=$(date +%s.%N)
    "$B/seislive" model -c "$out/$tag.toml" -o "$out/$tag.segy" > "$out/$tag.log" 2>&1 ||
      { echo "$tag: failed"; tail -5 "$out/$tag.log"; exit 1; }
    t1=$(date +%s.%N)
    shot=$(grep -o 'shot 1/1 done ([0-9.]* s' "$out/$tag.log" | grep -o '[0-9.]*' | tail -1)
    steps=$(grep -o '[0-9]* steps, ' "$out/$tag.log" | head -1 | grep -o '^[0-9]*')
    bandv=$(grep -o 'operator band auto: [0-9.]*' "$out/$tag.log" | grep -o '[0-9.]*$' || true)
    # trace 50 x 100 + I0: 3600 bytes of file headers, then 240-byte trace headers and
    # float32 big-endian samples; the binary header's bytes 3221-3222 say how many
    ns=$(od -An -t u1 -j 3220 -N 2 "$out/$tag.segy" | awk '{ print $1 * 256 + $2 }')
    off=$(( 3600 + (50 * 100 + i0) * (240 + 4 * ns) + 240 ))
    err=$(od -An -v -t f4 --endian=big -j $off -N $(( 4 * ns )) "$out/$tag.segy" | tr -s ' ' '\n' | grep -v '^$' |
          awk -v fp=$FP -v v=$V -v r=$R 'BEGIN { pi = atan2(0, -1); dt = 0.001; n = int((1.5 / fp + r / v + 1.5 / fp) / dt) }
               NR - 1 <= n { t = (NR - 1) * dt; a = pi * fp * (t - r / v - 1.5 / fp); a *= a
                             g = (1 - 2 * a) * exp(-a) / (4 * pi * r); num += ($1 - g) ^ 2; den += g ^ 2 }
               END { printf "%.4f", sqrt(num / den) }')
    wall=$(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.3f", b - a }')
    ppw=$(awk -v h=$h -v f=$FP 'BEGIN { printf "%.2f", 2000 / (2.5 * f * h) }')
    echo "$name $order ${bandv:--} $h $ppw ${nx}x${nx}x${nz} $steps $shot $wall $err" >> "$out/rows.txt"
    rm -f "$out/$tag.segy"
  done
done
echo "Every grid (f_peak $FP Hz; trace rel L2 at $R m; target $TARGET):"
echo "| operator | band | h (m) | ppw | grid | steps | shot (s) | process wall (s) | trace rel L2 |"
echo "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |"
awk '{ printf "| %s %s | %s | %.3f | %s | %s | %s | %s | %s | %.3f %% |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, 100 * $10 }' "$out/rows.txt"
echo
echo "The coarsest grid within the target, per operator, against Taylor 8's:"
echo "| operator | ppw | trace rel L2 | shot (s) | x Taylor 8 | process wall (s) | x Taylor 8 |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
awk -v t=$TARGET '$10 < t { best[$1 " " $2] = $0 } END {
    n = split("taylor 8,optimized 8,implicit 8,taylor 16,optimized 16", ops, ",")
    if (!("taylor 8" in best)) { print "| taylor 8 | none of its grids within the target | | | | | |"; exit }
    split(best["taylor 8"], b, " ")
    for (i = 1; i <= n; i++) { o = ops[i]
      if (!(o in best)) { printf "| %s | none of its grids within the target (or not run) | | | | | |\n", o; continue }
      split(best[o], r, " ")
      printf "| %s | %s | %.3f %% | %s | %.2fx | %s | %.2fx |\n", o, r[5], 100 * r[10], r[8], b[8] / r[8], r[9], b[9] / r[9] } }' "$out/rows.txt"
