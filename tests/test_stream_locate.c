/* Trace blocks through the runtime (what the locate job uses): f32 and miniSEED
 * "traces" messages over ZeroMQ reach the consumer in order, contiguous and intact; a
 * corrupt miniSEED record is rejected with its message number and the stream goes on;
 * events published from the consumer reach subscribers. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "conf/config.h"
#include "io/mseed_write.h"
#include "io/wire.h"
#include "kernels/backend.h"
#include "stream/error.h"
#include "stream/locate_blocks.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

#define NREC 3
#define NS 200
#define T0 1700000000000000000LL
#define DT 0.01

static float sample(int r, int64_t k)
{
    return (float)(sin(0.05 * (double)k + r) * (r + 1));
}

struct consumer {
    FILE *out;
    int64_t next_t0;
    long blocks, samples, gaps;
    double sum;
    int contiguous;
    char chans[256];
};

static int feed(const struct trace_block *b, void *user)
{
    struct consumer *c = user;
    if (c->next_t0 >= 0 && b->t0_ns != c->next_t0)
        c->contiguous = 0;
    c->next_t0 = b->t0_ns + (int64_t)llround(b->ns * b->dt * 1e9);
    int64_t k0 = (int64_t)llround((double)(b->t0_ns - T0) * 1e-9 / DT);
    for (int r = 0; r < b->nrec; r++)
        for (int k = 0; k < b->ns; k++) {
            if (!trace_block_valid(b, r, k)) {
                c->gaps++;
                continue;
            }
            /* Each sample must be the one sent for its time and channel. */
            if (b->data[trace_block_at(b, r, k)] != sample(r, k0 + k))
                c->contiguous = 0;
            c->samples++;
            c->sum += b->data[trace_block_at(b, r, k)];
        }
    if (c->blocks == 0)
        for (int r = 0; r < b->nrec; r++) {
            strcat(c->chans, b->chan[r].sta);
            strcat(c->chans, ",");
        }
    c->blocks++;
    struct wire_event e = {.origin_ns = b->t0_ns, .x = 1, .y = 2, .z = 3, .strength = (double)c->blocks};
    return locate_blocks_publish_event(&e);
}

static int flush(void *user)
{
    struct consumer *c = user;
    fprintf(c->out, "%ld %ld %ld %d %s\n", c->blocks, c->samples, c->gaps, c->contiguous, c->chans);
    return 0;
}

/* N samples from sample index K0 of every station, as float32 miniSEED records of
 * 512 bytes, appended to FP (PATH names it in errors). */
static void write_stations(FILE *fp, const char *path, int64_t k0, int n)
{
    static const char *const names[NREC] = {"STA0", "STA1", "STA2"};
    float x[400];
    cr_assert_leq(n, 400);
    for (int r = 0; r < NREC; r++) {
        for (int k = 0; k < n; k++)
            x[k] = sample(r, k0 + k);
        struct mseed_channel ch = {.net = "XX", .sta = names[r], .loc = "", .chan = "HHZ",
                                   .rate = 1 / DT, .encoding = MSEED_ENC_FLOAT32, .reclen = 512,
                                   .sequence = 1};
        cr_assert_gt(mseed_write_f32(fp, path, &ch, T0 + k0 * 10000000LL, x, n), 0);
    }
}

static pid_t spawn_consumer(const char *cfgtext, const char *log, const char *result)
{
    fflush(NULL);
    pid_t pid = test_fork();
    if (pid)
        return pid;
    freopen(log, "w", stderr);
    struct sl_config cfg;
    if (config_load_string(cfgtext, "t.toml", &cfg) < 0)
        _exit(2);
    struct sl_device dev;
    backend_select("cpu", &dev);
    struct consumer c = {.out = fopen(result, "w"), .next_t0 = -1, .contiguous = 1};
    struct block_consumer bc = {.name = "locate", .user = &c, .feed = feed, .flush = flush};
    int rc = locate_blocks_run(&cfg, &dev, &bc);
    if (rc)
        fprintf(stderr, "failed: %s\n", err_msg());
    fclose(c.out);
    _exit(rc ? 1 : 0);
}

struct recs {
    char buf[65536];
    size_t len;
};

