/* bench_stencil_tti — the TTI rows of `seislive-bench stencil` (see the .c file). */
#ifndef SEISLIVE_BENCH_STENCIL_TTI_H
#define SEISLIVE_BENCH_STENCIL_TTI_H

#include <stdbool.h>

#include "kernels/backend.h"

struct tti_row {
    const char *kernel;
    int order, size;
    int n[3];   /* the padded grid (bench_stencil_tti's rows; 0 in the implicit rows) */
    bool cpml;
    double gpts, ms;
    double floor_bpp, floor_gpts; /* the storage's bytes per point and the Gpts/s they allow */
    char variant[160];
};

/* Rows for every size, order and kernel of USE (indexed by enum wave_kernel), CPML on
 * then off, into ROWS (at most MAX); BW: the copy bandwidth (GB/s, read + write) of the
 * same run.  The number of rows, or a negative errno with err_msg(). */
int bench_stencil_tti(const struct sl_device *dev, const int (*grids)[3], int ngrids, const int *orders, int norders,
                      int steps, int pml, bool two_d, const bool use[3], double bw, struct tti_row *rows, int max);

#endif
