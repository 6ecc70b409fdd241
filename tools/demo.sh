#!/usr/bin/env bash
# The built-in demo (`make demo`): live imaging of a small synthetic survey, end to end.
#
#   1. seislive-gen shots models a survey over the demo model (reflectors at 150 m and
#      380 m, a dipping interface, a salt-like dome) with seislive's own propagator;
#   2. seislive run -c tools/demo.toml starts the rtm job (GPU when there is one);
#   3. seislive-sub subscribes and writes every image it receives;
#   4. seislive-gen streams the shots to the running job, then ends the stream;
#   5. the final image is in demo-out/image: image_final.segy, .f32 + .json, and PNG
#      slices image_final_{x,y,z}.png (axes in metres, colour bar, depth^3 gain: the
#      same pictures as the job's own demo-out/rtm/image_{x,y,z}.png).
# Usage: tools/demo.sh [BUILD_DIR]   (default build/release; `make demo` passes its own)
#   SEISLIVE_DEMO_OUT: output folder (default demo-out).
#   The live status page (docs/http.md) is on while the job runs: its address is
#   printed.  SEISLIVE_DEMO_HTTP: its HOST:PORT (default 127.0.0.1:0, a free port);
#   SEISLIVE_DEMO_KEEP=S: keep the page up S seconds after the last shot (default 0).
#   The job listens on free ports
#   (a copy of tools/demo.toml with "tcp://127.0.0.1:*" endpoints); the image appears in
#   OUT/image only when the job and the subscriber succeeded: else exit 1, no image.
set -euo pipefail
cd "$(dirname "$0")/.."
. tools/demo-common.sh
B=${1:-build/release}
OUT=${SEISLIVE_DEMO_OUT:-demo-out}
for p in seislive seislive-gen seislive-sub; do
  [ -x "$B/$p" ] || { echo "demo: $B/$p is missing: build first (make)" >&2; exit 1; }
done
t0=$(date +%s)
step() { printf '\n== demo [%3ds] %s\n' $(( $(date +%s) - t0 )) "$*"; }

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$OUT/rtm.partial" "$OUT/image.partial" "${CFG:-}"
}
trap cleanup EXIT
fail() {
  echo "demo: $*; the log ($OUT/seislive.log) ends with:" >&2
  tail -20 "$OUT/seislive.log" >&2 || true
  exit 1
}

"$B/seislive" --version
rm -rf "$OUT/survey" "$OUT/rtm" "$OUT/rtm.partial" "$OUT/image" "$OUT/image.partial" \
       "$OUT/seislive.log"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
CFG=$(mktemp "${TMPDIR:-/tmp}/seislive-demo.XXXXXX.toml")
demo_config tools/demo.toml "$CFG" "$OUT" rtm
# the status page ([output] http), for as long as the job runs (+ SEISLIVE_DEMO_KEEP s)
sed -i "s|^\[output\]\$|[output]\nhttp = \"${SEISLIVE_DEMO_HTTP:-127.0.0.1:0}\"\nhttp_keep = ${SEISLIVE_DEMO_KEEP:-0}|" "$CFG"
mkdir -p "$OUT/rtm.partial"

step "generating the survey (4 shots, 41 receivers, 81 x 21 x 51 cells of 10 m) into $OUT/survey"
"$B/seislive-gen" shots -o "$OUT/survey" --n 81,21,51 --d 10 --shots 4 --receivers 41 \
    --t-max 0.8 --dt 0.002 --f-peak 12 --direct subtract

step "starting: seislive run -c tools/demo.toml, on free ports (log: $OUT/seislive.log)"
"$B/seislive" run -c "$CFG" >"$OUT/seislive.log" 2>&1 &
run_pid=$!
pids+=("$run_pid")
IN=$(demo_endpoint "$OUT/seislive.log" "$run_pid" "receiving on") || fail "seislive run did not start"
PUB=$(demo_endpoint "$OUT/seislive.log" "$run_pid" "publishing on") || fail "seislive run did not start"
grep -m1 -E 'device|backend' "$OUT/seislive.log" 2>/dev/null || true
PAGE=$(grep -m1 -oE 'status page on http://[^ ]+' "$OUT/seislive.log" | sed 's/^status page on //') || true
echo "demo: the live status page is at ${PAGE:-(not started: see $OUT/seislive.log)}" \
     "(up while the job runs${SEISLIVE_DEMO_KEEP:+, and $SEISLIVE_DEMO_KEEP s after})"

step "subscribing: seislive-sub -o $OUT/image --gain 3 $PUB"
"$B/seislive-sub" -o "$OUT/image.partial" --gain 3 --idle 900 "$PUB" &
sub_pid=$!
pids+=("$sub_pid")

step "streaming the shots to $IN"
"$B/seislive-gen" shots -o "$OUT/survey" --reuse --zmq "$IN" --end ||
  fail "seislive-gen could not stream the shots"

step "waiting for the last shot to be migrated"
wait "$run_pid" || fail "seislive run failed"
wait "$sub_pid" || fail "seislive-sub failed"
[ -s "$OUT/image.partial/image_final.segy" ] || fail "seislive-sub has no final image"
# both succeeded: their files are the result
mv "$OUT/rtm.partial" "$OUT/rtm"
mv "$OUT/image.partial" "$OUT/image"
trap - EXIT
rm -f "$CFG"
grep -E 'device|shot .* migrated|strategy' "$OUT/seislive.log" | head -8 || true

step "done"
echo "The final image of the demo survey is in $OUT/image:"
ls -1 "$OUT/image"/image_final* | sed 's/^/  /'
echo "Open $OUT/image/image_final_y.png for the vertical section along the receiver line"
echo "(depth^3 gain): reflectors at 150 m and 380 m, the interface dipping from 250 m at"
echo "x = 0 to 330 m at x = 800 m, and the top of the dome at 275 m under x = 500 m."
