#!/usr/bin/env bash
# On the GPU machine (issue 16, docs/mpi.md): the model job of docs/examples/mpi-model.toml
# with decompose = "domain" on two ranks sharing cuda:0 through the staged MPI transport
# (halo planes, source amplitudes and receiver samples through host memory), against
# one rank on cuda:0 and against the CPU; then the rtm job migrating that shot (the CPU
# run's SEG-Y file) the same three ways (boundary strategy, source-normalized imaging:
# both wavefields exchanged, the reverse sweep with its strips, the accumulators gathered
# on rank 0).  Carry .gpubundle, .devlibs and .mpilibs (tools/gpu-bundle.sh,
# ../shared/tools/device-libs.sh, tools/mpi-libs.sh), then:
#   SEISLIVE_BUILD=$PWD/.gpubundle bash tools/gpu-mpi.sh
# Prints the relative L2 and max differences of the traces and of the images; exits 1
# unless two ranks match one rank on the GPU within 1e-5 (relative L2) and the GPU
# matches the CPU within 1e-5, for both.  Writes into $OUT (or gpu-out; relative to the
# checkout).  DEV=cpu runs the same on the CPU: a check of the script where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${SEISLIVE_BUILD:-$PWD/build/release}
out=${OUT:-gpu-out}
case $out in /*) ;; *) out=$PWD/$out ;; esac
mkdir -p "$out"
. tools/gpu-env.sh
command -v mpirun >/dev/null || { echo "gpu-mpi: no mpirun: carry .mpilibs (tools/mpi-libs.sh)" >&2; exit 1; }
"$B/seislive" --version
cfg=docs/examples/mpi-model.toml
dev=${DEV:-cuda:0}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
t0=$(date +%s.%N)
"$B/seislive" model -c $cfg -d cpu -o "$out/mpi-cpu.segy" 2> "$out/mpi-cpu.log"
t1=$(date +%s.%N)
"$B/seislive" model -c $cfg -d "$dev" -o "$out/mpi-gpu1.segy" 2> "$out/mpi-gpu1.log"
t2=$(date +%s.%N)
mpirun --oversubscribe -np 2 "$B/seislive" model -c $cfg -d "$dev" -o "$out/mpi-gpu2.segy" 2> "$out/mpi-gpu2.log"
t3=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v dv="$dev" \
  'BEGIN { printf "wall: cpu 1 rank %.1f s, %s 1 rank %.1f s, %s 2 ranks (staged) %.1f s\n", b - a, dv, c - b, dv, d - c }'
status=0
python3 - "$out/mpi-cpu.segy" "$out/mpi-gpu1.segy" "$out/mpi-gpu2.segy" <<'PY' || status=1
import struct, sys, math
def traces(path):
    b = open(path, 'rb').read()
    ns = struct.unpack('>H', b[3220:3222])[0]
    v, at = [], 3600
    while at < len(b):
        v.extend(struct.unpack('>%df' % ns, b[at + 240:at + 240 + 4 * ns]))
        at += 240 + 4 * ns
    return v
cpu, g1, g2 = (traces(p) for p in sys.argv[1:4])
def diff(a, b):
    num = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    den = math.sqrt(sum(y * y for y in b))
    return num / den, max(abs(x - y) for x, y in zip(a, b)) / max(abs(y) for y in b)
ok = True
for name, a, b in (("2 ranks vs 1 rank", g2, g1), ("1 rank vs cpu", g1, cpu),
                   ("2 ranks vs cpu", g2, cpu)):
    l2, mx = diff(a, b)
    print("model %-22s relative L2 %.3g, max |diff| / max %.3g" % (name, l2, mx))
    ok = ok and l2 < 1e-5
sys.exit(0 if ok else 1)
PY

# The rtm job: the CPU run's shot migrated on the CPU, on one rank and on two ranks
# sharing the device (decompose = "domain": each rank images its subdomain, rank 0
# applies the imaging condition to the gathered accumulators and alone writes the image).
rtm_conf() { # NAME DECOMPOSE
  cat > "$out/rtm-$1.toml" <<EOF
[job]
kind = "rtm"
name = "mpi-rtm"
[model]
type = "layered"
n = [120, 100, 100]
d = [10.0, 10.0, 10.0]
o = [0.0, 0.0, 0.0]
layer_depths = [400.0, 700.0]
layer_velocities = [1800.0, 2400.0, 3000.0]
[propagator]
order = 8
t_max = 0.4
f_peak = 12.0
pml_width = 20
free_surface = true
[rtm]
strategy = "boundary"
imaging = "source"
aperture = 200.0
[input]
kind = "files"
paths = ["$out/mpi-cpu.segy"]
[output]
dir = "$out/rtm-$1"
pictures = false
[runtime]
device = "cpu"
decompose = "$2"
EOF
}
rtm_conf cpu none
rtm_conf gpu1 none
rtm_conf gpu2 domain
t0=$(date +%s.%N)
"$B/seislive" run -c "$out/rtm-cpu.toml" -d cpu 2> "$out/rtm-cpu.log"
t1=$(date +%s.%N)
"$B/seislive" run -c "$out/rtm-gpu1.toml" -d "$dev" 2> "$out/rtm-gpu1.log"
t2=$(date +%s.%N)
mpirun --oversubscribe -np 2 "$B/seislive" run -c "$out/rtm-gpu2.toml" -d "$dev" 2> "$out/rtm-gpu2.log"
t3=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v dv="$dev" \
  'BEGIN { printf "rtm wall: cpu 1 rank %.1f s, %s 1 rank %.1f s, %s 2 ranks (staged) %.1f s\n", b - a, dv, c - b, dv, d - c }'
grep -h "migrated" "$out/rtm-gpu1.log" "$out/rtm-gpu2.log" | tail -2 || true
python3 - "$out/rtm-cpu/image.f32" "$out/rtm-gpu1/image.f32" "$out/rtm-gpu2/image.f32" <<'PY' || status=1
import array, sys, math
def image(path):
    a = array.array('f')
    with open(path, 'rb') as f:
        a.frombytes(f.read())
    return a
cpu, g1, g2 = (image(p) for p in sys.argv[1:4])
def diff(a, b):
    num = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    den = math.sqrt(sum(y * y for y in b))
    return num / den, max(abs(x - y) for x, y in zip(a, b)) / max(abs(y) for y in b)
ok = len(cpu) == len(g1) == len(g2) and max(abs(y) for y in cpu) > 0
for name, a, b in (("2 ranks vs 1 rank", g2, g1), ("1 rank vs cpu", g1, cpu),
                   ("2 ranks vs cpu", g2, cpu)):
    l2, mx = diff(a, b)
    print("rtm   %-22s relative L2 %.3g, max |diff| / max %.3g" % (name, l2, mx))
    ok = ok and l2 < 1e-5
sys.exit(0 if ok else 1)
PY
exit $status
