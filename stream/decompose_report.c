/* decompose_report — the decomposition in `seislive check` (decompose_report.h). */
#include "stream/decompose_report.h"

#include "stream/decompose.h"
#include "stream/decompose_points.h"
#include "stream/mpi.h"

static double mib(size_t b) { return b / 1048576.0; }

int dd_report(const struct sl_config *cfg, const struct prop_params *whole, const double *rec, size_t nrec, int nt,
              size_t model_bytes, FILE *out)
{
    if (cfg->runtime.decompose != DECOMPOSE_DOMAIN)
        return 0;
    const int ranks = cfg->runtime.ranks > 0 ? cfg->runtime.ranks : sl_mpi_size();
    struct dd_plan p;
    int rc = dd_plan_make(whole, ranks, cfg->runtime.split, &p);
    if (rc < 0)
        return rc;
    fprintf(out, "decomposition: domain, %d rank%s, split %d x %d x %d (x y z), halo %d planes (order %d)\n", ranks,
            ranks == 1 ? "" : "s", p.split[0], p.split[1], p.split[2], p.halo, whole->op.order);
    fprintf(out, "  rank  z planes     y planes     points (with layers)    halo/step   memory\n");
    size_t halo_total = 0, mem_max = 0;
    for (int r = 0; r < ranks && rc == 0; r++) {
        struct dd_rank_info ri;
        struct dd_points dp;
        if ((rc = dd_rank_info(&p, r, &ri)) < 0 || (rc = dd_points_plan(&p, r, rec, nrec, &dp)) < 0)
            break;
        /* propagator + halo buffers + the whole model (every rank reads it) + the
         * receiver values of a shot it keeps until rank 0 gathers them */
        size_t vals = dp.nslots * ((size_t)nt + 1) * sizeof(float) + dp.nnodes * (sizeof(float) + 6 * sizeof(float));
        size_t mem = ri.prop_bytes + ri.buffer_bytes + model_bytes + vals;
        dd_points_free(&dp, NULL);
        halo_total += ri.halo_bytes;
        mem_max = mem > mem_max ? mem : mem_max;
        fprintf(out, "  %4d  %4d..%-5d  %4d..%-5d  %4d x %d x %d (%d x %d x %d)  %7.1f KiB  %.1f MiB\n", r,
                ri.origin[2], ri.origin[2] + ri.n[2] - 1, ri.origin[1], ri.origin[1] + ri.n[1] - 1, ri.n[0], ri.n[1],
                ri.n[2], ri.npad[0], ri.npad[1], ri.npad[2], ri.halo_bytes / 1024.0, mib(mem));
    }
    if (rc == 0) {
        fprintf(out, "halo per step: %.1f KiB sent by all ranks (as much received)\n", halo_total / 1024.0);
        fprintf(out, "memory per rank: at most %.1f MiB (propagator + halo buffers + the whole model, %.1f MiB, "
                "which every rank reads + its receiver values of a shot)\n", mib(mem_max), mib(model_bytes));
    }
    dd_plan_free(&p);
    return rc;
}
