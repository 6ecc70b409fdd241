#!/usr/bin/env bash
# fuzz.sh BUILD TARGET... — run the libFuzzer targets built by `make fuzz` one after the
# other (one fuzzer process at a time: one core), FUZZ_TIME seconds each (default 60).
#
# Each target starts from tests/fuzz/corpus/NAME and tests/fuzz/crashes/NAME and keeps
# what it learns in BUILD/corpus/NAME (scratch, not in git).  A crash, a hang (an input
# running over FUZZ_TIMEOUT s) or an out-of-memory (an allocation over FUZZ_RSS_MB) stops
# libFuzzer; the input is copied to tests/fuzz/crashes/NAME (the regression set `make
# test` replays) and the target is started again for the time left, at most
# FUZZ_MAX_CRASHES times.  Prints one line per target:
#   fuzz: NAME executions=N exec/s=R crashes=C hangs=H ooms=O seconds=S
# and at the end the rows of the results table of docs/RELIABILITY.md (also written to
# BUILD/fuzz-results.md, to append by hand after a campaign).
set -u
build=${1:?usage: fuzz.sh BUILD TARGET...}
shift
time_s=${FUZZ_TIME:-60}
timeout_s=${FUZZ_TIMEOUT:-5}
rss_mb=${FUZZ_RSS_MB:-2048}
max_crashes=${FUZZ_MAX_CRASHES:-5}
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
    execs=0 crashes=0 hangs=0 ooms=0 spent=0 rate_sum=0
    start=$(date +%s)
    while :; do
        left=$((time_s - spent))
        [ "$left" -gt 0 ] || break
        log=$build/fuzz-$t.log
        rm -f "$art"/*
        "$bin" -max_total_time="$left" -max_len="$(max_len "$t")" -timeout="$timeout_s" \
            -rss_limit_mb="$rss_mb" -malloc_limit_mb="$rss_mb" -print_final_stats=1 \
            -artifact_prefix="$art/" "$scratch" "$root/tests/fuzz/corpus/$t" \
            "$root/tests/fuzz/crashes/$t" >"$log" 2>&1
        n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        execs=$((execs + ${n:-0}))
        spent=$(($(date +%s) - start))
        found=0
        for f in "$art"/*; do
            [ -e "$f" ] || continue
            base=$(basename "$f")
            case $base in
            crash-* | leak-*) crashes=$((crashes + 1)) ;;
            timeout-* | slow-unit-*) hangs=$((hangs + 1)) ;;
            oom-*) ooms=$((ooms + 1)) ;;
            *) continue ;;
            esac
            found=1
            cp "$f" "$root/tests/fuzz/crashes/$t/$base"
            cp "$log" "$root/tests/fuzz/crashes/$t/$base.log"
            echo "fuzz: $t: $base saved in tests/fuzz/crashes/$t (report: $base.log)" >&2
            grep -m3 -E 'ERROR: |runtime error|SUMMARY' "$log" | sed 's/^/fuzz:   /' >&2
        done
        [ "$found" = 1 ] || break
        [ $((crashes + hangs + ooms)) -lt "$max_crashes" ] || break
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
