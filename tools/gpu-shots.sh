#!/usr/bin/env bash
# On the GPU machine (issue 16, docs/mpi.md "shots"): the rtm job with decompose = "shots"
# on three ranks sharing cuda:0 (rank 0 hands the shots out and stacks, ranks 1 and 2
# migrate) against one rank on cuda:0, over the 6 shots of a `seislive-gen shots` survey
# modeled on the GPU.  Carry .gpubundle, .devlibs and .mpilibs (tools/gpu-bundle.sh,
# ../shared/tools/device-libs.sh, tools/mpi-libs.sh), then:
#   SEISLIVE_BUILD=$PWD/.gpubundle bash tools/gpu-shots.sh
# Prints whether the images are bitwise equal (as on the CPU), their relative L2
# difference, the wall times, rank 0's image-transfer line and the per-rank counts; exits 1
# unless the images agree within 1e-5 (relative L2).  Writes into $OUT (or gpu-out).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${SEISLIVE_BUILD:-$PWD/build/release}
out=${OUT:-gpu-out}/shots
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -d "$B/lib" ] && export LD_LIBRARY_PATH=$B/lib:$LD_LIBRARY_PATH
. tools/mpi-env.sh
command -v mpirun >/dev/null || { echo "gpu-shots: no mpirun: carry .mpilibs (tools/mpi-libs.sh)" >&2; exit 1; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
"$B/seislive-gen" shots -o "$out/survey" --shots 6 --t-max 0.6 --device cuda:0 --seislive "$B/seislive" \
  2> "$out/gen.log"
for mode in none shots; do
  cat > "$out/$mode.toml" <<TOML
[job]
kind = "rtm"
[model]
type = "raw"
file = "$out/survey/model_smooth.f32"
n = [81, 41, 51]
d = [10.0, 10.0, 10.0]
[propagator]
order = 8
t_max = 0.6
f_peak = 15.0
pml_width = 12
[rtm]
strategy = "checkpoint"
[input]
kind = "files"
paths = ["$out/survey/shots.segy"]
slot_mib = 2.0
[output]
dir = "$out/image-$mode"
[runtime]
device = "cuda:0"
decompose = "$mode"
TOML
done
t0=$(date +%s.%N)
"$B/seislive" run -c "$out/none.toml" 2> "$out/one.log"
t1=$(date +%s.%N)
mpirun --oversubscribe -np 3 "$B/seislive" run -c "$out/shots.toml" 2> "$out/three.log"
t2=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" \
  'BEGIN { printf "wall: cuda:0 1 rank %.1f s, cuda:0 3 ranks (2 migrate) %.1f s\n", b - a, c - b }'
grep -h "shot images received" "$out/three.log" | sed 's/^.*shots    //'
grep -h "ranks: \[" "$out/three.log" | sed 's/^.*shots    //'
if cmp -s "$out/image-none/image.f32" "$out/image-shots/image.f32"; then echo "images: bitwise equal"; else echo "images: not bitwise equal"; fi
python3 - "$out/image-none/image.f32" "$out/image-shots/image.f32" <<'PY'
import array, math, sys
a, b = array.array('f'), array.array('f')
a.frombytes(open(sys.argv[1], 'rb').read())
b.frombytes(open(sys.argv[2], 'rb').read())
assert len(a) == len(b) and len(a) > 0
num = math.sqrt(sum((x - y) ** 2 for x, y in zip(b, a)))
den = math.sqrt(sum(x * x for x in a))
print("3 ranks vs 1 rank, cuda:0: relative L2 %.3g (image norm %.3g)" % (num / den, den))
sys.exit(0 if den > 0 and num / den < 1e-5 else 1)
PY
