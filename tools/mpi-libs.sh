#!/usr/bin/env bash
# Open MPI's runtime (mpirun, its plugins and help texts, the libraries they load) copied
# from this machine's Debian install into .mpilibs/, to carry to the GPU machine, which has
# no package registry (docs/mpi.md).  Open MPI finds itself there through OPAL_PREFIX;
# tools/mpi-env.sh sets it (and PATH, LD_LIBRARY_PATH) when .mpilibs is present.
#   bash tools/mpi-libs.sh              # here, after `make deps`
#   carry .mpilibs with .gpubundle and .devlibs; there: . tools/mpi-env.sh; mpirun ...
# The programs alone (a run without mpirun) need only the libraries tools/gpu-bundle.sh
# puts into .gpubundle/lib.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${MPILIBS:-.mpilibs}
pkgs="openmpi-bin libopenmpi3 openmpi-common"
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
    || { echo "mpi-libs: $p is not installed here: make deps" >&2; exit 1; }
done
rm -rf "$dest"
mkdir -p "$dest/lib"
# the packages' files, at their paths under $dest (OPAL_PREFIX=$dest/usr relocates them)
# (not the manuals, headers, Java and Fortran bindings or OpenSHMEM: it must fit the carry)
dpkg -L $pkgs | grep -Ev '/usr/share/(doc|man)/|/include/|java|\.jar$|mpifh|usempi|oshmem' \
  | while read -r f; do
  [ -f "$f" ] || continue
  mkdir -p "$dest$(dirname "$f")"
  cp -aL "$f" "$dest$f"
done
# every library those binaries and plugins load that is not part of glibc or the GPU
# machine's base (libc, libm, libstdc++, libgcc, ld-linux, libz): flat into $dest/lib
{ find "$dest" -type f \( -name '*.so*' -o -perm -u+x \) -print0 | xargs -0 ldd 2>/dev/null || true; } \
  | awk '$3 ~ /^\// {print $3}' | sort -u \
  | grep -Ev '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*|libz)\.so' \
  | while read -r lib; do [ -e "$dest$(readlink -f "$lib")" ] || cp -L "$lib" "$dest/lib/"; done
ln -sf orterun "$dest/usr/bin/mpirun" # Debian's mpirun is an alternatives link
echo "mpi-libs: $(find "$dest" -type f | wc -l) files in $dest ($(du -sh "$dest" | cut -f1))"
