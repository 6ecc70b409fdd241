/* Shared by the rtm tests: a small thin-3D survey (2D-like), shots modeled with the
 * propagator, the engine configured for it. */
#ifndef SEISLIVE_TEST_RTM_COMMON_H
#define SEISLIVE_TEST_RTM_COMMON_H

#include "conf/config.h"
#include "io/shot.h"
#include "kernels/rtm.h"
#include "stream/rtm_config.h"

struct rtm_case {
    int n[3];
    double d[3], o[3];
    int order, nt, pml;
    double dt, f_peak;
    float *v_true;   /* with the reflector(s) */
    float *v_mig;    /* the background: migration velocity and direct-wave model */
};

/* Grid, time stepping and a background of V0 m/s everywhere. */
void rtm_case_init(struct rtm_case *c, int nx, int ny, int nz, double d, int order, int nt, double v0);
void rtm_case_free(struct rtm_case *c);

/* Config for the case (defaults elsewhere); free with config_free. */
void rtm_case_config(const struct rtm_case *c, struct sl_config *cfg);

/* A shot with source at (SX, SY, SZ) and receivers every RSTEP cells along x at depth
 * RZ (m) in the middle y row, from x cell RX0 to RX1: its data are the traces modeled
 * in v_true minus those in v_mig (the reflections only: the direct wave cancels).
 * Free with rtm_case_shot_free. */
void rtm_case_shot(const struct rtm_case *c, int64_t id, double sx, double sy, double sz, int rx0, int rx1,
                   int rstep, double rz, struct shot *out);
void rtm_case_shot_free(struct shot *s);

/* A shot of 12 receivers around SX with synthetic traces (a Ricker arriving later with
 * offset), source at depth 30 m: for tests where the data's content does not matter
 * (linearity, strategies agreeing with each other); costs no modeling. */
void rtm_case_synth_shot(const struct rtm_case *c, int64_t id, double sx, struct shot *sh);

/* The strategy tests' case: NX x NY x NZ cells of 10 m at order 4, 130 steps (of DT s
 * where DT > 0, else rtm_case_init's), 6-cell layers, 2000 m/s over 2500 m/s from cell
 * 14 down (contrasts for the wavefields), and one synthetic shot (id 7) at x = 160 m. */
void rtm_case_layered(struct rtm_case *c, int nx, int ny, int nz, double dt, struct shot *sh);

/* An engine on the CPU for CFG with the migration model v_mig. */
struct rtm_engine *rtm_case_engine(const struct rtm_case *c, const struct sl_config *cfg);

/* Depth (cells, parabolic sub-cell) of the envelope peak of image column (x, y) in
 * [ZMIN, ZMAX) (clear of the shallow source footprint and the bottom layer); *PEAK gets the envelope there.  The envelope (|analytic signal| along z) is
 * blind to the constant phase rotation that line-array back-propagation gives. */
double envelope_peak(const float *img, const int n[3], int x, int y, int zmin, int zmax, double *peak);

#endif
