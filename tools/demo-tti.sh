#!/usr/bin/env bash
# The TTI demo (`make demo-tti`): the same TTI data migrated with an isotropic and with
# the TTI propagator, side by side.
#
#   1. seislive-gen shots --tti models a 2D survey (201 x 1 x 101 cells of 10 m, 5
#      shots, 101 receivers, the direct wave subtracted) over a flat reflector at
#      700 m (v_pz 2000 -> 2600 m/s) in a TTI medium: Thomsen epsilon 0.2, delta 0.1,
#      the symmetry axis tilted 40 degrees toward +x everywhere;
#   2. seislive run -c tools/demo-tti-iso.toml migrates it with the acoustic propagator
#      in the smoothed v_pz (an isotropic migration that ignores the anisotropy);
#   3. seislive run -c tools/demo-tti.toml migrates it with the TTI propagator in the
#      smoothed v_pz, epsilon, delta and tilt;
#   4. seislive-compare writes both sections side by side (isotropic left, TTI right)
#      into OUT/tti/tti_vs_isotropic.png and prints where the reflector lands in each.
# The TTI image puts it at 700 m; the isotropic one puts it tens of metres too shallow
# (waves travel faster than v_pz in every direction but along the tilted axis).
# Usage: tools/demo-tti.sh [BUILD_DIR]   (default build/release; `make demo-tti` passes
#   its own).  SEISLIVE_DEMO_OUT: output folder (default demo-out); the demo writes
#   OUT/tti/{survey,isotropic,tti} and OUT/tti/tti_vs_isotropic.png.  On the CPU, so that
#   its numbers are the same on every machine: about 5 s on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build/release}
OUT=${SEISLIVE_DEMO_OUT:-demo-out}
for p in seislive seislive-gen seislive-compare; do
  [ -x "$B/$p" ] || { echo "demo-tti: $B/$p is missing: build first (make)" >&2; exit 1; }
done
t0=$(date +%s)
step() { printf '\n== demo-tti [%3ds] %s\n' $(( $(date +%s) - t0 )) "$*"; }

"$B/seislive" --version
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
rm -rf "$OUT/tti"
mkdir -p "$OUT/tti"
cfgs=()
trap 'rm -f "${cfgs[@]}"' EXIT
# a copy of tools/demo-tti*.toml whose "../demo-out/" paths point into OUT (absolute)
config() {
  local c
  c=$(mktemp "${TMPDIR:-/tmp}/seislive-demo-tti.XXXXXX.toml")
  cfgs+=("$c")
  sed -e "s|\"\\.\\./demo-out/|\"$OUT/|" "$1" >"$c"
  grep -q "^dir = \"$OUT/tti/" "$c" || { echo "demo-tti: $1: expected dir = \"../demo-out/tti/...\"" >&2; exit 1; }
  echo "$c"
}
ISO=$(config tools/demo-tti-iso.toml)
TTI=$(config tools/demo-tti.toml)

Z_REF=700
step "generating the TTI survey (5 shots, 101 receivers, 201 x 101 cells of 10 m) into $OUT/tti/survey"
"$B/seislive-gen" shots -o "$OUT/tti/survey" --n 201,1,101 --d 10 --v0 2000 --salt none --dip none \
    --layer "$Z_REF:2600" --tti 0.2,0.1,40 --shots 5 --receivers 101 --t-max 1.0 --dt 0.002 \
    --f-peak 12 --direct subtract --device cpu

step "isotropic migration (acoustic, v_pz): seislive run -c tools/demo-tti-iso.toml"
"$B/seislive" run -c "$ISO" >"$OUT/tti/isotropic.log" 2>&1 ||
  { tail -20 "$OUT/tti/isotropic.log" >&2; echo "demo-tti: the isotropic migration failed" >&2; exit 1; }

step "TTI migration: seislive run -c tools/demo-tti.toml"
"$B/seislive" run -c "$TTI" >"$OUT/tti/tti.log" 2>&1 ||
  { tail -20 "$OUT/tti/tti.log" >&2; echo "demo-tti: the TTI migration failed" >&2; exit 1; }

step "side by side (isotropic left, TTI right): $OUT/tti/tti_vs_isotropic.png"
# the pick: the depth profile over the middle 1200 m of the line, below the zone the
# direct wave's remains and the near-source noise reach (150 m)
"$B/seislive-compare" -o "$OUT/tti/tti_vs_isotropic.png" --columns 400,1600 --z-min 150 \
    "$OUT/tti/isotropic" "$OUT/tti/tti" | tee "$OUT/tti/picks.txt"

step "done"
pick() { sed -n "s|^$OUT/tti/$1: .*zero crossing at \\([0-9.]*\\) m.*|\\1|p" "$OUT/tti/picks.txt"; }
z_iso=$(pick isotropic)
z_tti=$(pick tti)
echo "The reflector is at $Z_REF m (the zero crossing of its image, docs/rtm.md):"
echo "  TTI migration:        ${z_tti:-none} m"
echo "  isotropic migration:  ${z_iso:-none} m (v_pz alone: the anisotropy ignored)"
echo "Images: $OUT/tti/isotropic/image.f32 and $OUT/tti/tti/image.f32 (+ .json, .segy);"
echo "both sections side by side: $OUT/tti/tti_vs_isotropic.png"
