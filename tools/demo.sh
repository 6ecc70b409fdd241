#!/usr/bin/env bash
# The built-in demo.  Until the rtm job lands, it validates the example configuration
# and prints what seislive resolved from it.
set -euo pipefail
B=${1:-build/release}
"$B/seislive" --version
"$B/seislive" check -c conf/seislive.example.toml
