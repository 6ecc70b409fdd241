# Source it from a GPU machine script, in the checkout's root with B set to the build (or
# bundle) folder: the Debian libraries carried in .devlibs, the bundle's own libraries in
# $B/lib, Open MPI from .mpilibs (tools/mpi-env.sh), and NCCL from Python's
# nvidia-nccl-cu13 package where there is one (the lent machines have no other copy on
# LD_LIBRARY_PATH; seislive loads it with dlopen: docs/mpi.md).  NVLink multicast stays off
# (NCCL_NVLS_ENABLE=0: the lent machines' KINDS.md).
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
[ -d "$B/lib" ] && export LD_LIBRARY_PATH=$B/lib:$LD_LIBRARY_PATH
. tools/mpi-env.sh
export NCCL_NVLS_ENABLE=0
if _nl=$(python3 -c 'import nvidia.nccl,os;print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null); then
  export LD_LIBRARY_PATH=$_nl/lib:$LD_LIBRARY_PATH
else
  echo "$(basename "$0"): no nvidia.nccl Python package: NCCL only if dlopen finds libnccl.so.2 elsewhere (issue 17's H200s had it), else the staged transport" >&2
fi
unset _nl
