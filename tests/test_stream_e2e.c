/* The runtime end to end, real processes over ipc:// sockets: a sender streams shots,
 * the shot job (forked child, CPU backend) stacks them, a subscriber gets a partial
 * image after every shot, and the final image equals the batch stack of the same shots.
 * The per-shot "migration" here is a simple trace-energy binning (tests/
 * test_stream_support.c) so the runtime is tested independently of the RTM engine. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <segyio/segy.h>
#include <zmq.h>

#include "io/image_files.h"
#include "io/wire.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

#define NTR 12
#define NS 50

/* EXTRA: more [output] keys. */
static char *config_zmq(const char *dir, const char *extra)
{
    static char buf[4096];
    snprintf(buf, sizeof buf,
             "[input]\nkind = \"zmq\"\nendpoint = \"ipc://%s/in\"\nslots = 2\nslot_mib = 1.0\n"
             "[output]\nendpoint = \"ipc://%s/out\"\ndir = \"%s/files\"\nhwm = 4\n%s"
             "[runtime]\nmetrics_interval = 0.2\n[log]\nlevel = \"info\"\n",
             dir, dir, dir, extra ? extra : "");
    return buf;
}

static void send_shot(void *push, int k, int64_t seq)
{
    struct shot s;
    ts_make_shot(k, NTR, NS, &s);
    cr_assert_eq(wire_send_shot_f32(push, &s, seq, 0), 0);
    ts_shot_free(&s);
}

static void assert_equal_image(const float *got, const float *want, size_t n)
{
    /* Same shots, same order, same arithmetic: bit for bit. */
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "cell %zu: %g != %g", i, got[i], want[i]);
}

Test(stream_e2e, zmq_shots_partial_images_late_subscriber_and_final, .timeout = 60)
{
    char *dir = test_tmpdir();
    char log[512];
    snprintf(log, sizeof log, "%s/job.log", dir);
    pid_t pid = ts_spawn_job(config_zmq(dir, NULL), log);
    void *z = zmq_ctx_new();
    char ep_in[300], ep_out[300];
    snprintf(ep_in, sizeof ep_in, "ipc://%s/in", dir);
    snprintf(ep_out, sizeof ep_out, "ipc://%s/out", dir);
    void *sub = ts_sub(z, ep_out, "image", 0);
    void *push = ts_push(z, ep_in);
    const int N = 6;
    int ks[6] = {0, 1, 2, 3, 4, 5};
    float want[TS_CELLS];
    for (int k = 0; k < N; k++) {
        send_shot(push, ks[k], k);
        /* A partial image after every shot, holding exactly the shots so far. */
        struct ts_msg m;
        cr_assert_eq(ts_recv_image(sub, k + 1, false, &m, 15000), 0, "no image after shot %d", k);
        cr_assert_eq(m.payload_len, TS_CELLS * sizeof(float));
        ts_batch_image(ks, k + 1, NTR, NS, want);
        assert_equal_image(m.payload, want, TS_CELLS);
        cr_assert(wire_parse_seq(m.header, strlen(m.header)) >= 0, "every message has a seq");
        ts_msg_free(&m);
    }
    /* A late subscriber gets the current image at once (last-value cache). */
    void *late = ts_sub(z, ep_out, "image", 0);
    struct ts_msg lm;
    cr_assert_eq(ts_recv_image(late, N, false, &lm, 5000), 0, "late subscriber got nothing");
    assert_equal_image(lm.payload, want, TS_CELLS);
    ts_msg_free(&lm);
    cr_assert_eq(wire_send_end(push, 0), 0);
    struct ts_msg fm;
    cr_assert_eq(ts_recv_image(sub, N, true, &fm, 15000), 0, "no final image");
    assert_equal_image(fm.payload, want, TS_CELLS);
    ts_msg_free(&fm);
    cr_assert_eq(ts_wait(pid, 20), 0);
    /* The final files hold the same image. */
    char out[600];
    snprintf(out, sizeof out, "%s/files", dir);
    struct image_meta meta;
    float *img;
    cr_assert_eq(image_files_read(out, "image", &meta, &img), 0);
    cr_assert_eq(meta.units, N);
    cr_assert(meta.final);
    assert_equal_image(img, want, TS_CELLS);
    free(img);
    /* And the SEG-Y copy: one trace per (x, y) column, depth samples. */
    char segy[700];
    snprintf(segy, sizeof segy, "%s/image.segy", out);
    segy_file *sf = segy_open(segy, "rb");
    cr_assert_not_null(sf);
    char bin[SEGY_BINARY_HEADER_SIZE];
    cr_assert_eq(segy_binheader(sf, bin), SEGY_OK);
    int ns = segy_samples(bin), ntr = 0;
    cr_assert_eq(ns, TS_NZ);
    long tr0 = segy_trace0(bin);
    int bsz = segy_trace_bsize(ns);
    cr_assert_eq(segy_traces(sf, &ntr, tr0, bsz), SEGY_OK);
    cr_assert_eq(ntr, TS_NX * TS_NY);
    float col[TS_NZ];
    int k = 3 * TS_NX + 5; /* iy = 3, ix = 5 */
    cr_assert_eq(segy_readtrace(sf, k, col, tr0, bsz), SEGY_OK);
    segy_to_native(segy_format(bin), ns, col);
    for (int iz = 0; iz < TS_NZ; iz++)
        cr_assert_eq(col[iz], want[(iz * TS_NY + 3) * TS_NX + 5]);
    segy_close(sf);
    zmq_close(push);
    zmq_close(sub);
    zmq_close(late);
    zmq_ctx_term(z);
    test_rmtree(dir);
    free(dir);
}

