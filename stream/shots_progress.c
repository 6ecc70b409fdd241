/* shots_progress — see shots_progress.h. */
#include "stream/shots_progress.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

int shots_progress_init(struct shots_progress *p, int nranks, const char *device0)
{
    memset(p, 0, sizeof *p);
    p->r = calloc((size_t)(nranks > 0 ? nranks : 1), sizeof *p->r);
    if (!p->r)
        return err_set(-ENOMEM, "shots: progress of %d ranks", nranks);
    p->nranks = nranks;
    for (int i = 0; i < nranks; i++)
        p->r[i].current = -1;
    snprintf(p->r[0].device, sizeof p->r[0].device, "%s", device0 ? device0 : "");
    p->r[0].state = SR_BUSY;
    pthread_mutex_init(&p->mu, NULL);
    return 0;
}

void shots_progress_destroy(struct shots_progress *p)
{
    if (!p->r)
        return;
    pthread_mutex_destroy(&p->mu);
    free(p->r);
    memset(p, 0, sizeof *p);
}

static const char *state_name(enum shots_rank_state s)
{
    static const char *const n[] = {"starting", "idle", "busy", "ended"};
    return n[s];
}

char *shots_progress_json(struct shots_progress *p)
{
    json_t *a = json_array();
    if (!a)
        return NULL;
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < p->nranks; i++) {
        const struct shots_rank *r = &p->r[i];
        json_t *o = i == 0 ? json_pack("{s:i, s:s, s:s, s:s, s:I, s:I}", "rank", 0, "role", "dispatch", "device",
                                       r->device, "state", state_name(r->state), "stacked",
                                       (json_int_t)p->stacked, "waiting", (json_int_t)p->waiting)
                           : json_pack("{s:i, s:s, s:s, s:s, s:I, s:I, s:I, s:f}", "rank", i, "role", "migrate",
                                       "device", r->device, "state", state_name(r->state), "current",
                                       (json_int_t)r->current, "shots", (json_int_t)r->done, "failed",
                                       (json_int_t)r->failed, "busy_s", r->busy_s);
        if (o)
            json_array_append_new(a, o);
    }
    pthread_mutex_unlock(&p->mu);
    char *js = json_dumps(a, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(a);
    return js;
}
