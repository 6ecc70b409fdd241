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

/* p = 0 on the surface-plane cells of box B (padded x, y; the plane is allocated z = h)
 * of the new level: a part's planes are sent before the second part mirrors. */
__global__ void k_zero_surface(float *q, long long sy, long long sz, int h, int hy, Box b)
{
    int i = b.lo[0] + blockIdx.x * blockDim.x + threadIdx.x, j = b.lo[1] + blockIdx.y;
    if (i >= b.hi[0])
        return;
    q[(long long)h * sz + (long long)(j + hy) * sy + i + h] = 0.0f;
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
 * over those inside them; with the surface plane zeroed where B holds it (FS). */
static int run_box(wave_sim *s, const WavePlan &pl, bool cpml, const Box &in, const Box &b, bool fs,
                   cudaStream_t st)
{
    if (box_empty(b))
        return 0;
    int rc = 0;
    Box c = intersect(in, b);
    if (!box_empty(c) && (rc = wave_cu_interior(s, pl, c, st)) < 0)
        return rc;
    if (cpml && (rc = wave_cu_pml_clip(s, in, b, st)) < 0)
        return rc;
    if (fs && b.lo[2] == 0) {
        const struct wave_layout *L = &s->L;
        dim3 grd((b.hi[0] - b.lo[0] + 127) / 128, b.hi[1] - b.lo[1]);
        k_zero_surface<<<grd, 128, 0, st>>>(s->prev, (long long)L->stride_y, (long long)L->stride_z, L->halo,
                                           L->pad_off[1], b);
        CUDA_TRY_LAUNCH();
    }
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
        if ((rc = run_box(s, pl, cpml, in, rest, false, st)) < 0)
            return rc;
        return s->p.free_surface ? wave_cu_free_surface(s, st) : 0;
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
            if ((rc = run_box(s, pl, cpml, in, b, s->p.free_surface, st)) < 0)
                return rc;
        }
    return 0;
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
