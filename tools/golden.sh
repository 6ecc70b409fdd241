#!/usr/bin/env bash
# golden — run the shipped configurations' jobs on the CPU, reduced to seconds, and print
# one digest line per output: the bitwise record that a refactoring "changes no result"
# (tests/test_golden.c compares these lines with tests/golden/digests.txt).
#
# Usage: tools/golden.sh BUILD_DIR OUT_DIR [GROUP...]
#   BUILD_DIR  the programs to run (seislive, seislive-gen), e.g. build/cpu
#   OUT_DIR    where the cases write (created; kept, so two builds' outputs can be diffed)
#   GROUP      model, gen, rtm, locate (default: all four; rtm makes gen's survey first)
# Prints "NAME BYTES SHA256 MADE-BY" per output, the format of tests/golden/digests.txt:
# NAME is the file's path under OUT_DIR, with [3200:] when its first 3200 bytes are left out.
# To compare two commits: build each, run this script once per build into two folders,
# and diff the digest lines (then cmp the files they name).  To record new digests after
# an intended change of results: tools/golden.sh build/cpu /tmp/g > tests/golden/digests.txt
#
# The cases are the shipped configurations, copied with only their sizes reduced (t_max,
# grid, shots, recording length), the device forced to the CPU and the input read from
# files instead of ZeroMQ; every other key (strategy, imaging, boundary, interpolation,
# order) is as shipped, and the rtm cases set each strategy explicitly (`auto` picks by
# the free memory of the machine).  Each output's digest covers its data only:
#   SEG-Y: everything after the 3200-byte textual header (binary header, trace headers,
#     samples): the textual header describes the propagator in words, which a refactoring
#     may reword;
#   rtm: image.f32 (image.segy holds the same samples, image.json no results);
#   locate: events.csv and events.jsonl (no wall-clock field: origin times come from the
#     data's time stamps), and the coherence volumes' .f32 (their .json only frames them).
# Run time on one core (OMP_NUM_THREADS=1): about 35 s.  The digests are the same with
# any number of OpenMP threads (checked with 1 and 2).
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,14p' "$0" >&2; exit 2; }
# both folders as given from the caller's folder; then the configurations of this checkout
B=$(cd "$1" && pwd)
mkdir -p "$2"
OUT=$(cd "$2" && pwd)
shift 2
cd "$(dirname "$0")/.."
groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(model gen rtm locate)
for p in seislive seislive-gen; do
  [ -x "$B/$p" ] || { echo "golden: $B/$p is missing: build first" >&2; exit 1; }
done

die() { echo "golden: $*" >&2; exit 1; }

# run LOG CMD...: CMD with its output in LOG; on failure, the log's end and exit 1.
run() {
  local log=$1
  shift
  "$@" >"$log" 2>&1 || { tail -20 "$log" >&2; die "failed ($(basename "$log")): $*"; }
}

# digest NAME FILE SKIP MADE-BY: the line for FILE's bytes after the first SKIP.
digest() {
  local size sha
  [ -f "$2" ] || die "$1: $2 was not written"
  size=$(stat -c %s "$2")
  sha=$(tail -c +$(($3 + 1)) "$2" | sha256sum | cut -d' ' -f1)
  printf '%s %d %s %s\n' "$1" $((size - $3)) "$sha" "$4"
}

