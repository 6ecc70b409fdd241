/* shots_worker — a worker rank of decompose = "shots": ask rank 0 for a shot, migrate
 * it, send its image back (which asks for the next), until rank 0 says stop
 * (stream/shots.h). */
#define LOG_COMPONENT "shots"
#include "stream/shots.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/rtm.h"
#include "stream/error.h"
#include "stream/log.h"
#include "stream/mpi_shots.h"
#include "stream/rtm_config.h"

int shots_rtm_patch(void *ctx, const struct shot *shot, float **buf, struct image_patch *p)
{
    struct rtm_engine *e = ctx;
    const struct rtm_shot v = rtm_shot_of(shot);
    *buf = NULL;
    memset(p, 0, sizeof *p);
    /* the very calls rtm_stack_shot makes, so the patch is the one-rank run's to the bit */
    int rc = rtm_engine_patch(e, &v, p->off, p->n);
    if (rc < 0)
        return rc;
    size_t cells = (size_t)p->n[0] * p->n[1] * p->n[2];
    float *b = malloc(2 * cells * sizeof *b);
    if (!b)
        return err_set(-ENOMEM, "shot %lld: image of %zu cells", (long long)shot->id, cells);
    struct rtm_shot_stats st;
    rc = rtm_engine_migrate_patch(e, &v, b, b + cells, &st);
    if (rc < 0) {
        free(b);
        return rc;
    }
    log_info("shot %lld migrated: %s, %d steps, %.2f s", (long long)shot->id, rtm_strategy_name(st.strategy), st.nt,
             st.seconds);
    p->image = b;
    p->illum = b + cells;
    *buf = b;
    return 0;
}

/* Without a patch hook: migrate into SCRATCH (a zeroed whole-grid stack) and send it all.
 * 0 + x is x (and the stack never holds -0), so rank 0's sum is still the one-rank sum. */
static int whole_grid(const struct shot_job *j, const struct shot *s, struct image_stack *scratch, float **buf,
                      struct image_patch *p)
{
    image_stack_clear(scratch);
    int rc = j->migrate(j->ctx, s, scratch);
    if (rc < 0)
        return rc;
    size_t cells = image_stack_cells(scratch);
    float *b = malloc(2 * cells * sizeof *b);
    if (!b)
        return err_set(-ENOMEM, "shot %lld: image of %zu cells", (long long)s->id, cells);
    memcpy(b, scratch->image, cells * sizeof *b);
    memcpy(b + cells, scratch->illum, cells * sizeof *b);
    memset(p, 0, sizeof *p);
    memcpy(p->n, scratch->n, sizeof p->n);
    p->image = b;
    p->illum = b + cells;
    *buf = b;
    return 0;
}

int shots_worker_run(const struct sl_device *dev, const struct shot_job *j)
{
    struct image_stack scratch = {0};
    int rc = 0;
    if (!j->patch)
        rc = image_stack_init(&scratch, j->n, j->d, j->o);
    struct shots_reply r = {.seq = -1};
    snprintf(r.device, sizeof r.device, "%s", dev->name);
    if (!rc)
        rc = sl_mpi_shots_reply(&r, NULL);
    int64_t done = 0;
    double busy = 0;
    while (!rc) {
        struct shot s;
        int64_t seq;
        int got = sl_mpi_shots_recv(&s, &seq);
        if (got <= 0) {
            rc = got;
            break;
        }
        float *buf = NULL;
        struct image_patch p;
        double t0 = now_s();
        int mrc = j->patch ? j->patch(j->ctx, &s, &buf, &p) : whole_grid(j, &s, &scratch, &buf, &p);
        memset(&r, 0, sizeof r);
        r.seq = seq;
        r.id = s.id;
        r.rc = mrc;
        r.seconds = now_s() - t0;
        if (mrc == 0) {
            memcpy(r.off, p.off, sizeof r.off);
            memcpy(r.n, p.n, sizeof r.n);
            r.has_illum = p.illum != NULL;
            done++;
            busy += r.seconds;
        } else {
            snprintf(r.msg, sizeof r.msg, "%s", mrc == -ECANCELED ? "stop requested" : err_msg());
            if (mrc != -ECANCELED)
                log_warn("shot %lld failed: %s", (long long)s.id, r.msg);
        }
        rc = sl_mpi_shots_reply(&r, buf); /* and the request for the next shot */
        free(buf);
        free(s.rec);
        free(s.data);
    }
    if (!rc)
        log_info("rank 0 has no more shots: %lld migrated here in %.2f s", (long long)done, busy);
    if (!j->patch)
        image_stack_free(&scratch);
    return rc;
}
