/* nonlinloc — NonLinLoc grid files: a text header ROOT.hdr and a binary buffer ROOT.buf.
 *
 * Header, line 1: "NX NY NZ X0 Y0 Z0 DX DY DZ TYPE [FLOAT|DOUBLE]" (km, TYPE e.g. TIME);
 * for TIME grids line 2: "LABEL XSRC YSRC ZSRC" (the station); a "TRANSFORM ..." line is
 * kept verbatim and parsed (io/nll_transform.h: an unsupported projection is refused with
 * the file and line).  Buffer: NX*NY*NZ values in native byte order (NonLinLoc
 * writes host order; x slowest, z fastest).  A 2D grid (NX = 2, NonLinLoc TIME2D
 * convention) holds T(distance along y, depth) and is looked up by horizontal distance
 * from the source.  Coordinates in km, times in s; z is depth, positive down. */
#ifndef SEISLIVE_NONLINLOC_H
#define SEISLIVE_NONLINLOC_H

#include <stddef.h>

#include "io/nll_transform.h"

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
    struct nll_transform tr; /* the TRANSFORM parsed (kind NONE when absent) */
    int transform_line;    /* its line in the header, 0 = none */
};

/* How a time grid's file is named under a root (NonLinLoc's Grid2Time writes
 * ROOT.PHASE.STATION.time.*; seislive used to read only ROOT.STATION.PHASE.time.*). */
enum nll_naming { NLL_NAMING_AUTO, NLL_NAMING_STATION_PHASE, NLL_NAMING_PHASE_STATION };

/* Read ROOT.hdr and ROOT.buf.  Errors name the file, line or byte offset. */
int nll_read(const char *root, struct nll_grid *g);
/* Only ROOT.hdr (no buffer read: G->v stays NULL). */
int nll_read_header(const char *root, struct nll_grid *g);
/* The root (without .hdr/.buf) of the time grid of STATION for PHASE ('P' or 'S') under
 * ROOT, named as NAMING says; AUTO tries both and takes the one that exists.  Returns 0
 * with OUT; -ENOENT when no header exists (err_msg() names the files tried); -EINVAL for
 * AUTO when both exist and are different files (ambiguous: set [locate] nll_pattern). */
int nll_time_root(const char *root, const char *station, char phase, int naming, char *out, size_t len);
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
