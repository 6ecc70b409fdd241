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
#   SEISLIVE_DEMO_OUT: output folder (default demo-out).  The job listens on free ports
#   (a copy of tools/demo-locate.toml with "tcp://127.0.0.1:*" endpoints); its events
#   appear in OUT/locate only when it succeeded: a failed run exits 1 and leaves none.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/demo-common.sh
B=${1:-build/release}
OUT=${SEISLIVE_DEMO_OUT:-demo-out}
for p in seislive seislive-gen seislive-sub; do
  [ -x "$B/$p" ] || { echo "demo-locate: $B/$p is missing: build first (make)" >&2; exit 1; }
done
t0=$(date +%s)
step() { printf '\n== demo-locate [%3ds] %s\n' $(( $(date +%s) - t0 )) "$*"; }
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$OUT/locate.partial" "${CFG:-}"
}
trap cleanup EXIT
fail() {
  echo "demo-locate: $*; the log ($OUT/seislive-locate.log) ends with:" >&2
  tail -20 "$OUT/seislive-locate.log" >&2 || true
  exit 1
}

# the recording: the same options for the files and the stream
REC=(--count 6,6 --spacing 200 --components 3 --events 4 --box 150,850,150,850,600,1400
     --duration 40 --rate 250 --noise 0.05 --seed 7)

"$B/seislive" --version
rm -rf "$OUT/micro" "$OUT/locate" "$OUT/locate.partial" "$OUT/locate-sub" "$OUT/seislive-locate.log"
mkdir -p "$OUT"

step "generating the array and the true events into $OUT/micro"
"$B/seislive-gen" micro -o "$OUT/micro" "${REC[@]}"

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
CFG=$(mktemp "${TMPDIR:-/tmp}/seislive-demo-locate.XXXXXX.toml")
demo_config tools/demo-locate.toml "$CFG" "$OUT" locate
mkdir -p "$OUT/locate.partial"

step "starting: seislive run -c tools/demo-locate.toml, on free ports (log: $OUT/seislive-locate.log)"
"$B/seislive" run -c "$CFG" >"$OUT/seislive-locate.log" 2>&1 &
run_pid=$!
pids+=("$run_pid")
IN=$(demo_endpoint "$OUT/seislive-locate.log" "$run_pid" "receiving on") ||
  fail "seislive run did not start"
PUB=$(demo_endpoint "$OUT/seislive-locate.log" "$run_pid" "publishing on") ||
  fail "seislive run did not start"

step "subscribing: seislive-sub $PUB (events as they come)"
"$B/seislive-sub" -o "$OUT/locate-sub" --no-segy --no-png --idle 900 "$PUB" &
sub_pid=$!
pids+=("$sub_pid")

step "streaming 40 s of recording at 20x real time to $IN"
"$B/seislive-gen" micro --zmq "$IN" "${REC[@]}" --block 1 --pace 20x --end ||
  fail "seislive-gen could not stream the recording"

step "waiting for the last block to be processed"
wait "$run_pid" || fail "seislive run failed"
# the job succeeded: its events are the result
rm -rf "$OUT/locate"
mv "$OUT/locate.partial" "$OUT/locate"
# the subscriber ends by itself after the final status (bounded: it is killed after 30 s)
for ((i = 0; i < 300; i++)); do kill -0 "$sub_pid" 2>/dev/null || break; sleep 0.1; done
kill "$sub_pid" 2>/dev/null || true
wait "$sub_pid" 2>/dev/null || true
trap - EXIT
rm -f "$CFG"

step "done: true events ($OUT/micro/events.csv) and events found ($OUT/locate/events.csv)"
echo "true:"
cut -d, -f2,4-6 "$OUT/micro/events.csv" | sed 's/,/   /g; s/^/  /'
echo "found:"
if [ -s "$OUT/locate/events.csv" ]; then
  sed 's/,/   /g; s/^/  /' "$OUT/locate/events.csv" | cut -c1-160
else
  echo "  (none)"
fi
