#!/usr/bin/env bash
# Issue 17 in one call on a machine with several GPUs of one host (docs/mpi.md "GPU"):
#   mpi      tools/gpu-mpi.sh with device "auto": the model and rtm jobs decomposed over 2
#            ranks on distinct GPUs (halo planes over NCCL), against one rank and the CPU;
#   scaling  tools/gpu-scaling.sh for 1 .. GPUs ranks, with --verify (decomposed against
#            whole on rank 0, < 1e-5);
#   shots    the reference shot (400 x 400 x 200, 3000 steps of 1 ms, boundary strategy)
#            16 times from a `seislive-gen shots` survey, migrated by one rank and by
#            decompose = "shots" on GPUs + 1 ranks (rank 0 stacks): shots per second and
#            the images compared;
#   big      one shot of that survey on a grid too large for one GPU (BIG, default
#            2200 x 2200 x 1100, random strategy, 500 steps), decompose = "domain" over the
#            GPUs: time and memory per GPU from the ranks' logs (BIG_SHOT: a shot file to
#            migrate instead of the shots part's first shot).
# Carry .gpubundle (or SEISLIVE_BUILD), .devlibs and .mpilibs; NCCL from Python's
# nvidia-nccl-cu13 package; NVLink multicast off (NCCL_NVLS_ENABLE=0).
#   PARTS="mpi scaling shots big" SEISLIVE_BUILD=$PWD/.gpubundle bash tools/gpu-multi.sh
# Writes into $OUT (or gpu-out); each part's summary on stdout.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${SEISLIVE_BUILD:-$PWD/build/release}
out=${OUT:-gpu-out}
case $out in /*) ;; *) out=$PWD/$out ;; esac
mkdir -p "$out"
. tools/gpu-env.sh
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader
nvidia-smi topo -m 2>/dev/null | head -5
date -u
t_all=$(date +%s)
el() { echo $(( $(date +%s) - t_all )); }
for part in ${PARTS:-mpi scaling shots big}; do
  case $part in
  mpi)
    echo "== mpi: 2 ranks on distinct GPUs (t=$(el) s)"
    DEV=auto OUT=$out/mpi timeout 300 bash tools/gpu-mpi.sh > "$out/mpi.txt" 2>&1
    echo "rc=$?"
    cat "$out/mpi.txt"
    grep -h "halo transport" "$out"/mpi/*.log | sed 's/^.*  //' | sort | uniq -c
    ;;
  scaling)
    echo "== scaling (t=$(el) s)"
    nps=$(for n in 1 2 4 8; do [ "$n" -le "$ngpu" ] && echo $n; done)
    SCALING_ARGS="${SCALING_ARGS:---verify 256,256,256}" OUT=$out/scaling timeout 600 bash tools/gpu-scaling.sh $nps \
      > "$out/scaling.txt" 2>&1
    echo "rc=$?"
    grep -vE "^\s*$" "$out/scaling.txt" | grep -E "^==|^\||verify|transport|rror|efficien" | head -40
    ;;
  shots)
    echo "== shots: 16 reference shots, 1 rank vs $((ngpu + 1)) ranks (t=$(el) s)"
    s=$out/shots
    mkdir -p "$s"
    export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
    t0=$(date +%s.%N)
    "$B/seislive-gen" shots -o "$s/survey" --n 400,400,200 --d 10 --salt none --shots 4,4 --shot-origin 500,500,10 \
      --shot-spacing 1000,1000 --t-max 3.0 --dt 0.002 --receivers 200,1 --device cuda:0 --seislive "$B/seislive" > "$s/gen.log" 2>&1
    rg=$?
    echo "gen rc=$rg $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
    [ $rg = 0 ] || { tail -5 "$s/gen.log"; continue; }
    for mode in none shots; do
      dev=cuda:0
      [ $mode = shots ] && dev=auto
      cat > "$s/$mode.toml" <<TOML
[job]
kind = "rtm"
[model]
type = "raw"
file = "$s/survey/model_smooth.f32"
n = [400, 400, 200]
d = [10.0, 10.0, 10.0]
[propagator]
order = 8
t_max = 3.0
dt = 0.001
f_peak = 15.0
pml_width = 12
[rtm]
strategy = "boundary"
aperture = 1e6
[input]
kind = "files"
paths = ["$s/survey/shots.segy"]
slot_mib = 8.0
[output]
dir = "$s/image-$mode"
[runtime]
device = "$dev"
decompose = "$mode"
TOML
    done
    t0=$(date +%s.%N)
    timeout 300 "$B/seislive" run -c "$s/none.toml" 2> "$s/one.log"
    r1=$?
    t1=$(date +%s.%N)
    timeout 300 mpirun --oversubscribe -np $((ngpu + 1)) -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH -x OMP_NUM_THREADS \
      "$B/seislive" run -c "$s/shots.toml" 2> "$s/many.log"
    r2=$?
    t2=$(date +%s.%N)
    n1=$(grep -c "migrated" "$s/one.log")
    awk -v a="$t0" -v b="$t1" -v c="$t2" -v r1=$r1 -v r2=$r2 -v g=$ngpu 'BEGIN {
      printf "wall (rc %d / %d): 1 rank on cuda:0 %.1f s (%.3f shots/s); %d ranks, %d migrating on %d GPUs %.1f s (%.3f shots/s): %.2fx\n",
             r1, r2, b - a, 16 / (b - a), g + 1, g, g, c - b, 16 / (c - b), (b - a) / (c - b) }'
    grep -h "shot images received\|ranks: \[" "$s/many.log" | sed 's/^.*shots    //' | tail -3
    grep -h "migrated" "$s/one.log" | tail -2 | cut -c1-220
    if cmp -s "$s/image-none/image.f32" "$s/image-shots/image.f32"; then echo "images: bitwise equal"; else
      echo "images: not bitwise equal"
      python3 - "$s/image-none/image.f32" "$s/image-shots/image.f32" <<'PY'
import array, math, sys
a, b = array.array('f'), array.array('f')
a.frombytes(open(sys.argv[1], 'rb').read())
b.frombytes(open(sys.argv[2], 'rb').read())
num = math.sqrt(sum((x - y) ** 2 for x, y in zip(b, a)))
den = math.sqrt(sum(x * x for x in a))
print("many ranks vs 1 rank: relative L2 %.3g (image norm %.3g, %d cells)" % (num / max(den, 1e-30), den, len(a)))
PY
    fi
    ;;
  big)
    read -r bx by bz <<<"${BIG:-2200 2200 1100}"
    echo "== big: one shot on ${bx} x ${by} x ${bz}, decompose = domain on $ngpu GPUs (t=$(el) s)"
    s=$out/big
    mkdir -p "$s"
    if [ -n "${BIG_SHOT:-}" ]; then
      cp "$BIG_SHOT" "$s/shot1.segy"
    else
      [ -f "$out/shots/survey/shots.segy" ] || { echo "big: needs the shots part's survey (or BIG_SHOT)"; continue; }
      # the survey's first shot alone (its 200 traces)
      python3 - "$out/shots/survey/shots.segy" "$s/shot1.segy" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
ns = struct.unpack('>H', b[3220:3222])[0]
open(sys.argv[2], 'wb').write(b[:3600 + 200 * (240 + 4 * ns)])
PY
    fi
    cat > "$s/big.toml" <<TOML
[job]
kind = "rtm"
[model]
type = "layered"
n = [$bx, $by, $bz]
d = [10.0, 10.0, 10.0]
o = [0.0, 0.0, 0.0]
layer_depths = [150.0, 380.0]
layer_velocities = [1800.0, 2300.0, 2900.0]
[propagator]
order = 8
t_max = ${BIG_TMAX:-0.5}
dt = 0.001
f_peak = 15.0
pml_width = 12
[rtm]
strategy = "random"
aperture = 1e6
[input]
kind = "files"
paths = ["$s/shot1.segy"]
slot_mib = 8.0
[output]
dir = "$s/image"
[runtime]
device = "auto"
decompose = "domain"
TOML
    t0=$(date +%s.%N)
    ( while sleep 2; do nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits; done ) > "$s/mem.log" &
    mon=$!
    timeout 400 mpirun --oversubscribe -np "$ngpu" -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH -x OMP_NUM_THREADS \
      "$B/seislive" run -c "$s/big.toml" 2> "$s/big.log"
    r=$?
    kill $mon 2>/dev/null
    echo "rc=$r wall $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
    grep -hiE "halo transport|strategy|memory|migrated|split|rror" "$s/big.log" | cut -c1-240 | head -14
    awk -F', ' '{ if ($2 > m[$1]) m[$1] = $2 } END { for (g in m) printf "GPU %s peak memory used %.1f GiB\n", g, m[g] / 1024 }' "$s/mem.log"
    rm -rf "$s/image"
    ;;
  esac
done
echo "== done (t=$(el) s)"
