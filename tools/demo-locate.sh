#!/usr/bin/env bash
# The second built-in demo (`make demo-locate`): the locate job finds synthetic
# microseismic events in a stream.
#
#   1. seislive-gen micro writes a 6 x 6 surface array of three-component receivers and
#      the true events into demo-out/micro (stations.txt, events.csv);
#   2. seislive run -c tools/demo-locate.toml starts the locate job (GPU when there is one);
#   3. seislive-sub prints the events as they are published;
#   4. seislive-gen micro streams the same recording (same seed) as trace blocks, twenty
#      times faster than real time, then ends the stream;
#   5. the events found (demo-out/locate/events.csv) are compared with the true ones.
# Usage: tools/demo-locate.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build/release}
OUT=demo-out
IN=tcp://127.0.0.1:47565       # tools/demo-locate.toml [input] endpoint
PUB=tcp://127.0.0.1:47566      # and [output] endpoint
for p in seislive seislive-gen seislive-sub; do
  [ -x "$B/$p" ] || { echo "demo-locate: $B/$p is missing: build first (make)" >&2; exit 1; }
done
t0=$(date +%s)
step() { printf '\n== demo-locate [%3ds] %s\n' $(( $(date +%s) - t0 )) "$*"; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# the recording: the same options for the files and the stream
REC=(--count 6,6 --spacing 200 --components 3 --events 4 --box 150,850,150,850,600,1400
     --duration 40 --rate 250 --noise 0.05 --seed 7)

"$B/seislive" --version
rm -rf "$OUT/micro" "$OUT/locate" "$OUT/locate-sub" "$OUT/seislive-locate.log"
mkdir -p "$OUT"

step "generating the array and the true events into $OUT/micro"
"$B/seislive-gen" micro -o "$OUT/micro" "${REC[@]}"

step "starting: seislive run -c tools/demo-locate.toml (log: $OUT/seislive-locate.log)"
"$B/seislive" run -c tools/demo-locate.toml >"$OUT/seislive-locate.log" 2>&1 &
run_pid=$!
pids+=("$run_pid")

step "subscribing: seislive-sub $PUB (events as they come)"
"$B/seislive-sub" -o "$OUT/locate-sub" --stay --no-segy --no-png --idle 900 "$PUB" &
sub_pid=$!
pids+=("$sub_pid")

step "streaming 40 s of recording at 20x real time to $IN"
"$B/seislive-gen" micro --zmq "$IN" "${REC[@]}" --block 1 --pace 20x --end

step "waiting for the last block to be processed"
if ! wait "$run_pid"; then
  echo "demo-locate: seislive run failed; its log ($OUT/seislive-locate.log) ends with:" >&2
  tail -20 "$OUT/seislive-locate.log" >&2
  exit 1
fi
sleep 1
kill "$sub_pid" 2>/dev/null || true
wait "$sub_pid" 2>/dev/null || true
trap - EXIT

step "done: true events (demo-out/micro/events.csv) and events found (demo-out/locate/events.csv)"
echo "true:"
cut -d, -f2,4-6 "$OUT/micro/events.csv" | sed 's/,/   /g; s/^/  /'
echo "found:"
if [ -s "$OUT/locate/events.csv" ]; then
  sed 's/,/   /g; s/^/  /' "$OUT/locate/events.csv" | cut -c1-160
else
  echo "  (none)"
fi
