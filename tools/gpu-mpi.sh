#!/usr/bin/env bash
# On the GPU machine (issue 16, docs/mpi.md): the model job of docs/examples/mpi-model.toml
# with decompose = "domain" on two ranks sharing cuda:0 through the staged MPI transport
# (halo planes, source amplitudes and receiver samples through host memory), against
# one rank on cuda:0 and against the CPU.  Carry .gpubundle, .devlibs and .mpilibs
# (tools/gpu-bundle.sh, ../shared/tools/device-libs.sh, tools/mpi-libs.sh), then:
#   SEISLIVE_BUILD=$PWD/.gpubundle bash tools/gpu-mpi.sh
# Prints the relative L2 and max differences of the traces; exits 1 unless two ranks
# match one rank on the GPU within 1e-5 (relative L2) and the GPU matches the CPU within
# 1e-5.  Writes into $OUT (or gpu-out).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${SEISLIVE_BUILD:-$PWD/build/release}
out=${OUT:-gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -d "$B/lib" ] && export LD_LIBRARY_PATH=$B/lib:$LD_LIBRARY_PATH
. tools/mpi-env.sh
command -v mpirun >/dev/null || { echo "gpu-mpi: no mpirun: carry .mpilibs (tools/mpi-libs.sh)" >&2; exit 1; }
"$B/seislive" --version
cfg=docs/examples/mpi-model.toml
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
t0=$(date +%s.%N)
"$B/seislive" model -c $cfg -d cpu -o "$out/mpi-cpu.segy" 2> "$out/mpi-cpu.log"
t1=$(date +%s.%N)
"$B/seislive" model -c $cfg -d cuda:0 -o "$out/mpi-gpu1.segy" 2> "$out/mpi-gpu1.log"
t2=$(date +%s.%N)
mpirun --oversubscribe -np 2 "$B/seislive" model -c $cfg -d cuda:0 -o "$out/mpi-gpu2.segy" 2> "$out/mpi-gpu2.log"
t3=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" \
  'BEGIN { printf "wall: cpu 1 rank %.1f s, cuda:0 1 rank %.1f s, cuda:0 2 ranks (staged) %.1f s\n", b - a, c - b, d - c }'
python3 - "$out/mpi-cpu.segy" "$out/mpi-gpu1.segy" "$out/mpi-gpu2.segy" <<'PY'
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
for name, a, b in (("2 ranks vs 1 rank, cuda:0", g2, g1), ("1 rank cuda:0 vs cpu", g1, cpu),
                   ("2 ranks cuda:0 vs cpu", g2, cpu)):
    l2, mx = diff(a, b)
    print("%-28s relative L2 %.3g, max |diff| / max %.3g" % (name, l2, mx))
    ok = ok and l2 < 1e-5
sys.exit(0 if ok else 1)
PY
