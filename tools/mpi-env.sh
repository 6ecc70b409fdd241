# Source it: Open MPI carried in .mpilibs (tools/mpi-libs.sh) put on PATH and
# LD_LIBRARY_PATH, relocated with OPAL_PREFIX; nothing when .mpilibs is absent (the
# machine's own Open MPI, if any, is used).  Also what mpirun needs as root.
if [ -d "${MPILIBS:-$PWD/.mpilibs}/usr/bin" ]; then
  _m=$(cd "${MPILIBS:-$PWD/.mpilibs}" && pwd)
  export OPAL_PREFIX=$_m/usr
  export PATH=$_m/usr/bin:$PATH
  export LD_LIBRARY_PATH=$_m/lib:$_m/usr/lib/x86_64-linux-gnu:$_m/usr/lib/x86_64-linux-gnu/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  unset _m
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
