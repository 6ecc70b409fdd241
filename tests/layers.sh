#!/usr/bin/env bash
# The layers, checked on the #include lines (`make layers`; the first step of `make test`):
#
#   kernels/  may include from conf/, io/ and stream/ only stream/error.h and
#             stream/log.h: the kernels know nothing of configs, files or the runtime;
#   conf/     includes nothing from kernels/;
#   io/       includes from stream/ only stream/error.h and stream/log.h: the sources
#             and formats know nothing of the pipeline.
#
# Every violation is printed as FILE:LINE: the include and the rule it breaks; the
# exit status is 1 when there is one, 0 otherwise.
#
# Usage: tests/layers.sh [ROOT]    (ROOT: the repository's top folder, default: this
#                                   script's parent; tests/test_layers.c runs it on a
#                                   scratch tree with planted violations)
set -euo pipefail
root=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
cd "$root"

# FOLDER RULE ALLOWED-PATTERN FORBIDDEN-PATTERN: report the quoted includes of FOLDER's
# sources whose path matches FORBIDDEN and not ALLOWED.
check() {
  local dir=$1 rule=$2 allowed=$3 forbidden=$4
  [ -d "$dir" ] || return 0
  find "$dir" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \
       -o -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z |
    xargs -0 -r awk -v rule="$rule" -v allowed="$allowed" -v forbidden="$forbidden" '
      /^[ \t]*#[ \t]*include[ \t]*["<]/ {
        inc = $0
        sub(/^[^"<]*["<]/, "", inc)
        sub(/[">].*$/, "", inc)
        if (inc ~ forbidden && inc !~ allowed)
          printf "%s:%d: includes \"%s\" (%s)\n", FILENAME, FNR, inc, rule
      }'
}

out=$(
  check kernels "kernels/ may include only stream/error.h and stream/log.h from conf/, io/, stream/" \
    '^stream/(error|log)[.]h$' '^(conf|io|stream)/'
  check conf "conf/ includes nothing from kernels/" '^$' '^kernels/'
  check io "io/ may include only stream/error.h and stream/log.h from stream/" \
    '^stream/(error|log)[.]h$' '^stream/'
)
if [ -n "$out" ]; then
  printf '%s\n' "$out"
  echo "layers: $(printf '%s\n' "$out" | wc -l) include(s) break the layers" >&2
  exit 1
fi
echo "layers: kernels/, conf/ and io/ keep to their layers"
