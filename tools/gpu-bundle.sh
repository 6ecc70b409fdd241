#!/usr/bin/env bash
# Stripped copies of the release programs in .gpubundle/ (about 37 MiB instead of the
# 76 MiB of build/release with its objects and debug information), small enough to
# carry to the GPU machine with .devlibs.  Then, there:
#   SEISLIVE_BUILD=$PWD/.gpubundle bash tools/gpu-run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build/release}
rm -rf .gpubundle
mkdir -p .gpubundle
for p in gpu-tests unit-tests seislive seislive-bench seislive-gen seislive-sub seislive-replay; do
  [ -x "$B/$p" ] || { echo "gpu-bundle: $B/$p is missing: make -j2 && make -j2 $B/gpu-tests $B/unit-tests" >&2; exit 1; }
  strip -o ".gpubundle/$p" "$B/$p"
done
# Open MPI's runtime libraries (docs/mpi.md): a build with MPI links libmpi, which the GPU
# machine lacks (no package registry there).  A plain run never starts MPI, but the
# programs must load: the libraries they name go to .gpubundle/lib (gpu-run.sh puts it on
# LD_LIBRARY_PATH).  mpirun itself travels separately (tools/mpi-libs.sh).
mkdir -p .gpubundle/lib
ldd .gpubundle/seislive .gpubundle/unit-tests .gpubundle/gpu-tests 2>/dev/null \
  | awk '$1 ~ /^lib(mpi|open-rte|open-pal|hwloc|event|udev)/ && $3 ~ /^\// {print $3}' | sort -u \
  | while read -r lib; do cp -L "$lib" .gpubundle/lib/; done
du -sh .gpubundle
