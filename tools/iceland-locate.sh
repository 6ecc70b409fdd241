#!/usr/bin/env bash
# Run the worked example of docs/locate.md (docs/examples/iceland-locate.toml) on the
# Iceland icequake recordings, from any data folder:
#   tools/iceland-locate.sh [OUTDIR] [DEVICE]
# SEISLIVE_SHARED_DATA: the folder holding icequake_iceland_mseed/ (default ../shared/data
# beside the clone); SEISLIVE_BUILD: the programs (default build/cpu).  OUTDIR (default
# demo-out/iceland) receives the config actually run (run.toml), the log and events.csv;
# DEVICE (default cpu) is passed as --device.  Extra [locate] lines (a coarser grid, a
# per-phase key) can be appended to the config with ICELAND_EXTRA="key = value\n...".
set -euo pipefail
cd "$(dirname "$0")/.."
data=${SEISLIVE_SHARED_DATA:-../shared/data}
B=${SEISLIVE_BUILD:-build/cpu}
out=${1:-demo-out/iceland}
dev=${2:-cpu}
if [ ! -f "$data/icequake_iceland_mseed/iceland_stations.txt" ]; then
  echo "iceland-locate: no $data/icequake_iceland_mseed (set SEISLIVE_SHARED_DATA)" >&2
  exit 2
fi
data=$(cd "$data" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
# the example with absolute paths (its own are relative to docs/examples); extra keys go
# at the end of [locate], a later duplicate of a key replaces it (grid_n, grid_d ...)
awk -v data="$data" -v out="$out" -v extra="${ICELAND_EXTRA:-}" '
  { gsub(/\.\.\/\.\.\/\.\.\/shared\/data/, data) }
  /^dir = / { $0 = "dir = \"" out "\"" }
  /^\[input\]/ && extra != "" { gsub(/\\n/, "\n", extra); print extra; print "" }
  { print }' docs/examples/iceland-locate.toml > "$out/run.toml.tmp"
# a key given twice is refused by the config: keep the last of each [locate] key
awk '
  /^\[/ { sec = $0 }
  /^[a-z_]+ = / && sec == "[locate]" { split($0, kv, " = "); last[kv[1]] = NR }
  { line[NR] = $0 }
  END { for (i = 1; i <= NR; i++) {
          if (line[i] ~ /^[a-z_]+ = / ) { split(line[i], kv, " = "); if ((kv[1] in last) && last[kv[1]] != i) continue }
          print line[i] } }' "$out/run.toml.tmp" > "$out/run.toml"
rm -f "$out/run.toml.tmp"
"$B/seislive" run -c "$out/run.toml" --device "$dev" > "$out/log.txt" 2>&1 || { tail -n 20 "$out/log.txt" >&2; exit 1; }
cat "$out/events.csv"
