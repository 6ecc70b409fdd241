/* wave_part — a CUDA step in two parts (kernels/wave.h: wave_step_part) and the halo
 * planes packed on a stream of the caller's (wave_halo_pack_async).
 *
 * The first part computes the `halo` padded planes next to every HALO face (disjoint
 * boxes: z slabs whole, y slabs within the z range left, x slabs within both), the
 * second the box inside them.  Both run the split CPML arrangement: wave_cu_psi once in
 * the first part (psi reads p(n) only), then per box the interior kernel over its
 * non-layer cells and k_pml over its layer cells (wave_cu_pml_clip).  Every cell is
 * computed by the code that computes it in a split-arrangement step, so the parts equal
 * that step bit for bit; the lines arrangement (the tiled kernel's default) sums the
 * layer terms in another order, so against it they agree to float rounding there. */
#include "kernels/wave_cuda.h"

/* The free surface of step part PART (kernels/wave.c: free_surface_part_cpu): p = 0 on
 * the surface cells, the odd mirror of the cells below, for the cells this part computed
 * (membership as there: the cut slabs, the halo columns with the rest).  One thread per
 * element of the allocated plane. */
struct Cut {
    bool f[6];
    int npad[3], h, pad0, pad1;
};

__global__ void k_free_surface_part(float *q, long long plane, int dim0, Cut c, bool first)
{
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= plane)
        return;
    const int i = (int)(e % dim0) - c.pad0, j = (int)(e / dim0) - c.pad1, h = c.h;
    const bool padded = i >= 0 && i < c.npad[0] && j >= 0 && j < c.npad[1];
    const bool col = padded && ((c.f[0] && i < h) || (c.f[1] && i >= c.npad[0] - h) || (c.f[2] && j < h) ||
                                (c.f[3] && j >= c.npad[1] - h));
    for (int m = 0; m <= h; m++) {
        const bool cut = col || (padded && ((c.f[4] && m < h) || (c.f[5] && m >= c.npad[2] - h)));
        if (cut != first)
            continue;
        if (m == 0)
            q[(long long)h * plane + e] = 0.0f;
        else
            q[(long long)(h - m) * plane + e] = -q[(long long)(h + m) * plane + e];
    }
}

static int free_surface_part(wave_sim *s, bool first, cudaStream_t st)
{
    const struct wave_layout *L = &s->L;
    Cut c;
    for (int f = 0; f < 6; f++)
        c.f[f] = s->part_cut[f];
    for (int a = 0; a < 3; a++)
        c.npad[a] = L->npad[a];
    c.h = L->halo;
    c.pad0 = L->pad_off[0];
    c.pad1 = L->pad_off[1];
    long long plane = (long long)L->stride_z;
    k_free_surface_part<<<(unsigned)((plane + 255) / 256), 256, 0, st>>>(s->prev, plane, (int)L->stride_y, c,
                                                                         first);
    CUDA_TRY_LAUNCH();
    return 0;
}

/* Box [LO, HI) of allocated cells of F to or from the contiguous BUF (x fastest). */
__global__ void k_halo_io(float *f, long long sy, long long sz, int lo0, int lo1, int lo2, int w, int rows,
                          long long n, float *buf, bool pack)
{
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n)
        return;
    int x = (int)(e % w);
    long long r = e / w;
    int y = (int)(r % rows), z = (int)(r / rows);
    long long c = (long long)(z + lo2) * sz + (long long)(y + lo1) * sy + x + lo0;
    if (pack)
        buf[e] = f[c];
    else
        f[c] = buf[e];
}

static Box intersect(const Box &a, const Box &b)
{
    Box o;
    for (int q = 0; q < 3; q++) {
        o.lo[q] = max(a.lo[q], b.lo[q]);
        o.hi[q] = min(a.hi[q], b.hi[q]);
    }
    return o;
}

/* The cells of box B: the interior kernel over those outside the layers (IN), k_pml
 * over those inside them. */
static int run_box(wave_sim *s, const WavePlan &pl, bool cpml, const Box &in, const Box &b, cudaStream_t st)
{
    if (box_empty(b))
        return 0;
    int rc = 0;
    Box c = intersect(in, b);
    if (!box_empty(c) && (rc = wave_cu_interior(s, pl, c, st)) < 0)
        return rc;
    if (cpml && (rc = wave_cu_pml_clip(s, in, b, st)) < 0)
        return rc;
    return 0;
}

extern "C" int wave_cu_step_part(struct wave_sim *s, bool cpml, int part)
{
    WavePlan pl;
    int rc = wave_cu_plan(s, &pl);
    if (rc < 0)
        return rc;
    const struct wave_layout *L = &s->L;
    cudaStream_t st = stream_of(s);
    cpml = cpml && s->slab_count[0] + s->slab_count[1] + s->slab_count[2] > 0;
    const int h = L->halo;
    Box in, all, rest;
    for (int ax = 0; ax < 3; ax++) {
        all.lo[ax] = 0;
        all.hi[ax] = L->npad[ax];
        in.lo[ax] = cpml ? L->pml[2 * ax] : 0;
        in.hi[ax] = cpml ? L->npad[ax] - L->pml[2 * ax + 1] : L->npad[ax];
        rest.lo[ax] = s->part_cut[2 * ax] ? h : 0;
        rest.hi[ax] = s->part_cut[2 * ax + 1] ? L->npad[ax] - h : L->npad[ax];
    }
    if (part == WAVE_PART_REST) {
        if ((rc = run_box(s, pl, cpml, in, rest, st)) < 0)
            return rc;
        return s->p.free_surface ? free_surface_part(s, false, st) : 0;
    }
    if (cpml && (rc = wave_cu_psi(s, st)) < 0)
        return rc;
    for (int ax = 2; ax >= 0; ax--)
        for (int side = 0; side < 2; side++) {
            if (!s->part_cut[2 * ax + side])
                continue;
            Box b;
            for (int q = 0; q < 3; q++) {
                const Box &r = q > ax ? rest : all;
                b.lo[q] = r.lo[q];
                b.hi[q] = r.hi[q];
            }
            b.lo[ax] = side ? L->npad[ax] - h : 0;
            b.hi[ax] = side ? L->npad[ax] : h;
            /* two slabs of one axis overlap when the grid is thinner than 2 halos: the
             * high one starts where the low one ends */
            if (side && s->part_cut[2 * ax] && b.lo[ax] < h)
                b.lo[ax] = h;
            if ((rc = run_box(s, pl, cpml, in, b, st)) < 0)
                return rc;
        }
    return s->p.free_surface ? free_surface_part(s, true, st) : 0;
}

extern "C" int wave_cu_halo_io(struct wave_sim *s, const int lo[3], const int hi[3], float *buf, bool pack,
                               void *stream)
{
    const struct wave_layout *L = &s->L;
    const int w = hi[0] - lo[0], rows = hi[1] - lo[1];
    const long long n = (long long)w * rows * (hi[2] - lo[2]);
    if (n <= 0)
        return 0;
    k_halo_io<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)stream>>>(
        s->cur, (long long)L->stride_y, (long long)L->stride_z, lo[0], lo[1], lo[2], w, rows, n, buf, pack);
    CUDA_TRY_LAUNCH();
    return 0;
}