Test(stream_e2e, subscriber_that_never_reads_does_not_stall_the_run, .timeout = 60)
{
    char *dir = test_tmpdir();
    char log[512];
    snprintf(log, sizeof log, "%s/job.log", dir);
    pid_t pid = ts_spawn_job(config_zmq(dir, NULL), log);
    void *z = zmq_ctx_new();
    char ep_in[300], ep_out[300];
    snprintf(ep_in, sizeof ep_in, "ipc://%s/in", dir);
    snprintf(ep_out, sizeof ep_out, "ipc://%s/out", dir);
    /* Subscribed to everything, tiny queue, and never read. */
    void *dead = ts_sub(z, ep_out, "", 1);
    void *push = ts_push(z, ep_in);
    const int N = 40;
    int ks[40];
    for (int k = 0; k < N; k++) {
        ks[k] = k;
        send_shot(push, k, k);
    }
    cr_assert_eq(wire_send_end(push, 0), 0);
    /* The run still finishes with every shot stacked. */
    cr_assert_eq(ts_wait(pid, 40), 0, "the run did not finish (stalled by the subscriber?)");
    char out[600];
    snprintf(out, sizeof out, "%s/files", dir);
    struct image_meta meta;
    float *img;
    cr_assert_eq(image_files_read(out, "image", &meta, &img), 0);
    cr_assert_eq(meta.units, N);
    float *want = malloc(TS_CELLS * sizeof(float));
    ts_batch_image(ks, N, NTR, NS, want);
    assert_equal_image(img, want, TS_CELLS);
    free(want);
    free(img);
    zmq_close(push);
    zmq_close(dead);
    zmq_ctx_term(z);
    test_rmtree(dir);
    free(dir);
}

