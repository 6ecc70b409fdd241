/* Malformed input: every bad message or file is rejected with a counted, logged reason
 * naming the message number (or file byte), the process keeps running, and the good
 * units around them are processed. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "io/image_files.h"
#include "io/wire.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

#define NTR 12
#define NS 50

static void send_frames(void *s, int n, const void *const *p, const size_t *len)
{
    for (int i = 0; i < n; i++)
        cr_assert_geq(zmq_send(s, p[i], len[i], i + 1 < n ? ZMQ_SNDMORE : 0), 0);
}

static void send_text(void *s, const char *json)
{
    const void *p[1] = {json};
    size_t n[1] = {strlen(json)};
    send_frames(s, 1, p, n);
}

Test(stream_malformed, bad_messages_are_counted_logged_and_skipped, .timeout = 60)
{
    char *dir = test_tmpdir();
    char log[512], cfg[2048], ep_in[512], ep_out[512];
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(ep_in, sizeof ep_in, "ipc://%s/in", dir);
    snprintf(ep_out, sizeof ep_out, "ipc://%s/out", dir);
    snprintf(cfg, sizeof cfg,
             "[input]\nkind = \"zmq\"\nendpoint = \"%s\"\nslots = 2\nslot_mib = 1.0\n"
             "[output]\nendpoint = \"%s\"\ndir = \"%s/files\"\nhwm = 1000\n[runtime]\nmetrics_interval = 0.1\n"
             "[log]\nlevel = \"info\"\n",
             ep_in, ep_out, dir);
    pid_t pid = ts_spawn_job(cfg, log);
    void *z = zmq_ctx_new();
    void *status = ts_sub(z, ep_out, "status", 0);
    /* A first status before any input: the subscription is live, so the job cannot
     * finish and publish its last status before this subscriber has joined (it
     * reconnects every 100 ms until the job binds; the run itself can be shorter). */
    struct ts_msg first;
    cr_assert_eq(ts_recv(status, &first, 10000), 0, "no status from the job within 10 s");
    ts_msg_free(&first);
    void *push = ts_push(z, ep_in);
    struct shot s0, s1, s2;
    ts_make_shot(0, NTR, NS, &s0);
    ts_make_shot(1, NTR, NS, &s1);
    ts_make_shot(2, NTR, NS, &s2);
    struct wire_shot_hdr h = {.shot_id = 101, .ns = NS, .dt = 0.004, .ntr = NTR};
    char *good_hdr = wire_encode_shot_header(&h, -1);
    size_t rb = NTR * 3 * 4, db = (size_t)NTR * NS * 4;

    cr_assert_eq(wire_send_shot_f32(push, &s0, 1, 0), 0);                  /* 1 good */
    send_text(push, "{\"type\":\"shot\",\"v\":1,");                        /* 2 bad JSON */
    send_text(push, "{\"type\":\"shot\",\"v\":2,\"shot_id\":1}");          /* 3 version */
    {                                                                       /* 4 truncated */
        const void *p[3] = {good_hdr, s1.rec, s1.data};
        size_t n[3] = {strlen(good_hdr), rb, db - 100};
        send_frames(push, 3, p, n);
    }
    {                                                                       /* 5 wrong size */
        const void *p[3] = {good_hdr, s1.rec, s1.data};
        size_t n[3] = {strlen(good_hdr), rb - 12, db};
        send_frames(push, 3, p, n);
    }
    {                                                                       /* 6 garbage */
        unsigned char junk[300];
        for (int i = 0; i < 300; i++)
            junk[i] = (unsigned char)(i * 37 + 11);
        const void *p[2] = {junk, junk};
        size_t n[2] = {sizeof junk, 17};
        send_frames(push, 2, p, n);
    }
    {                                                                       /* 7 bad mseed */
        struct wire_traces_hdr th = {.t0_ns = 1700000000000000000LL, .dt = 0.01, .nrec = 2,
                                     .ns = 100, .format = WIRE_MSEED};
        char rec[512];
        memset(rec, 'x', sizeof rec);
        cr_assert_eq(wire_send_traces_mseed(push, &th, rec, sizeof rec, -1, 0), 0);
    }
    cr_assert_eq(wire_send_shot_f32(push, &s1, 8, 0), 0);                  /* 8 good */
    {                                                                       /* 9 bad SEG-Y */
        struct wire_shot_hdr sh = h;
        sh.format = WIRE_SEGY;
        sh.segy_format = 5;
        size_t tb = 240 + (size_t)NS * 4;
        char *tr = calloc(NTR, tb);
        tr[114] = 0x7f; /* trace header byte 115: sample count 0x7f.. != ns */
        cr_assert_eq(wire_send_shot_segy(push, &sh, tr, NTR * tb, -1, 0), 0);
        free(tr);
    }
    send_text(push, "{\"type\":\"quake\",\"v\":1}");                       /* 10 type */
    send_text(push, "{\"type\":\"shot\",\"v\":1,\"ns\":5}");                /* 11 field */
    cr_assert_eq(wire_send_shot_f32(push, &s2, 12, 0), 0);                 /* 12 good */
    cr_assert_eq(wire_send_end(push, 0), 0);

    /* The run ends normally; its last status counts the 9 rejects.  (The status
     * subscriber reads only now: hwm = 1000 keeps the publisher from dropping the last
     * status for it as a slow subscriber.) */
    cr_assert_eq(ts_wait(pid, 30), 0, "the job must survive bad input");
    int64_t rejected = -1, units = -1;
    struct ts_msg m;
    while (ts_recv(status, &m, 500) == 0) {
        json_t *o = json_loads(m.header, 0, NULL);
        const char *health = json_string_value(json_object_get(o, "health"));
        if (health && strcmp(health, "stopped") == 0) {
            rejected = json_integer_value(json_object_get(o, "rejected"));
            units = json_integer_value(json_object_get(o, "units"));
        }
        json_decref(o);
        ts_msg_free(&m);
    }
    cr_assert_eq(units, 3);
    cr_assert_eq(rejected, 9);
    const char *reasons[] = {"message 2: bad JSON", "message 3: wrong version",
                             "message 4: wrong payload size", "message 5: wrong payload size",
                             "message 6: bad JSON", "message 7: bad payload",
                             "message 9: bad payload", "message 10: unknown type",
                             "message 11: missing or mistyped field"};
    for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++)
        cr_assert_eq(ts_count_in_file(log, reasons[i]), 1, "log lacks \"%s\"", reasons[i]);
    cr_assert_eq(ts_count_in_file(log, "rejected message"), 9);

    char out[600];
    snprintf(out, sizeof out, "%s/files", dir);
    struct image_meta meta;
    float *img;
    cr_assert_eq(image_files_read(out, "image", &meta, &img), 0);
    int ks[3] = {0, 1, 2};
    float want[TS_CELLS];
    ts_batch_image(ks, 3, NTR, NS, want);
    for (int i = 0; i < TS_CELLS; i++)
        cr_assert_eq(img[i], want[i]);
    free(img);
    free(good_hdr);
    ts_shot_free(&s0);
    ts_shot_free(&s1);
    ts_shot_free(&s2);
    zmq_close(push);
    zmq_close(status);
    zmq_ctx_term(z);
    test_rmtree(dir);
    free(dir);
}

