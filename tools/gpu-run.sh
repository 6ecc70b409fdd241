#!/usr/bin/env bash
# Everything the GPU machine must run, in one device call (it has no package registry,
# so the Debian runtime libraries travel in .devlibs, unpacked by
# ../shared/tools/device-libs.sh).  Build here first (`make -j2`), strip the programs
# into .gpubundle (tools/gpu-bundle.sh), then call the device tool with carry
# [".gpubundle", ".devlibs"] and `SEISLIVE_BUILD=$PWD/.gpubundle bash tools/gpu-run.sh`.
# Writes logs to $OUT (or ./gpu-out) and prints a short summary last.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
B=${SEISLIVE_BUILD:-$PWD/build/release}
export SEISLIVE_BUILD=$B
# Open MPI's runtime libraries, when the bundle carries them (tools/gpu-bundle.sh)
[ -d "$B/lib" ] && export LD_LIBRARY_PATH=$B/lib:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv \
  | tee "$out/gpu.txt"
"$B/seislive" --version | tee -a "$out/gpu.txt"

status=0
echo "== GPU tests" | tee "$out/tests.log"
# A missing device fails every GPU test instead of skipping it (tests/gpu/gpu_support.h):
# on this machine a broken driver must not give a green run of skipped tests.
export SEISLIVE_REQUIRE_GPU=1
( "$B/gpu-tests" --jobs=1 --verbose 2>&1 ) | tee -a "$out/tests.log" | tail -n 40 || status=1
grep -q 'Failing: 0 | Crashing: 0' "$out/tests.log" || status=1
# Criterion 2.4's synthesis line has no skipped count (skipped tests are not in Tested):
# count the [SKIP] lines of the verbose log, and require Passing = Tested > 0.
skipped=$(grep -c '^\[SKIP\]' "$out/tests.log")
tested=$(grep -o 'Tested: [0-9]*' "$out/tests.log" | tail -1 | grep -o '[0-9]*$')
passing=$(grep -o 'Passing: [0-9]*' "$out/tests.log" | tail -1 | grep -o '[0-9]*$')
echo "Skipped: $skipped" | tee -a "$out/tests.log"
[ "$skipped" = 0 ] || status=1
[ -n "$tested" ] && [ "$tested" -gt 0 ] && [ "$passing" = "$tested" ] || status=1

echo "== CPU tests on the GPU machine" | tee "$out/unit.log"
( cd "$PWD" && OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive "$B/unit-tests" --jobs=8 2>&1 ) >> "$out/unit.log"; tail -n 1 "$out/unit.log"

if [ -x "$B/seislive-bench" ]; then
  for b in ${BENCHES:-stencil rtm stack pipeline}; do
    echo "== seislive-bench $b" | tee -a "$out/bench.txt"
    timeout 400 "$B/seislive-bench" "$b" 2>>"$out/bench.err" | tee -a "$out/bench.txt" || status=1
  done
fi
echo "== summary: GPU tests $(grep -o 'Tested:.*' "$out/tests.log" | tail -1) | Skipped: $skipped"
exit $status