static void sink(char *record, int len, void *arg)
{
    struct recs *r = arg;
    memcpy(r->buf + r->len, record, (size_t)len);
    r->len += (size_t)len;
}

Test(stream_locate, f32_and_mseed_blocks_in_order_bad_record_rejected, .timeout = 60)
{
    char *dir = test_tmpdir();
    char cfg[2048], ep_in[512], ep_out[512], log[512], result[512];
    snprintf(ep_in, sizeof ep_in, "ipc://%s/in", dir);
    snprintf(ep_out, sizeof ep_out, "ipc://%s/out", dir);
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(result, sizeof result, "%s/result.txt", dir);
    snprintf(cfg, sizeof cfg,
             "[input]\nkind = \"zmq\"\nendpoint = \"%s\"\nslots = 2\nslot_mib = 1.0\n"
             "[output]\nendpoint = \"%s\"\n[log]\nlevel = \"info\"\n", ep_in, ep_out);
    pid_t pid = spawn_consumer(cfg, log, result);
    void *z = zmq_ctx_new();
    void *sub = ts_sub(z, ep_out, "event", 0);
    void *push = ts_push(z, ep_in);
    usleep(200000); /* let the subscription reach the publisher */
    struct wire_traces_hdr h = {.dt = DT, .nrec = NREC, .ns = NS, .format = WIRE_F32};
    float *x = malloc(NREC * NS * sizeof(float));
    const char *names[NREC] = {"STA0", "STA1", "STA2"};
    for (int b = 0; b < 4; b++) {
        h.t0_ns = T0 + (int64_t)b * NS * 10000000LL;
        for (int r = 0; r < NREC; r++)
            for (int k = 0; k < NS; k++)
                x[r * NS + k] = sample(r, (int64_t)b * NS + k);
        if (b == 1 || b == 3) {
            struct recs rec = {.len = 0};
            for (int r = 0; r < NREC; r++) {
                struct mseed_channel ch = {.net = "XX", .sta = names[r], .loc = "", .chan = "HHZ",
                                           .rate = 1 / DT, .encoding = MSEED_ENC_FLOAT32,
                                           .reclen = 512, .sequence = 1};
                cr_assert_gt(mseed_pack_f32(&ch, h.t0_ns, x + r * NS, NS, sink, &rec), 0);
            }
            if (b == 3) /* a damaged record: this message is rejected, not the run */
                memset(rec.buf + 8, '#', 40);
            cr_assert_eq(wire_send_traces_mseed(push, &h, rec.buf, rec.len, b, 0), 0);
        } else {
            char js[512];
            char *hdr = wire_encode_traces_header(&h, b);
            /* f32 blocks carry their channel names in the header. */
            snprintf(js, sizeof js, "%.*s,\"channels\":[\"XX.STA0..HHZ\",\"XX.STA1..HHZ\","
                                    "\"XX.STA2..HHZ\"]}", (int)strlen(hdr) - 1, hdr);
            free(hdr);
            zmq_send(push, js, strlen(js), ZMQ_SNDMORE);
            zmq_send(push, x, NREC * NS * sizeof(float), 0);
        }
    }
    cr_assert_eq(wire_send_end(push, 0), 0);
    cr_assert_eq(ts_wait(pid, 30), 0);
    FILE *f = fopen(result, "r");
    cr_assert_not_null(f);
    long blocks, samples, gaps;
    int contiguous;
    char chans[256];
    cr_assert_eq(fscanf(f, "%ld %ld %ld %d %255s", &blocks, &samples, &gaps, &contiguous, chans), 5);
    fclose(f);
    cr_assert_eq(blocks, 3, "blocks 0, 1 (mseed), 2; block 3 rejected");
    cr_assert_eq(samples, 3L * NREC * NS);
    cr_assert_eq(gaps, 0);
    cr_assert_eq(contiguous, 1, "blocks out of order, not contiguous, or samples changed");
    cr_assert_str_eq(chans, "STA0,STA1,STA2,");
    cr_assert_eq(ts_count_in_file(log, "message 4: bad payload: miniSEED"), 1);
    int events = 0;
    struct ts_msg m;
    while (ts_recv(sub, &m, 300) == 0) {
        events += strcmp(m.topic, "event") == 0;
        ts_msg_free(&m);
    }
    cr_assert_eq(events, 3);
    free(x);
    zmq_close(push);
    zmq_close(sub);
    zmq_ctx_term(z);
    test_rmtree(dir);
    free(dir);
}

