/* wave_ring_cpml — the ring CPML arrangement's library instantiations (the kernels and
 * the step are in wave_ring_cpml.cuh): the frame kernel in tiles of 8 x 1 rows per
 * thread, depth 2 (H100, 512^3, order 8, batch 1 of session 10: 1.549 ms per step
 * against 1.676 for 8 x 2, 1.608 for 8 x 2 depth 1, 1.913 for 8 x 4 depth 1); the z
 * layers in 8 x 1, depth 2 (their p ring is 2R + 3 planes deep and their queues 6R + 2
 * registers a row).  A program that registered the research
 * variants (tools/wave_research.cu) may run other shapes instead. */
#include "kernels/wave_ring_cpml.cuh"

#define RC_FRAME_BY 8
#define RC_FRAME_NY 1
#define RC_FRAME_D 2
#define RC_ZL_BY 8
#define RC_ZL_NY 1
#define RC_ZL_D 2

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
    case 4: return ring_cpml_run<4, RC_SHAPE>(s, pl, a, m, st, lst);
    }
    return err_set(-EINVAL, "wave: the ring CPML runs orders 2-8 (order %d)", 2 * s->r);
}
