/* The rtm job end to end through `seislive run` (a real process, CPU backend): shots
 * streamed over ZeroMQ are migrated by the RTM engine, a partial image is published
 * after every shot, and the final image equals the batch migration of the same shots
 * (the engine called directly, shot after shot, into one stack). */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "conf/config.h"
#include "io/image_files.h"
#include "io/model.h"
#include "io/wire.h"
#include "kernels/backend.h"
#include "kernels/rtm.h"
#include "stream/error.h"
#include "stream/rtm_config.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

#define NTR 12
#define NS 60

static const char *rtm_cfg = TS_SMALL_RTM_CFG "metrics_interval = 0.5\n[log]\nlevel = \"info\"\n";

Test(stream_rtm, zmq_shots_through_seislive_run_equal_batch_rtm, .timeout = 120)
{
    char *dir = test_tmpdir();
    char text[4096], ep_in[512], ep_out[512];
    snprintf(ep_in, sizeof ep_in, "ipc://%s/in", dir);
    snprintf(ep_out, sizeof ep_out, "ipc://%s/out", dir);
    snprintf(text, sizeof text,
             "%s[input]\nkind = \"zmq\"\nendpoint = \"%s\"\nslots = 2\nslot_mib = 1.0\n"
             "[output]\nendpoint = \"%s\"\ndir = \"%s/files\"\n",
             rtm_cfg, ep_in, ep_out, dir);
    char *cfgpath = test_write_file(dir, "rtm.toml", text);
    char log[600];
    snprintf(log, sizeof log, "%s/run.log", dir);
    pid_t pid = ts_spawn_run(cfgpath, log);
    void *z = zmq_ctx_new();
    void *sub = ts_sub(z, ep_out, "image", 0);
    void *push = ts_push(z, ep_in);
    const int N = 3;
    struct shot shots[3];
    for (int k = 0; k < N; k++) {
        ts_make_shot(k, NTR, NS, &shots[k]);
        cr_assert_eq(wire_send_shot_f32(push, &shots[k], k, 0), 0);
        struct ts_msg m;
        cr_assert_eq(ts_recv_image(sub, k + 1, false, &m, 60000), 0, "no image after shot %d", k);
        ts_msg_free(&m);
    }
    cr_assert_eq(wire_send_end(push, 0), 0);
    struct ts_msg fm;
    cr_assert_eq(ts_recv_image(sub, N, true, &fm, 60000), 0, "no final image");
    cr_assert_eq(ts_wait(pid, 60), 0);

    /* Batch: the same engine, directly, same shots in the same order. */
    struct sl_config cfg;
    cr_assert_eq(config_load(cfgpath, &cfg), 0, "%s", err_msg());
    struct sl_device dev;
    cr_assert_eq(backend_select("cpu", &dev), 0);
    struct sl_model mod;
    cr_assert_eq(model_load(&cfg, &mod), 0, "%s", err_msg());
    struct rtm_volume vol = {.v = mod.v};
    memcpy(vol.n, mod.n, sizeof vol.n);
    memcpy(vol.d, mod.d, sizeof vol.d);
    memcpy(vol.o, mod.o, sizeof vol.o);
    struct rtm_engine *e;
    cr_assert_eq(rtm_engine_create_cfg(&cfg, &dev, &vol, &e), 0, "%s", err_msg());
    struct image_stack st;
    cr_assert_eq(image_stack_init(&st, mod.n, mod.d, mod.o), 0);
    for (int k = 0; k < N; k++)
        cr_assert_eq(rtm_stack_shot(e, &shots[k], &st, NULL), 0, "%s", err_msg());
    size_t cells = image_stack_cells(&st);
    float *want = malloc(cells * sizeof(float));
    cr_assert_eq(image_stack_render(&st, false, want), 0);
    cr_assert_eq(fm.payload_len, cells * sizeof(float));
    const float *got = fm.payload;
    double nrm = 0;
    for (size_t i = 0; i < cells; i++) {
        cr_assert_eq(got[i], want[i], "cell %zu: %g != %g", i, got[i], want[i]);
        nrm += (double)want[i] * want[i];
    }
    cr_assert_gt(nrm, 0, "the image is not empty");
    char out[600];
    snprintf(out, sizeof out, "%s/files", dir);
    struct image_meta meta;
    float *img;
    cr_assert_eq(image_files_read(out, "image", &meta, &img), 0);
    cr_assert_eq(meta.units, N);
    cr_assert_eq(memcmp(img, want, cells * sizeof(float)), 0);
    free(img);
    free(want);
    ts_msg_free(&fm);
    image_stack_free(&st);
    rtm_engine_destroy(e);
    model_free(&mod);
    config_free(&cfg);
    for (int k = 0; k < N; k++)
        ts_shot_free(&shots[k]);
    zmq_close(push);
    zmq_close(sub);
    zmq_ctx_term(z);
    free(cfgpath);
    test_rmtree(dir);
    free(dir);
}
