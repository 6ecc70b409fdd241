/* survey_model — the generator's velocity model: horizontal layers, one dipping
 * interface and a salt-like body (a flat-topped dome of high velocity), on the engine
 * grid (x fastest, then y, z slowest; z down).  Also the smoothed copy an RTM run
 * migrates with (a sharp model would add backscattered noise to the image).
 *
 * TTI (seislive-gen shots --tti): the velocity is then v_pz, and every rock but the salt
 * has the same Thomsen epsilon and delta and the same symmetry axis; the salt is
 * isotropic (epsilon = delta = 0), as salt is.  The axis is one for the whole model, the
 * salt included (where it does nothing), so that the survey's anisotropy is stated in
 * one line (the propagator is stable where the tilt jumps too: kernels/tti.h). */
#ifndef SEISLIVE_SURVEY_MODEL_H
#define SEISLIVE_SURVEY_MODEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SURVEY_MAX_LAYERS 8

struct survey_model {
    int n[3];
    double d[3];          /* m */
    double v0;            /* velocity above the first interface, m/s */
    int nlayers;          /* horizontal interfaces */
    double layer_z[SURVEY_MAX_LAYERS], layer_v[SURVEY_MAX_LAYERS];
    /* dipping interface: depth dip_z at x = 0, dipping dip_deg toward +x; below it dip_v.
     * dip_v <= 0 = none */
    double dip_z, dip_deg, dip_v;
    /* salt: centre (x, y), top depth, half-widths in x and y, height; salt_v <= 0 = none */
    double salt_c[2], salt_top, salt_r[2], salt_h, salt_v;
    /* TTI (tti != 0): epsilon, delta outside the salt; the axis, tilt theta from the
     * vertical toward +x (phi = 0) and azimuth phi from x toward y, degrees */
    int tti;
    double eps, delta, theta, phi;
};

/* The anisotropy of one point (the velocity file is v_pz). */
struct survey_tti {
    double eps, delta, theta, phi; /* theta, phi in degrees, as [model] theta_file takes them */
};

/* Velocity at (x, y, z) m: the horizontal layers; below the dipping interface at least
 * dip_v (so deeper, faster layers cut the dipping one off); then the salt over all. */
double survey_velocity(const struct survey_model *m, double x, double y, double z);
/* Fill V (n[0] n[1] n[2] floats). */
void survey_fill(const struct survey_model *m, float *v);
/* Whether (x, y, z) lies in the salt body. */
int survey_in_salt(const struct survey_model *m, double x, double y, double z);
/* The anisotropy at (x, y, z) (m->tti set; all zero otherwise). */
struct survey_tti survey_tti_at(const struct survey_model *m, double x, double y, double z);
/* Fill the four parameter volumes (n[0] n[1] n[2] floats each) of a TTI model. */
void survey_fill_tti(const struct survey_model *m, float *eps, float *delta, float *theta, float *phi);
/* Box-smooth V in place over a cube of half-width R cells (R = 0: nothing). */
int survey_smooth(float *v, const int n[3], int r);
/* Write N floats little-endian to PATH.  Returns 0 or -errno with err_msg(). */
int survey_write_f32(const char *path, const float *v, size_t n);

#ifdef __cplusplus
}
#endif

#endif
