#!/usr/bin/env bash
# Install the Debian packages seislive builds and tests against, but only the ones
# that are missing: a second run is silent and touches nothing.
# libmicrohttpd-dev and xxd: the status page's server and the page compiled in;
# chromium: the test that loads the page in a real (headless) browser.
# libfftw3-dev: the time-dispersion transforms (kernels/time_dispersion.h).
# libxml2-dev writes QuakeML; libxml2-utils (xmllint) validates it against the schema in tests.
# openmpi-bin, libopenmpi-dev: several ranks (mpirun -np N; docs/mpi.md); the tests run
# real mpirun, so CI needs them.
# build-essential also builds ringserver for the SeedLink tests (../shared/tools/ringserver.sh:
# a C compiler and make; tar and gzip are part of every Debian system).
set -euo pipefail
pkgs=(build-essential pkg-config libzmq3-dev liburing-dev libsegyio-dev libmseed-dev
      libtomlplusplus-dev libjansson-dev libpng-dev libcairo2-dev libcriterion-dev
      libmicrohttpd-dev libfftw3-dev xxd chromium libxml2-dev libxml2-utils openmpi-bin libopenmpi-dev
      python3 python3-numpy python3-zmq)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
