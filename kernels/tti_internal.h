/* tti_internal — the TTI simulation's state and the quantised medium, shared by the CPU
 * reference (kernels/tti.c) and the CUDA twins (kernels/tti_*.cu).  Not a public header.
 *
 * The medium is quantised once at create, identically for both devices, so that the CPU
 * reference and the GPU kernels integrate the same earth model (the kernels then agree to
 * float rounding) and the GPU keeps 12 bytes of medium per point:
 *   vel  = v_pz^2 dt^2                          float
 *   ed   = eps_u | delta_u << 16                eps, delta: ((int)u - 16384) / 32768,
 *                                               range [-0.5, 1.5), step 3.05e-5
 *   tilt = theta_u | phi_u << 16                theta: ((int)u - 32768) * pi / 65536,
 *                                               [-pi/2, pi/2), step 4.8e-5 rad (0.0027 deg);
 *                                               phi: u * 2 pi / 65536, [0, 2 pi), 9.6e-5 rad
 * Zero of every parameter is exact, so eps = delta = 0 and theta = 0 stay exact (the
 * isotropic limit and VTI are not perturbed).  A step of 3e-5 in eps moves a velocity by
 * 3e-5 relative, far below what any measured anisotropy resolves. */
#ifndef SEISLIVE_TTI_INTERNAL_H
#define SEISLIVE_TTI_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "kernels/tti.h"
#include "kernels/wave_internal.h"

#ifdef __CUDACC__
#define TTI_HD __host__ __device__
#else
#define TTI_HD
#endif

#define TTI_THETA_STEP ((float)(3.14159265358979323846 / 65536.0))
/* The largest eps or delta a code holds (tti_model_check refuses larger). */
#define TTI_ED_MAX ((65535.0 - 16384.0) / 32768.0)
#define TTI_PHI_STEP ((float)(2.0 * 3.14159265358979323846 / 65536.0))

static inline TTI_HD float tti_ed_value(uint32_t u16) { return (float)((int)(u16 & 0xffffu) - 16384) * (1.0f / 32768.0f); }
static inline TTI_HD float tti_theta_value(uint32_t u16) { return (float)((int)(u16 & 0xffffu) - 32768) * TTI_THETA_STEP; }
static inline TTI_HD float tti_phi_value(uint32_t u16) { return (float)(u16 & 0xffffu) * TTI_PHI_STEP; }

/* Quantisers (host and device: the same double arithmetic, so a medium built on the
 * device has the CPU's codes; fmod and nearbyint are exact on both): the nearest code,
 * clamped to the range. */
static inline TTI_HD uint32_t tti_ed_code(double v)
{
    double u = nearbyint(v * 32768.0) + 16384.0;
    return (uint32_t)(u < 0 ? 0 : u > 65535 ? 65535 : u);
}
static inline TTI_HD uint32_t tti_theta_code(double theta)
{
    double u = nearbyint(theta / (double)TTI_THETA_STEP) + 32768.0;
    return (uint32_t)(u < 0 ? 0 : u > 65535 ? 65535 : u);
}
static inline TTI_HD uint32_t tti_phi_code(double phi)
{
    const double two_pi = 2.0 * 3.14159265358979323846;
    double r = fmod(phi, two_pi);
    if (r < 0)
        r += two_pi;
    return (uint32_t)((long)nearbyint(r / (double)TTI_PHI_STEP) & 0xffff);
}

/* ---- one point of the medium (kernels/tti.c medium_planes on the host, tti_medium.cu on
 * the device: the same functions, so the codes are equal byte for byte) ----
 * The eps-delta taper of the layers (tti.h) is a function of xi, the depth into the
 * layers of the deepest axis; it is tabulated on the host per axis and padded index
 * (depth, taper: kernels/tti.c tti_taper_table, glibc's cos), and a point takes the entry
 * of its deepest axis, i.e. the taper of the largest depth (the CPU's fmax of the three),
 * without a cos of its own (the device's cos may differ from glibc's by an ulp). */