Test(stream_locate, mseed_files_in_a_folder_bad_record_becomes_a_gap, .timeout = 60)
{
    char *dir = test_tmpdir();
    char in[512], cfg[2048], log[512], result[512];
    snprintf(in, sizeof in, "%s/mseed", dir);
    cr_assert_eq(mkdir(in, 0755), 0);
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(result, sizeof result, "%s/result.txt", dir);
    for (int f = 0; f < 2; f++) {
        char path[600];
        snprintf(path, sizeof path, "%s/rec%d.mseed", in, f);
        FILE *fp = fopen(path, "wb");
        write_stations(fp, path, (int64_t)f * 400, 400);
        if (f == 1) {
            /* Damage the header of the second record of the second file: not a record. */
            fseek(fp, 512, SEEK_SET);
            for (int i = 0; i < 48; i++)
                fputc('#', fp);
        }
        fclose(fp);
    }
    snprintf(cfg, sizeof cfg,
             "[input]\nkind = \"files\"\npaths = [\"%s\"]\nslots = 2\nslot_mib = 1.0\n"
             "[locate]\nblock_samples = 100\n[log]\nlevel = \"info\"\n", in);
    pid_t pid = spawn_consumer(cfg, log, result);
    cr_assert_eq(ts_wait(pid, 30), 0);
    FILE *f = fopen(result, "r");
    cr_assert_not_null(f);
    long blocks, samples, gaps;
    int contiguous;
    char chans[256];
    cr_assert_eq(fscanf(f, "%ld %ld %ld %d %255s", &blocks, &samples, &gaps, &contiguous, chans), 5);
    fclose(f);
    cr_assert_eq(blocks, 8, "800 samples in blocks of 100");
    cr_assert_eq(contiguous, 1, "blocks out of order, not contiguous, or samples changed");
    cr_assert_str_eq(chans, "STA0,STA1,STA2,");
    cr_assert_eq(samples + gaps, 3L * 800);
    cr_assert_gt(gaps, 0, "the damaged record's samples are a gap, never zeros");
    cr_assert_geq(ts_count_in_file(log, "miniSEED records rejected"), 1);
    test_rmtree(dir);
    free(dir);
}

Test(stream_locate, state_skips_processed_blocks_on_replay, .timeout = 60)
{
    char *dir = test_tmpdir();
    char in[512], cfg[2048], log[512], result[512];
    snprintf(in, sizeof in, "%s/mseed", dir);
    cr_assert_eq(mkdir(in, 0755), 0);
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(result, sizeof result, "%s/result.txt", dir);
    char path[600];
    snprintf(path, sizeof path, "%s/rec.mseed", in);
    FILE *fp = fopen(path, "wb");
    write_stations(fp, path, 0, 300);
    fclose(fp);
    snprintf(cfg, sizeof cfg,
             "[input]\nkind = \"files\"\npaths = [\"%s\"]\nslots = 2\nslot_mib = 1.0\n"
             "[output]\nstate_dir = \"%s/state\"\ncheckpoint_every = 1\n"
             "[locate]\nblock_samples = 100\n[log]\nlevel = \"info\"\n", in, dir);
    long blocks[2];
    for (int run = 0; run < 2; run++) {
        cr_assert_eq(ts_wait(spawn_consumer(cfg, log, result), 30), 0);
        FILE *f = fopen(result, "r");
        cr_assert_not_null(f);
        cr_assert_eq(fscanf(f, "%ld", &blocks[run]), 1);
        fclose(f);
    }
    cr_assert_eq(blocks[0], 3);
    cr_assert_eq(blocks[1], 0, "the replayed blocks were processed again");
    cr_assert_eq(ts_count_in_file(log, "already stacked (ledger): skipped"), 3);
    cr_assert_eq(ts_count_in_file(log, "resumed after t = "), 1);
    test_rmtree(dir);
    free(dir);
}
