#!/usr/bin/env bash
# fuzz.sh BUILD TARGET... — run the libFuzzer targets built by `make fuzz` one after the
# other (one fuzzer process at a time: one core), FUZZ_TIME seconds each (default 60).
#
# Each target starts from tests/fuzz/corpus/NAME and tests/fuzz/crashes/NAME and keeps
# what it learns in BUILD/corpus/NAME (scratch, not in git).  Every distinct crash, hang
# (an input running over FUZZ_TIMEOUT s) or out-of-memory (an allocation over
# FUZZ_RSS_MB) is copied to tests/fuzz/crashes/NAME, the regression set `make test`
# replays (move it to tests/fuzz/pending/NAME while its fix is elsewhere).  Executions
# are libFuzzer's own count (its last "#N:" line).  Prints one line per target:
#   fuzz: NAME executions=N exec/s=R crashes=C hangs=H ooms=O seconds=S
# and at the end the rows of the results table of docs/RELIABILITY.md (also written to
# BUILD/fuzz-results.md, to append by hand after a campaign).
set -u
build=${1:?usage: fuzz.sh BUILD TARGET...}
shift
time_s=${FUZZ_TIME:-60}
timeout_s=${FUZZ_TIMEOUT:-5}
rss_mb=${FUZZ_RSS_MB:-2048}
root=$(cd "$(dirname "$0")/.." && pwd)

# -max_len per target: the same as fuzz_targets[] in tests/fuzz/fuzz_util.c.
max_len() {
    case $1 in
    wire | segy | su | mseed | config) echo 16384 ;;
    nonlinloc | stations) echo 8192 ;;
    state) echo 4096 ;;
    *) echo 4096 ;;
    esac
}

rev=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)
cc=$(${FUZZ_CC:-clang} --version 2>/dev/null | head -1 | sed 's/ (.*//')
day=$(date -u +%Y-%m-%d)
rows=()
status=0
for t in "$@"; do
    bin=$build/fuzz-$t
    if [ ! -x "$bin" ]; then
        echo "fuzz: $bin missing (make fuzz builds it)" >&2
        status=1
        continue
    fi
    scratch=$build/corpus/$t
    art=$build/artifacts/$t
    mkdir -p "$scratch" "$art" "$root/tests/fuzz/crashes/$t"
    log=$build/fuzz-$t.log
    rm -f "$art"/*
    start=$(date +%s)
    # -fork=1 with -ignore_*: one crash does not end the campaign (a known bug being fixed
    # elsewhere would otherwise hide everything behind it); each distinct crash is kept.
    "$bin" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -max_total_time="$time_s" -max_len="$(max_len "$t")" -timeout="$timeout_s" \
        -rss_limit_mb="$rss_mb" -malloc_limit_mb="$rss_mb" -print_final_stats=1 \
        -artifact_prefix="$art/" "$scratch" "$root/tests/fuzz/corpus/$t" \
        "$root/tests/fuzz/crashes/$t" >"$log" 2>&1
    spent=$(($(date +%s) - start))
    # The last progress line: "#EXECS: cov: .. exec/s N oom/timeout/crash: O/T/C time: Ss"
    last=$(grep -E '^#[0-9]+: ' "$log" | tail -1)
    execs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<<"$last")
    execs=${execs:-0}
    crashes=0 hangs=0 ooms=0
    for f in "$art"/*; do
        [ -e "$f" ] || continue
        base=$(basename "$f")
        case $base in
        crash-* | leak-*) crashes=$((crashes + 1)) ;;
        timeout-* | slow-unit-*) hangs=$((hangs + 1)) ;;
        oom-*) ooms=$((ooms + 1)) ;;
        *) continue ;;
        esac
        cp "$f" "$root/tests/fuzz/crashes/$t/$base"
        echo "fuzz: $t: $base saved in tests/fuzz/crashes/$t; reproduce: $bin tests/fuzz/crashes/$t/$base" >&2
        "$bin" "$f" 2>&1 | grep -m2 -E 'runtime error|ERROR: ' | sed 's/^/fuzz:   /' >&2
    done
    rate=$((spent > 0 ? execs / spent : execs))
    echo "fuzz: $t executions=$execs exec/s=$rate crashes=$crashes hangs=$hangs ooms=$ooms seconds=$spent"
    rows+=("| $day | $t | $execs | $rate | $crashes | $hangs | $ooms | $spent | $rev, $cc, libFuzzer ASan+UBSan |")
    [ $((crashes + hangs + ooms)) -eq 0 ] || status=1
done
{
    echo "| date | target | executions | exec/s | crashes | hangs | ooms | seconds | build |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---|"
    printf '%s\n' "${rows[@]}"
} | tee "$build/fuzz-results.md"
exit $status
