#!/usr/bin/env bash
# On a machine with several GPUs (issue 17; docs/mpi.md "GPU"): seislive-bench scaling for
# 1, 2, 4 ... ranks, one GPU each, halo planes over NCCL when it loads (else staged), the
# tables one after the other into $OUT/scaling.md.  Carry .gpubundle, .devlibs and .mpilibs
# as tools/gpu-mpi.sh says, then:
#   SEISLIVE_BUILD=$PWD/.gpubundle bash tools/gpu-scaling.sh [NP ...]   (default: 1 2 4 8 up to the GPUs)
# NCCL comes from Python's nvidia-nccl-cu13 package (the machine has no other): its lib
# folder goes on LD_LIBRARY_PATH.  NVLink multicast (NVLS) stays off: NCCL_NVLS_ENABLE=0.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${SEISLIVE_BUILD:-$PWD/build/release}
out=${OUT:-gpu-out}
mkdir -p "$out"
. tools/gpu-env.sh
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
nps=${*:-$(for n in 1 2 4 8; do [ "$n" -le "$ngpu" ] && echo $n; done)}
: > "$out/scaling.md"
for np in $nps; do
  echo "== $np ranks" | tee -a "$out/scaling.md"
  timeout 600 mpirun --oversubscribe -np "$np" -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH "$B/seislive-bench" scaling \
    ${SCALING_ARGS:-} | tee -a "$out/scaling.md"
done
