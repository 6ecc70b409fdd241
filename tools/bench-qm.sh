#!/bin/sh
# bench-qm.sh — QuakeMigrate's C core (its `migrate`, GPL-3.0) timed on the same CPU
# problems as `seislive-bench stack` (tools/stack_problem.h), beside seislive's stack.
#
#   tools/bench-qm.sh [bench-qm options]     (OMP_NUM_THREADS sets the threads)
#
# QuakeMigrate's source is never part of this repository: put migratelib.c and qmlib.h
# from github.com/QuakeMigrate/QuakeMigrate (quakemigrate/core/src/) into
# .peers/quakemigrate/ (git-ignored).  The core is compiled twice: with -O3 -fopenmp (the
# flags of QuakeMigrate's build) and with -O3 -march=native -fopenmp (its best case on
# this CPU); the driver (tools/qm/bench_qm.c) links seislive's stack from source, outside
# the Makefile, into build/qm/.
set -eu
cd "$(dirname "$0")/.."
PEER=.peers/quakemigrate
if [ ! -f "$PEER/migratelib.c" ] || [ ! -f "$PEER/qmlib.h" ]; then
    echo "bench-qm: $PEER/migratelib.c and qmlib.h are missing (QuakeMigrate's C core is not in the repository; see this script's header)" >&2
    exit 2
fi
OUT=build/qm
mkdir -p "$OUT"
CC=${CC:-gcc}
SL="tools/qm/bench_qm.c tools/stack_problem.c kernels/stack.c kernels/stack_cpu.c stream/error.c"
SLFLAGS="-std=c11 -O3 -march=x86-64-v2 -Wall -Wextra -Werror -I. -D_GNU_SOURCE -fopenmp"
$CC -std=gnu99 -O3 -fopenmp -c "$PEER/migratelib.c" -o "$OUT/migratelib-O3.o"
$CC -std=gnu99 -O3 -march=native -fopenmp -c "$PEER/migratelib.c" -o "$OUT/migratelib-native.o"
# shellcheck disable=SC2086
$CC $SLFLAGS $SL "$OUT/migratelib-O3.o" -lm -o "$OUT/bench-qm-O3"
# shellcheck disable=SC2086
$CC $SLFLAGS $SL "$OUT/migratelib-native.o" -lm -o "$OUT/bench-qm-native"
"$OUT/bench-qm-O3" --tag "-O3" "$@"
"$OUT/bench-qm-native" --tag "-O3 -march=native" "$@"
