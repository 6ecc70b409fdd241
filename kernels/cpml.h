/* cpml — convolutional PML for the second-order acoustic equation (Pasalic & McGarry,
 * "Convolutional perfectly matched layer for isotropic and anisotropic acoustic wave
 * equations", SEG 2010).
 *
 * Along each axis the stretched second derivative becomes
 *     d2p/dx2 + dpsi/dx + zeta,   psi  <- b psi  + a dp/dx,
 *                                 zeta <- b zeta + a (d2p/dx2 + dpsi/dx),
 * with b = exp(-(d + alpha) dt), a = d (b - 1) / (d + alpha) (kappa = 1), the damping
 * d(x) = d0 (x/L)^N, d0 = -(N + 1) vmax ln(R) / (2 L) (so that the damping integrated
 * over the layer gives the round-trip reflection R at normal incidence whatever N),
 * and alpha(x) = pi f_ref (1 - x/L) (largest at the inner edge, zero at the wall), x
 * the distance into a layer of L.  N = 2 is the reference profile; a larger N keeps
 * the inner part of the layer nearly transparent and damps near the wall, which
 * reflects far less from a thin layer (seislive-bench cpml, docs/model.md).
 * psi and zeta exist only in the layers of their own axis (per-face widths; a width of
 * 0 on top is the free-surface case, where no layer is made). */
#ifndef SEISLIVE_CPML_H
#define SEISLIVE_CPML_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fill A and B (NPAD entries each) for one axis of NPAD padded points with WLO layers
 * at the start and WHI at the end, spacing H (m), time step DT (s), the largest
 * velocity VMAX (m/s), reflection coefficient R, reference frequency F_REF (Hz) and the
 * damping's polynomial degree N (1..CPML_DEGREE_MAX; 2 the reference, bit for bit what
 * it always gave).  Outside the layers a = b = 0 (the memory variables stay zero). */
#define CPML_DEGREE_MAX 6
void cpml_profile(int npad, int wlo, int whi, double h, double dt, double vmax, double r,
                  double f_ref, int n, float *a, float *b);

/* Index of padded point I in the layer storage of its axis (0..wlo+whi-1), or -1 when
 * I is not in a layer of that axis.  Shared by the CPU reference and the CUDA kernels. */
#ifdef __CUDACC__
#define CPML_HD __host__ __device__
#else
#define CPML_HD
#endif
static inline CPML_HD int cpml_slab_index(int i, int npad, int wlo, int whi)
{
    if (i < 0 || i >= npad)
        return -1;
    if (i < wlo)
        return i;
    if (i >= npad - whi)
        return i - (npad - whi) + wlo;
    return -1;
}

/* bfloat16 storage of the memory variables (wave_params.cpml_memory = BF16): the top 16
 * bits of the fp32 value, rounded to nearest even (NaN kept quiet).  The CPU reference
 * stores with this; the CUDA kernels with __float2bfloat16_rn, which rounds the same way
 * (no flush to zero in this build), so both hold the same value for the same fp32. */
static inline CPML_HD uint16_t cpml_bf16_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static inline CPML_HD float cpml_bf16_val(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#ifdef __cplusplus
}
#endif

#endif
