/* wave_ring_cpml — the ring CPML arrangement's library instantiation (the kernels and
 * the step are in wave_ring_cpml.cuh): the frame kernel in tiles of 8 x 2 rows per
 * thread, depth 2, over every plane, and the z layers' terms by lines' z kernel after it
 * (no z-layer kernel).  H100, order 8, session 10 batch 2, ms per step at 512^3 / at the
 * 400 x 400 x 200 shot (lines: 1.391 / 0.463): frame 8x2d2 + z-layer kernel 8x1d2 1.353 /
 * 0.459, frame 8x1d2 + z-layer kernel 1.398 / 0.468, frame 8x1d2 + z by lines 1.376 /
 * 0.442; the z-layer kernel (its p queue 4R + 1 planes long, one row a thread) runs ~500
 * instructions a point.  This one, batch 3: 1.333 / 0.423 (main's lines in the same
 * call 1.391 / 0.464; frame depth 3 1.344 / 0.425, depth 1 1.370 / 0.433).  Session 11,
 * 12 layers: psi(n+1) through shared memory (SH) 1.174 / 0.348 against main's 1.189 /
 * 0.363 (batch 5, with lines' z kernel over a flat line index, 6 blocks an SM);
 * 16-wide x-strip tiles, 12-row frame tiles and the z-layer kernel were slower
 * (docs/TUNING.md).  Session 12, order 8: the frame's x and y memory copies worked out
 * once a block (PM), -7 % of its instructions, 1.172 -> 1.160 ms / 0.349 -> 0.344 ms
 * (main's build in the same call); the x strips by a kernel without y terms, the p
 * tile's outer halo only along the tile's layer axes and lines' z kernel unrolled for
 * 12-wide layers were no faster (docs/TUNING.md).  Other shapes: tools/wave_research.cu. */
#include "kernels/wave_ring_cpml.cuh"

#define RC_FRAME_BY 8
#define RC_FRAME_NY 2
#define RC_FRAME_D 2
#define RC_ZL_BY 0 /* the z layers by lines */
#define RC_ZL_NY 1
#define RC_ZL_D 1

bool wave_cu_ring_cpml_ok(const wave_sim *s, const char **why)
{
    if (wave_is_2d(s)) {
        *why = "a 2D grid";
        return false;
    }
    if (s->r > WAVE_RING_CPML_RMAX) {
        *why = "orders above 8";
        return false;
    }
    if (s->p.cpml_memory == WAVE_CPML_MEM_BF16) {
        *why = "bf16 CPML memory";
        return false;
    }
    return true;
}

int wave_cu_ring_cpml(wave_sim *s, const WavePlan &pl, cudaStream_t st, cudaStream_t lst)
{
    const WaveResearch *rs = wave_cu_research();
    if (rs && rs->ring_cpml) { /* another shape asked for (seislive-bench --ring-shape) */
        const int rc = rs->ring_cpml(s, pl, st, lst);
        if (rc != 0)
            return rc < 0 ? rc : 0;
    }
    const KArgs a = kargs(s);
    const PArgs m = pargs(s);
#define RC_SHAPE RC_FRAME_BY, RC_FRAME_NY, RC_FRAME_D, RC_ZL_BY, RC_ZL_NY, RC_ZL_D
    switch (s->r) {
    case 1: return ring_cpml_run<1, RC_SHAPE>(s, pl, a, m, st, lst);
    case 2: return ring_cpml_run<2, RC_SHAPE>(s, pl, a, m, st, lst);
    case 3: return ring_cpml_run<3, RC_SHAPE>(s, pl, a, m, st, lst);
    /* order 8 (issue 20, session 12): the frame's x and y memory copies worked out once a
     * block (FPM); H100, 12 layers, two device calls: 1.142 -> 1.134 and 1.170 -> 1.158 ms
     * at 512^3, 0.343 -> 0.337 and 0.350 -> 0.342 ms on the 400 x 400 x 200 shot (the
     * research shape 8x2d2/lines is the former default) */
    case 4: return ring_cpml_run<4, RC_SHAPE, 2, 2, true, TX, 0, 2, 2, 2, false, true>(s, pl, a, m, st, lst);
    }
    return err_set(-EINVAL, "wave: the ring CPML runs orders 2-8 (order %d)", 2 * s->r);
}
