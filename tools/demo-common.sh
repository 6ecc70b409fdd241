# Shared by tools/demo.sh and tools/demo-locate.sh (sourced, not run).
#
# demo_config SRC DST OUT RESULT: a copy of the demo config SRC at DST whose endpoints
# are "tcp://127.0.0.1:*" (seislive binds free ports and logs them: no fixed port can be
# taken by another program or a second demo), whose "../demo-out/" paths point into OUT
# (absolute), and whose [output] dir is OUT/RESULT.partial: the result is renamed to
# OUT/RESULT only when the job succeeded, so a failed run leaves no truncated result.
demo_config() {
  local src=$1 dst=$2 out=$3 result=$4
  sed -e 's|^endpoint = "tcp://127\.0\.0\.1:[0-9]*"|endpoint = "tcp://127.0.0.1:*"|' \
      -e "s|\"\\.\\./demo-out/$result\"|\"$out/$result.partial\"|" \
      -e "s|\"\\.\\./demo-out/|\"$out/|" "$src" >"$dst"
  # the conf file changed shape: say so rather than run on the fixed ports
  if [ "$(grep -c '^endpoint = "tcp://127.0.0.1:\*"' "$dst")" != 2 ] ||
     ! grep -q "^dir = \"$out/$result.partial\"" "$dst"; then
    echo "demo: $src: expected two tcp endpoints and dir = \"../demo-out/$result\"" >&2
    return 1
  fi
}

# demo_endpoint LOG PID WHAT: the endpoint seislive logged as "WHAT tcp://..." (WHAT is
# "receiving on" or "publishing on"); fails when PID ends first or after 300 s.
demo_endpoint() {
  local log=$1 pid=$2 what=$3 ep i
  for ((i = 0; i < 3000; i++)); do
    ep=$(grep -m1 -oE "$what tcp://[^ ]+" "$log" 2>/dev/null | sed "s|^$what ||") || true
    if [ -n "$ep" ]; then echo "$ep"; return 0; fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
