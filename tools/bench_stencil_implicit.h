/* bench_stencil_implicit — the implicit operator's rows of `seislive-bench stencil`
 * (--operators ...,implicit; see the .c file). */
#ifndef SEISLIVE_BENCH_STENCIL_IMPLICIT_H
#define SEISLIVE_BENCH_STENCIL_IMPLICIT_H

#include <stdbool.h>

#include "kernels/backend.h"
#include "kernels/wave.h"
#include "tools/bench_stencil_tti.h"

/* Bytes per point the implicit step's sweeps move at the least (no CPML): y/z marching
 * 3D 56, 2D 36; y/z chunks (CHUNKS) 3D 40, 2D 28 (see the .c file). */
double bench_implicit_floor_bpp(bool two_d, bool chunks);
/* The floor of the arrangement tuning implicit_yz = YZ runs on SIZE^3 (SIZE^2) grids:
 * march, and any variant on lines over 512 rows (its fallback), 56 / 36; chunks, scan,
 * overlap 40 / 28; xyfused 28 in 3D (x + y: p in, lap out; z: 20). */
double bench_implicit_floor_of(bool two_d, int yz, int size);

/* Rows (in the TTI rows' struct: kernel "implicit") for every size, order and variant
 * VARS[0..NVARS) (the implicit_x / implicit_yz fields of each), CPML on then off (off
 * only with NOCPML_ROWS), into ROWS (at most MAX); BW: the copy bandwidth of the same run.
 * The number of rows, or a negative errno with err_msg(). */
int bench_stencil_implicit(const struct sl_device *dev, const int *sizes, int nsizes, const int *orders, int norders,
                           int steps, int pml, bool two_d, bool nocpml_rows, double bw,
                           const struct wave_tuning *vars, int nvars,
                           struct tti_row *rows, int max);

#endif
