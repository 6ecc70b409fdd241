#!/usr/bin/env bash
# The locate job on the GPU against the CPU on the real-data configs of the docs
# (docs/locate.md, "Worked example": docs/examples/iceland-locate.toml): the same events,
# same count, origin times within TOL_T (default 0.002 s, one sample at 500/s) and
# positions within TOL_M (default 12.5 m, half a cell) of each other.  The stack sums
# agree bit for bit on both backends (kernels/stack.h) and the characteristic functions
# are the same double-precision code (kernels/cf.h), so any difference is a finding.
#
# On the GPU machine (no ../shared there: the recordings travel in an ignored folder):
#   mkdir -p .shared-data && cp -r ../shared/data/icequake_iceland_mseed .shared-data/
#   make -j2 && bash tools/gpu-bundle.sh
#   device call, carry [".gpubundle", ".devlibs", ".shared-data"]:
#     SEISLIVE_BUILD=$PWD/.gpubundle SEISLIVE_SHARED_DATA=$PWD/.shared-data bash tools/gpu-locate-check.sh
# Writes the runs' logs and events to $OUT (default gpu-out/locate-check) and prints a
# table of the events and a PASS / FAIL line last; exits non-zero on FAIL.
set -uo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
B=${SEISLIVE_BUILD:-$PWD/build/release}
export SEISLIVE_BUILD=$B
if [ -z "${SEISLIVE_SHARED_DATA:-}" ]; then
  for d in ../shared/data .shared-data; do
    [ -d "$d/icequake_iceland_mseed" ] && { SEISLIVE_SHARED_DATA=$d; break; }
  done
fi
export SEISLIVE_SHARED_DATA=${SEISLIVE_SHARED_DATA:-../shared/data}
out=${OUT:-gpu-out}/locate-check
mkdir -p "$out"
tol_t=${TOL_T:-0.002}
tol_m=${TOL_M:-12.5}
status=0

t0=$(date +%s.%N)
bash tools/iceland-locate.sh "$out/gpu" cuda:0 > /dev/null || { echo "gpu-locate-check: the GPU run failed" >&2; status=1; }
t1=$(date +%s.%N)
OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)} bash tools/iceland-locate.sh "$out/cpu" cpu > /dev/null ||
  { echo "gpu-locate-check: the CPU run failed" >&2; status=1; }
t2=$(date +%s.%N)
[ $status = 0 ] || { echo "FAIL: a run failed (logs in $out)"; exit 1; }

echo "iceland-locate: GPU $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s, CPU $(awk -v a="$t1" -v b="$t2" 'BEGIN{printf "%.1f", b-a}') s (whole job, files read included)"
grep -h "characteristic function" "$out/gpu/log.txt" | sed 's/^.*locate: /  /'
# events.csv: id,origin_time,origin_ns,x_m,y_m,z_m,...
awk -F, -v tt="$tol_t" -v tm="$tol_m" '
  FNR == 1 { next }
  FILENAME ~ /gpu/ { ng++; gt[ng] = $3; gx[ng] = $4; gy[ng] = $5; gz[ng] = $6; gs[ng] = $2; next }
  { nc++; ct[nc] = $3; cx[nc] = $4; cy[nc] = $5; cz[nc] = $6 }
  END {
    printf "%-3s %-28s %9s %9s %9s | %9s %9s\n", "#", "origin (GPU)", "x m", "y m", "z m", "dt ms", "dpos m"
    bad = ng != nc
    mt = 0; mp = 0
    nmax = ng; if (nc > nmax) nmax = nc
    for (i = 1; i <= nmax; i++) {
      if (i > ng || i > nc) { printf "%-3d only on the %s\n", i, (i > ng ? "CPU" : "GPU"); continue }
      dt = (gt[i] - ct[i]) / 1e6; d = sqrt((gx[i]-cx[i])^2 + (gy[i]-cy[i])^2 + (gz[i]-cz[i])^2)
      printf "%-3d %-28s %9.1f %9.1f %9.1f | %9.3f %9.2f\n", i, gs[i], gx[i], gy[i], gz[i], dt, d
      if (dt < 0) dt = -dt
      if (dt > mt) mt = dt; if (d > mp) mp = d
      if (dt > tt * 1000 || d > tm) bad = 1
    }
    printf "events: GPU %d, CPU %d; largest difference %.3f ms, %.2f m (tolerances %.1f ms, %.1f m)\n", ng, nc, mt, mp, tt * 1000, tm
    printf "%s\n", bad ? "FAIL" : "PASS"
    exit bad
  }' "$out/gpu/events.csv" "$out/cpu/events.csv" | tee "$out/summary.txt" || status=1
exit $status
