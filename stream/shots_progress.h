/* shots_progress — per-rank progress of shot-parallel migration ([runtime] decompose =
 * "shots", docs/mpi.md), for the status topic and /status.json ("ranks").
 *
 * Rank 0 knows everything it shows: it hands out every shot and receives every result,
 * so the workers send nothing extra.  Written by rank 0's dispatcher (the pipeline's
 * worker thread), read by the publisher thread: a mutex keeps each rank's row whole. */
#ifndef SEISLIVE_SHOTS_PROGRESS_H
#define SEISLIVE_SHOTS_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum shots_rank_state { SR_STARTING, SR_IDLE, SR_BUSY, SR_ENDED };

struct shots_rank {
    char device[128];    /* what the rank reported ("CPU (1 threads)", a GPU's name) */
    enum shots_rank_state state;
    int64_t current;     /* shot id it migrates, -1 none */
    int64_t done;        /* shots it migrated (returned with an image) */
    int64_t failed;      /* shots it gave back failed or stopped */
    double busy_s;       /* its migrations' wall time, summed */
};

struct shots_progress {
    pthread_mutex_t mu;
    int nranks;
    struct shots_rank *r; /* [nranks]; rank 0's row: the dispatcher (device = its own) */
    int64_t stacked;      /* shots added into the image, in order */
    int64_t waiting;      /* finished early: held until the shots before them are stacked */
};

int shots_progress_init(struct shots_progress *p, int nranks, const char *device0);
void shots_progress_destroy(struct shots_progress *p);

/* JSON array text (malloc'd; NULL on allocation failure), one object per rank:
 *   {"rank": 1, "role": "migrate", "device": "...", "state": "busy", "current": 104,
 *    "shots": 3, "failed": 0, "busy_s": 1.25}
 * rank 0's: {"rank": 0, "role": "dispatch", "device": "...", "state": "...",
 *            "stacked": 7, "waiting": 1}. */
char *shots_progress_json(struct shots_progress *p);

#ifdef __cplusplus
}
#endif

#endif
