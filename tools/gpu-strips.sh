#!/usr/bin/env bash
# Boundary's strips in page-locked host memory (docs/rtm.md "Boundary's strips in host
# memory") on the GPU: the strip tests (host strips == device strips bit for bit, acoustic
# and TTI, and against the CPU), then the reference shot of seislive-bench rtm (400 x 400
# x 200, 3000 steps, order 8, xcorr every step): acoustic boundary with its strips on the
# device and forced to the host (the spill's cost), median of 3, with BASE (a
# seislive-bench built before the host store, optional) in the same call; and the TTI
# boundary, whose 82.7 GiB of strips do not fit the H100 (strip_store auto takes them to
# the host), median of 2 (the first run pins the host store, the second reuses it).
# Each table's header gives the host link's rate measured in the same run.  About 150 s
# on the H100 (128 GiB host).
#
#   SEISLIVE_BUILD=build/release [BASE=path/to/old/seislive-bench] bash tools/gpu-strips.sh
# Writes each run's tables to $OUT (default gpu-out/strips) and prints the rows.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${SEISLIVE_BUILD:-$PWD/build/release}
out=${OUT:-gpu-out}/strips
mkdir -p "$out"
free -g | head -2
echo "== gpu-tests gpu_rtm_strips/*"
SEISLIVE_REQUIRE_GPU=1 SEISLIVE_BUILD=$B "$B/gpu-tests" --jobs=1 --verbose --filter 'gpu_rtm_strips/*' \
  > "$out/tests.log" 2>&1
echo "exit $?"
grep -E 'Synthesis|FAIL|cells differ' "$out/tests.log" | cut -c1-200
run() { # name, program, args...
  local name=$1 prog=$2
  shift 2
  "$prog" rtm "$@" > "$out/$name.md" 2> "$out/$name.err"
  echo "== $name: exit $?"
  grep -E '^host link|^pinning|^\| boundary ' "$out/$name.md" | cut -c1-260
}
if [ -n "${BASE:-}" ]; then
  run acoustic-base "$BASE" --strategies boundary --repeat 3
fi
run acoustic-device "$B/seislive-bench" --strategies boundary --repeat 3 --strip-store device
run acoustic-host "$B/seislive-bench" --strategies boundary --repeat 3 --strip-store host
run tti-auto "$B/seislive-bench" --physics tti --strategies boundary --repeat 2