Test(stream_malformed, corrupt_segy_file_header_rejected_others_processed, .timeout = 60)
{
    char *dir = test_tmpdir();
    char in[512], bad[600], good[600], log[512], cfg[2048];
    snprintf(in, sizeof in, "%s/in", dir);
    mkdir(in, 0755);
    snprintf(bad, sizeof bad, "%s/a_bad.segy", in);
    snprintf(good, sizeof good, "%s/b_good.segy", in);
    snprintf(log, sizeof log, "%s/job.log", dir);
    int ks[2] = {0, 1};
    cr_assert_eq(ts_write_segy(bad, ks, 2, NTR, NS, 5), 0);
    cr_assert_eq(ts_write_segy(good, ks, 2, NTR, NS, 5), 0);
    /* Corrupt the sample format code (bytes 3225-3226) of the first file. */
    FILE *f = fopen(bad, "r+b");
    fseek(f, 3224, SEEK_SET);
    fputc(0, f);
    fputc(9, f);
    fclose(f);
    snprintf(cfg, sizeof cfg,
             "[input]\nkind = \"files\"\npaths = [\"%s\"]\nslots = 2\nslot_mib = 0.1\n"
             "[output]\ndir = \"%s/files\"\n[log]\nlevel = \"info\"\n", in, dir);
    cr_assert_eq(ts_wait(ts_spawn_job(cfg, log), 30), 0);
    cr_assert_eq(ts_count_in_file(log, "a_bad.segy: byte 3225: sample format code 9"), 1);
    char out[600];
    snprintf(out, sizeof out, "%s/files", dir);
    struct image_meta meta;
    float *img;
    cr_assert_eq(image_files_read(out, "image", &meta, &img), 0);
    cr_assert_eq(meta.units, 2);
    float want[TS_CELLS];
    ts_batch_image(ks, 2, NTR, NS, want);
    for (int i = 0; i < TS_CELLS; i++)
        cr_assert_eq(img[i], want[i]);
    free(img);
    test_rmtree(dir);
    free(dir);
}
