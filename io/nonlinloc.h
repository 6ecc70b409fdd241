/* nonlinloc — NonLinLoc grid files: a text header ROOT.hdr and a binary buffer ROOT.buf.
 *
 * Header, line 1: "NX NY NZ X0 Y0 Z0 DX DY DZ TYPE [FLOAT|DOUBLE]" (km, TYPE e.g. TIME);
 * for TIME grids line 2: "LABEL XSRC YSRC ZSRC" (the station); any further line (the
 * TRANSFORM) is kept verbatim.  Buffer: NX*NY*NZ values in native byte order (NonLinLoc
 * writes host order; x slowest, z fastest).  A 2D grid (NX = 2, NonLinLoc TIME2D
 * convention) holds T(distance along y, depth) and is looked up by horizontal distance
 * from the source.  Coordinates in km, times in s; z is depth, positive down. */
#ifndef SEISLIVE_NONLINLOC_H
#define SEISLIVE_NONLINLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nll_grid {
    int n[3];              /* nx ny nz */
    double o[3], d[3];     /* origin and spacing, km */
    char type[32];         /* "TIME", "VELOCITY", ... */
    char label[32];        /* station label (TIME grids), else "" */
    double src[3];         /* station position, km (TIME grids) */
    char transform[256];   /* the TRANSFORM line, verbatim ("" = none) */
    float *v;              /* nx*ny*nz values, z fastest */
};

/* Read ROOT.hdr and ROOT.buf.  Errors name the file, line or byte offset. */
int nll_read(const char *root, struct nll_grid *g);
/* Write ROOT.hdr and ROOT.buf (FLOAT). */
int nll_write(const char *root, const struct nll_grid *g);
/* Trilinear value at (x, y, z) km; returns NaN outside the grid.  For a 2D grid the
 * position is taken relative to src (horizontal distance, depth). */
double nll_value(const struct nll_grid *g, double x, double y, double z);
void nll_free(struct nll_grid *g);

#ifdef __cplusplus
}
#endif

#endif