# setkey FILE TABLE KEY VALUE: KEY = VALUE in [TABLE] of the TOML file FILE, replacing
# the key's line or adding one right after the table's header; fails when TABLE is absent.
setkey() {
  local f=$1 t=$2 k=$3 v=$4
  awk -v t="[$t]" -v k="$k" -v v="$v" '
    /^\[/ { if (intab && !done) { print k " = " v; done = 1 } intab = ($0 == t); seen = seen || intab; print; next }
    intab && $0 ~ "^" k "[ \t]*=" { if (!done) print k " = " v; done = 1; next }
    { print }
    END { if (intab && !done) { print k " = " v; done = 1 } if (!seen) exit 1 }
  ' "$f" >"$f.tmp" || die "$f: no [$t] table"
  mv "$f.tmp" "$f"
  grep -qxF "$k = $v" "$f" || die "$f: could not set $t.$k"
}

# delkey FILE KEY: remove the lines setting KEY (any table).
delkey() { sed -i "/^$2[ \t]*=/d" "$1"; }

# conf/model.example.toml: the model job (layered model, sinc points, CPML) over its first
# 0.5 s (the shipped 1.0 s doubles the time and adds no code path).
case_model() {
  local d=$OUT/model
  rm -rf "$d" && mkdir -p "$d"
  cp conf/model.example.toml "$d/example.toml"
  setkey "$d/example.toml" propagator t_max 0.5
  run "$d/example.log" "$B/seislive" model -c "$d/example.toml" -d cpu -o "$d/example.segy"
  digest 'model/example.segy[3200:]' "$d/example.segy" 3200 \
    "seislive model -d cpu (conf/model.example.toml, t_max = 0.5)"
}

# The demo survey (tools/demo.sh's seislive-gen shots options: the demo model, 12 Hz,
# 2 ms, direct wave subtracted) on a smaller grid: two shots, 21 receivers, 0.35 s.
# shellcheck disable=SC2054  # the commas are in option values
GEN_ARGS=(--n 41,11,31 --d 10 --shots 2 --receivers 21 --t-max 0.35 --dt 0.002 --f-peak 12
          --direct subtract --device cpu)
case_gen() {
  local d=$OUT/gen
  rm -rf "$d" && mkdir -p "$d"
  run "$d/gen.log" "$B/seislive-gen" shots -o "$d/survey" "${GEN_ARGS[@]}"
  local made="seislive-gen shots ${GEN_ARGS[*]}"
  digest gen/survey/model.f32 "$d/survey/model.f32" 0 "$made"
  digest gen/survey/model_smooth.f32 "$d/survey/model_smooth.f32" 0 "$made"
  digest 'gen/survey/direct.segy[3200:]' "$d/survey/direct.segy" 3200 "$made"
  digest 'gen/survey/shots.segy[3200:]' "$d/survey/shots.segy" 3200 "$made (direct wave subtracted)"
}

# rtm NAME KEY=VALUE...: tools/demo.toml on gen's survey, its [rtm] keys changed as given.
rtm() {
  local name=$1 d=$OUT/rtm/$1
  shift
  rm -rf "$d" && mkdir -p "$d"
  local c=$d/run.toml
  cp tools/demo.toml "$c"
  setkey "$c" model file "\"$OUT/gen/survey/model_smooth.f32\""
  setkey "$c" model n "[41, 11, 31]"
  setkey "$c" propagator t_max 0.35
  setkey "$c" input kind '"files"'
  setkey "$c" input paths "[\"$OUT/gen/survey/shots.segy\"]"
  delkey "$c" endpoint
  delkey "$c" socket
  setkey "$c" output dir "\"$d/out\""
  local kv made=""
  for kv in "$@"; do
    setkey "$c" rtm "${kv%%=*}" "${kv#*=}"
    made+=" ${kv%%=*} = ${kv#*=},"
  done
  run "$d/run.log" "$B/seislive" run -c "$c" -d cpu
  digest "rtm/$name/out/image.f32" "$d/out/image.f32" 0 \
    "seislive run -d cpu (tools/demo.toml on gen's survey, t_max = 0.35,${made%,})"
}

case_rtm() {
  [ -s "$OUT/gen/survey/shots.segy" ] || case_gen >/dev/null
  # the demo's imaging (source illumination, Laplacian, every 2nd step, 300 m aperture)
  # with each strategy; a few checkpoints so that checkpoint recomputes
  rtm full strategy='"full"'
  rtm boundary strategy='"boundary"'
  rtm checkpoint strategy='"checkpoint"' checkpoints=4
  rtm checkpoint-uniform strategy='"checkpoint"' checkpoints=4 checkpoint_schedule='"uniform"'
  rtm random strategy='"random"'
  # conf/seislive.example.toml's imaging (xcorr, the default interval image_every = 0:
  # auto, the image's Nyquist; no Laplacian, 1000 m aperture), and the other two
  # conditions, each on another strategy
  rtm xcorr strategy='"full"' imaging='"xcorr"' image_every=0 laplacian=false aperture=1000.0
  rtm receiver strategy='"boundary"' imaging='"receiver"'
  rtm both strategy='"random"' imaging='"both"'
}

# tools/demo-locate.sh's recording (6 x 6 three-component array, seed 7) over 24 s with 3
# events instead of 40 s with 4, from files, located with tools/demo-locate.toml.
# shellcheck disable=SC2054  # the commas are in option values
MICRO_ARGS=(--count 6,6 --spacing 200 --components 3 --events 3 --box 150,850,150,850,600,1400
            --duration 24 --rate 250 --noise 0.05 --seed 7)
case_locate() {
  local d=$OUT/locate
  rm -rf "$d" && mkdir -p "$d/out" "$d/coherence"
  run "$d/gen.log" "$B/seislive-gen" micro -o "$d/rec" "${MICRO_ARGS[@]}"
  local c=$d/run.toml
  cp tools/demo-locate.toml "$c"
  setkey "$c" locate stations "\"$d/rec/stations.txt\""
  setkey "$c" locate coherence_dir "\"$d/coherence\""
  setkey "$c" input kind '"files"'
  setkey "$c" input paths "[\"$d/rec/*.mseed\"]"
  delkey "$c" endpoint
  delkey "$c" socket
  setkey "$c" output dir "\"$d/out\""
  run "$d/run.log" "$B/seislive" run -c "$c" -d cpu
  local made="seislive run -d cpu (tools/demo-locate.toml, files of seislive-gen micro ${MICRO_ARGS[*]})"
  digest locate/out/events.csv "$d/out/events.csv" 0 "$made"
  digest locate/out/events.jsonl "$d/out/events.jsonl" 0 "$made"
  local n
  n=$(find "$d/coherence" -name 'coherence_*.f32' | wc -l)
  [ "$n" -gt 0 ] || die "locate: no coherence volumes"
  cat "$d/coherence"/coherence_*.f32 >"$d/coherence.f32"
  digest locate/coherence.f32 "$d/coherence.f32" 0 "$made, coherence_dir set: its $n volumes' .f32 in order"
}

for g in "${groups[@]}"; do
  case $g in
    model | gen | rtm | locate) "case_$g" ;;
    *) die "unknown group $g (model, gen, rtm, locate)" ;;
  esac
done
