/* Crash safety: the job is killed with SIGKILL at random moments while shots stream
 * in, restarted, and the whole input replayed each time.  The final image must equal
 * the uninterrupted (batch) one and the ledger must hold every shot exactly once. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "conf/config.h"
#include "io/image_files.h"
#include "io/wire.h"
#include "stream/state.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

#define NTR 12
#define NS 400 /* a few ms per shot, so kills land mid-run */
#define N 12

/* Send every shot and the end; the socket stays open (closed after the child is gone,
 * so nothing queued is thrown away before it is delivered). */
static void *send_all(void *z, const char *ep)
{
    /* Connect once the job has bound (else the first reconnect waits 100 ms). */
    for (int i = 0; i < 500 && access(ep + strlen("ipc://"), F_OK) != 0; i++)
        usleep(10000);
    void *push = ts_push(z, ep);
    for (int k = 0; k < N; k++) {
        struct shot s;
        ts_make_shot(k, NTR, NS, &s);
        wire_send_shot_f32(push, &s, k, 0);
        ts_shot_free(&s);
    }
    wire_send_end(push, 0);
    return push;
}

static void close_now(void *push)
{
    int linger = 0;
    zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(push);
}

Test(stream_crash, kill9_restart_replay_stacks_every_shot_once, .timeout = 90)
{
    char *dir = test_tmpdir();
    char log[512], cfg[2048], ep[512], state_dir[512];
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(ep, sizeof ep, "ipc://%s/in", dir);
    snprintf(state_dir, sizeof state_dir, "%s/state", dir);
    snprintf(cfg, sizeof cfg,
             "[input]\nkind = \"zmq\"\nendpoint = \"%s\"\nslots = 2\nslot_mib = 1.0\n"
             "[output]\ndir = \"%s/files\"\nstate_dir = \"%s\"\ncheckpoint_every = 1\n"
             "[log]\nlevel = \"info\"\n",
             ep, dir, state_dir);
    void *z = zmq_ctx_new();
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    srand(seed);
    int kills = 0;
    for (int round = 0; round < 4; round++) {
        pid_t pid = ts_spawn_job(cfg, log);
        void *push = send_all(z, ep);
        int delay_ms = rand() % 250; /* shots take ~10-30 ms each (fsync'd checkpoints) */
        usleep((useconds_t)delay_ms * 1000);
        if (kill(pid, SIGKILL) == 0)
            kills++;
        waitpid(pid, NULL, 0);
        close_now(push);
        cr_log_info("round %d: SIGKILL after %d ms (seed %u)", round, delay_ms, seed);
    }
    cr_assert(kills > 0);
    /* The last run goes to the end. */
    pid_t pid = ts_spawn_job(cfg, log);
    void *push = send_all(z, ep);
    cr_assert_eq(ts_wait(pid, 40), 0);
    close_now(push);
    zmq_ctx_term(z);

    int ks[N];
    for (int k = 0; k < N; k++)
        ks[k] = k;
    float *want = malloc(TS_CELLS * sizeof(float));
    ts_batch_image(ks, N, NTR, NS, want);
    char out[600];
    snprintf(out, sizeof out, "%s/files", dir);
    struct image_meta meta;
    float *img;
    cr_assert_eq(image_files_read(out, "image", &meta, &img), 0);
    cr_assert_eq(meta.units, N);
    for (int i = 0; i < TS_CELLS; i++)
        cr_assert_eq(img[i], want[i], "cell %d: %g != %g", i, img[i], want[i]);

    /* The ledger: each shot exactly once, in stacking order (= sending order). */
    struct sl_config c;
    cr_assert_eq(config_load_string(cfg, "test.toml", &c), 0);
    struct state st;
    cr_assert_eq(state_load(state_dir, config_fingerprint(&c), &st), 0);
    cr_assert_eq(st.n_ledger, (size_t)N);
    for (int k = 0; k < N; k++)
        cr_assert_eq(st.ledger[k], 100 + k);
    for (int i = 0; i < TS_CELLS; i++)
        cr_assert_eq(st.image[i], want[i]);
    /* Replays were skipped, not stacked again. */
    cr_assert_geq(ts_count_in_file(log, "already stacked (ledger): skipped"), 1);
    state_free(&st);
    config_free(&c);
    free(img);
    free(want);
    test_rmtree(dir);
    free(dir);
}