struct tti_taper {
    double depth, taper;
};
static inline TTI_HD double tti_taper_pick(struct tti_taper x, struct tti_taper y, struct tti_taper z)
{
    return x.depth >= y.depth ? (x.depth >= z.depth ? x.taper : z.taper) : (y.depth >= z.depth ? y.taper : z.taper);
}
/* v_pz^2 dt^2 of v_pz V (m/s) and DT2 = dt^2. */
static inline TTI_HD float tti_vel_of(double v, double dt2) { return (float)(v * v * dt2); }
/* The eps-delta code of EPS and DELTA under TAPER, delta lowered to eps where larger. */
static inline TTI_HD uint32_t tti_ed_of(double taper, double eps, double delta)
{
    const double e = taper * eps, d = fmin(taper * delta, e);
    return tti_ed_code(e) | tti_ed_code(d) << 16;
}
static inline TTI_HD uint32_t tti_tilt_of(double theta, double phi)
{
    return tti_theta_code(theta) | tti_phi_code(phi) << 16;
}

/* A GPU simulation's medium built on the host (the fallback of the device build) is
 * built and uploaded this many bytes of each array at a time (whole planes, at least one;
 * kernels/tti.c, set_medium_slabs): 2 halves x 3 arrays of page-locked buffer, 12 MiB. */
#define TTI_MEDIUM_SLAB_BYTES ((size_t)2 << 20)

/* Tests: while ON, a GPU simulation's medium is built on the host a slab at a time (the
 * fallback of the device build: kernels/tti.c set_medium_gpu).  Process-wide. */
void tti_force_host_medium(bool on);

struct tti_sim {
    struct wave_sim w;          /* the shell: w.cur / w.prev are p(n) / p(n-1), w.vel v_pz^2 dt^2 */
    double sigma;
    float *q, *qprev;           /* q(n), q(n-1) */
    uint32_t *ed, *tilt;        /* the quantised medium (host arrays on the CPU, device on CUDA) */
    float *eps, *del;           /* CPU: eps and delta_eff decoded from ed (allocated layout) */
    float *nx, *ny, *nz;        /* CPU: the unit symmetry axis decoded from tilt; with a free
                                   surface the rows above it hold the image medium */
    float *s[2];                /* pass-1 scratch per field: s = n . (grad f + psi) */
    float *psi[2][3], *zeta[2][3]; /* CPML memory of the Laplacian per field and axis */
    float *chi[2][3];           /* CPML memory of H1's outer derivative per field and axis */
    void *gpu;                  /* CUDA twins' private state (kernels/tti_cuda.h) */
    int stage;                  /* between pass 1 and the update: 1 forward, 2 reverse; else 0 */
    int medium_on;              /* GPU: where the medium was built (TTI_MEDIUM_*; tests) */
};
enum { TTI_MEDIUM_HOST = 0, TTI_MEDIUM_DEVICE = 1, TTI_MEDIUM_SLABS = 2 };

/* ---- subdomains (CPU only so far; a GPU simulation refuses HALO faces at create) ----
 * A step reads the fields two stencil half-widths away (D_a of n_a s, s made of first
 * derivatives), so a subdomain exchanges twice per step, each time the `halo` planes
 * next to every HALO face:
 *   the fields p and q after the step and its injection (stage 0), as the acoustic
 *   propagator does;
 *   the pass-1 products n_a s of both fields (a the cut's axis) between the two passes
 *   (stage 1), unpacked into s beyond the face where n_a is 1, so the update reads the
 *   whole grid's products bit for bit (a float product is the same wherever computed).
 * tti_halo_count: floats of one exchange across FACE, the same in both stages (2 per
 * cell of the box: p then q, or the products of p then q; x fastest, then y, then z);
 * 0 when FACE is not HALO.  tti_step_stage(s, TTI_STAGE_PASS1), the exchange,
 * tti_step_stage(s, TTI_STAGE_UPDATE) is tti_step bit for bit. */
enum { TTI_STAGE_PASS1 = 1, TTI_STAGE_UPDATE = 2 };
int tti_step_stage(struct tti_sim *s, int stage);
/* The same for tti_step_reverse (no absorbing terms; the interior box when set). */
int tti_step_stage_reverse(struct tti_sim *s, int stage);
size_t tti_halo_count(const struct tti_sim *s, int face);
int tti_halo_pack(struct tti_sim *s, int face, float *buf);
int tti_halo_unpack(struct tti_sim *s, int face, const float *buf);

#endif