Test(stream_e2e, slices_only_publishes_three_planes, .timeout = 60)
{
    char *dir = test_tmpdir();
    char log[512];
    snprintf(log, sizeof log, "%s/job.log", dir);
    pid_t pid = ts_spawn_job(config_zmq(dir, "slices_only = true\n"), log);
    void *z = zmq_ctx_new();
    char ep_in[300], ep_out[300];
    snprintf(ep_in, sizeof ep_in, "ipc://%s/in", dir);
    snprintf(ep_out, sizeof ep_out, "ipc://%s/out", dir);
    void *sub = ts_sub(z, ep_out, "image", 0);
    void *push = ts_push(z, ep_in);
    send_shot(push, 2, 0);
    struct ts_msg m;
    cr_assert_eq(ts_recv_image(sub, 1, false, &m, 15000), 0);
    cr_assert_eq(m.nframes, 5, "topic, header, xy, xz, yz");
    struct wire_volume_hdr h;
    cr_assert_eq(wire_parse_volume(m.header, strlen(m.header), &h), 0);
    cr_assert(h.slices);
    cr_assert_eq(h.at[2], TS_NZ / 2);
    cr_assert_eq(m.payload_len, TS_NX * TS_NY * sizeof(float));
    int ks[1] = {2};
    float want[TS_CELLS];
    ts_batch_image(ks, 1, NTR, NS, want);
    const float *xy = m.payload;
    for (int i = 0; i < TS_NX * TS_NY; i++)
        cr_assert_eq(xy[i], want[(size_t)h.at[2] * TS_NX * TS_NY + i]);
    ts_msg_free(&m);
    cr_assert_eq(wire_send_end(push, 0), 0);
    cr_assert_eq(ts_wait(pid, 20), 0);
    zmq_close(push);
    zmq_close(sub);
    zmq_ctx_term(z);
    test_rmtree(dir);
    free(dir);
}

Test(stream_e2e, sub_socket_input_counts_upstream_gaps, .timeout = 60)
{
    char *dir = test_tmpdir();
    char log[512], cfg[2048], ep[512];
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(ep, sizeof ep, "ipc://%s/feed", dir);
    /* The sender binds a PUB; the job's [input] socket = "sub" connects to it. */
    void *z = zmq_ctx_new();
    void *pub = zmq_socket(z, ZMQ_PUB);
    cr_assert_eq(zmq_bind(pub, ep), 0);
    snprintf(cfg, sizeof cfg,
             "[input]\nkind = \"zmq\"\nsocket = \"sub\"\nendpoint = \"%s\"\nslots = 2\nslot_mib = 1.0\n"
             "[output]\ndir = \"%s/files\"\n[log]\nlevel = \"info\"\n", ep, dir);
    pid_t pid = ts_spawn_job(cfg, log);
    /* A SUB joins late and a PUB drops what it sends before the subscription arrives: wait
     * until the job says it subscribed (a sanitizer build under load takes seconds), then
     * give the subscription a moment to reach the PUB. */
    for (int i = 0; i < 400 && ts_count_in_file(log, "subscribed to") < 1; i++)
        usleep(50000);
    usleep(500000);
    /* Sender seqs 0, 1, 3: one message lost upstream (seq 2 never sent). */
    int sent[3] = {0, 1, 3};
    for (int j = 0; j < 3; j++) {
        struct shot s;
        ts_make_shot(sent[j], NTR, NS, &s);
        cr_assert_eq(wire_send_shot_f32(pub, &s, sent[j], 0), 0);
        ts_shot_free(&s);
    }
    cr_assert_eq(wire_send_end(pub, 0), 0);
    cr_assert_eq(ts_wait(pid, 20), 0);
    cr_assert_eq(ts_count_in_file(log, "1 messages lost upstream"), 1);
    char out[600];
    snprintf(out, sizeof out, "%s/files", dir);
    struct image_meta meta;
    float *img;
    cr_assert_eq(image_files_read(out, "image", &meta, &img), 0);
    cr_assert_eq(meta.units, 3);
    float want[TS_CELLS];
    ts_batch_image(sent, 3, NTR, NS, want);
    assert_equal_image(img, want, TS_CELLS);
    free(img);
    zmq_close(pub);
    zmq_ctx_term(z);
    test_rmtree(dir);
    free(dir);
}
