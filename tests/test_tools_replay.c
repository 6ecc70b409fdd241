/* seislive-replay: miniSEED files come out as contiguous trace blocks holding exactly
 * the recorded samples, with channel names; SEG-Y shot files come out as one shot
 * message per field record with the geometry of the trace headers; an end message
 * closes the stream. */
#include <criterion/criterion.h>
#include <libmseed.h>
#include <math.h>
#include <pthread.h>
#include <segyio/segy.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "io/wire.h"
#include "tests/support.h"

struct sink {
    char endpoint[600];
    char *dir;
    void *ctx, *sock;
    /* what arrived */
    int blocks, shots, ended, nrec, ns_total;
    int64_t t0_first, t_next;
    double dt;
    float *data[16];    /* per channel, concatenated */
    char names[16][32];
    struct shot shot[4];
};

static void *receive(void *arg)
{
    struct sink *s = arg;
    uint64_t seq = 0;
    while (!s->ended) {
        zmq_msg_t f[4];
        int nf = 0, more = 1;
        while (more && nf < 4) {
            zmq_msg_init(&f[nf]);
            if (zmq_msg_recv(&f[nf], s->sock, 0) < 0)
                return NULL; /* timeout: the test fails on the counts */
            more = zmq_msg_more(&f[nf]);
            nf++;
        }
        struct wire_header h;
        cr_assert_eq(wire_parse_header(zmq_msg_data(&f[0]), zmq_msg_size(&f[0]), seq++, &h, NULL), 0);
        size_t len[3];
        const void *pl[3];
        for (int i = 1; i < nf; i++) {
            len[i - 1] = zmq_msg_size(&f[i]);
            pl[i - 1] = zmq_msg_data(&f[i]);
        }
        if (h.kind == WIRE_END) {
            s->ended = 1;
        } else if (h.kind == WIRE_TRACES) {
            cr_assert_eq(wire_check_payload(&h, len, nf - 1, seq, NULL), 0);
            struct wire_traces_hdr *t = &h.traces;
            if (s->blocks == 0) {
                s->t0_first = t->t0_ns;
                s->nrec = t->nrec;
                s->dt = t->dt;
                cr_assert_not_null(t->chan);
                for (int r = 0; r < t->nrec && r < 16; r++)
                    snprintf(s->names[r], sizeof s->names[r], "%s.%s", t->chan[r].sta, t->chan[r].cha);
            } else {
                /* contiguous: this block starts where the last one ended */
                cr_assert(llabs(t->t0_ns - s->t_next) < 1000, "block %d t0 %lld, expected %lld",
                          s->blocks, (long long)t->t0_ns, (long long)s->t_next);
            }
            float *dst = malloc((size_t)t->nrec * t->ns * sizeof *dst);
            cr_assert_eq(wire_decode_traces_f32(&h, pl[0], len[0], seq, dst, NULL), 0);
            for (int r = 0; r < t->nrec && r < 16; r++) {
                s->data[r] = realloc(s->data[r], (size_t)(s->ns_total + t->ns) * sizeof(float));
                memcpy(s->data[r] + s->ns_total, dst + (size_t)r * t->ns, (size_t)t->ns * sizeof(float));
            }
            free(dst);
            s->ns_total += t->ns;
            s->t_next = t->t0_ns + (int64_t)llround(t->ns * t->dt * 1e9);
            s->blocks++;
        } else if (h.kind == WIRE_SHOT) {
            cr_assert_eq(wire_check_payload(&h, len, nf - 1, seq, NULL), 0);
            cr_assert_lt(s->shots, 4);
            struct shot *o = &s->shot[s->shots++];
            o->rec = malloc(shot_payload_bytes(h.shot.ntr, h.shot.ns));
            o->data = o->rec + 3 * h.shot.ntr;
            cr_assert_eq(wire_decode_shot(&h, pl, len, nf - 1, seq, o, NULL), 0);
        }
        wire_header_free(&h);
        for (int i = 0; i < nf; i++)
            zmq_msg_close(&f[i]);
    }
    /* Disconnect once the end is in, as seislive does: the sender waits for that to know
     * its end was delivered (wire_send_end_wait). */
    zmq_close(s->sock);
    s->sock = NULL;
    return NULL;
}

static void sink_start(struct sink *s, pthread_t *th)
{
    memset(s, 0, sizeof *s);
    s->dir = test_tmpdir(); /* ipc:// in a folder of its own: no TCP port to collide on */
    snprintf(s->endpoint, sizeof s->endpoint, "ipc://%s/sink", s->dir);
    s->ctx = zmq_ctx_new();
    s->sock = zmq_socket(s->ctx, ZMQ_PULL);
    int timeout = 30000, linger = 0;
    zmq_setsockopt(s->sock, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt(s->sock, ZMQ_LINGER, &linger, sizeof linger);
    cr_assert_eq(zmq_bind(s->sock, s->endpoint), 0);
    pthread_create(th, NULL, receive, s);
}

static void sink_stop(struct sink *s, pthread_t th)
{
    pthread_join(th, NULL);
    if (s->sock)
        zmq_close(s->sock);
    zmq_ctx_term(s->ctx);
    test_rmtree(s->dir);
    free(s->dir);
}

Test(tools_replay, mseed_blocks_hold_the_recorded_samples)
{
    char *dir = test_tmpdir();
    char out[4200];
    snprintf(out, sizeof out, "%s/m", dir);
    const char *gargv[] = {test_prog("seislive-gen"), "micro", "-o", out, "--count", "2,1",
                           "--components", "1", "--events", "1", "--duration", "5.3",
                           "--rate", "200", "--encoding", "steim2", "--scale", "1000",
                           "--reclen", "512", "--min-gap", "0", NULL};
    struct run_result r;
    cr_assert_eq(test_run(gargv, 60, &r), 0);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);

    struct sink s;
    pthread_t th;
    sink_start(&s, &th);
    char f1[4400], f2[4400];
    snprintf(f1, sizeof f1, "%s/XX.S001..HHZ.mseed", out);
    snprintf(f2, sizeof f2, "%s/XX.S002..HHZ.mseed", out);
    const char *argv[] = {test_prog("seislive-replay"), "--zmq", s.endpoint, "--pace", "max",
                          "--block", "2", "--end", f1, f2, NULL};
    cr_assert_eq(test_run(argv, 60, &r), 0);
    sink_stop(&s, th);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);

    cr_assert(s.ended);
    cr_assert_eq(s.blocks, 3); /* 1060 samples in blocks of 400 */
    cr_assert_eq(s.ns_total, 1060);
    cr_assert_eq(s.nrec, 2);
    cr_assert_float_eq(s.dt, 0.005, 1e-12);
    cr_assert_eq(s.t0_first, 1767225600000000000LL);
    cr_assert_str_eq(s.names[0], "S001.HHZ");
    cr_assert_str_eq(s.names[1], "S002.HHZ");
    /* the samples are the integer counts of the files, in order */
    const char *files[2] = {f1, f2};
    for (int c = 0; c < 2; c++) {
        MSFileParam *fp = NULL;
        MSRecord *msr = NULL;
        int k = 0;
        while (ms_readmsr_r(&fp, &msr, files[c], 0, NULL, NULL, 1, 1, 0) == MS_NOERROR)
            for (int64_t i = 0; i < msr->numsamples; i++, k++)
                cr_assert_eq(s.data[c][k], (float)((int32_t *)msr->datasamples)[i], "ch %d sample %d", c, k);
        ms_readmsr_r(&fp, &msr, NULL, 0, NULL, NULL, 0, 0, 0);
        cr_assert_eq(k, 1060);
        free(s.data[c]);
    }
    test_rmtree(dir);
    free(dir);
}

/* A SEG-Y file of two shots written here with segyio, headers as seislive model writes. */
static void write_shots(const char *path, int ns)
{
    segy_file *f = segy_open(path, "w+b");
    cr_assert_not_null(f);
    char text[3201];
    memset(text, ' ', 3200);
    text[3200] = 0;
    cr_assert_eq(segy_write_textheader(f, 0, text), 0);
    char bin[SEGY_BINARY_HEADER_SIZE] = {0};
    segy_set_bfield(bin, SEGY_BIN_INTERVAL, 2000);
    segy_set_bfield(bin, SEGY_BIN_SAMPLES, ns);
    segy_set_bfield(bin, SEGY_BIN_FORMAT, 5);
    cr_assert_eq(segy_write_binheader(f, bin), 0);
    long trace0 = segy_trace0(bin);
    int bsize = segy_trsize(5, ns);
    float *tr = malloc(ns * sizeof *tr);
    int t = 0;
    for (int shot = 0; shot < 2; shot++)
        for (int g = 0; g < 3 + shot; g++, t++) {
            char th[SEGY_TRACE_HEADER_SIZE] = {0};
            segy_set_field(th, SEGY_TR_FIELD_RECORD, 11 + shot);
            segy_set_field(th, SEGY_TR_SOURCE_GROUP_SCALAR, -10);
            segy_set_field(th, SEGY_TR_ELEV_SCALAR, -10);
            segy_set_field(th, SEGY_TR_SOURCE_X, 1005 + 1000 * shot);  /* 100.5 m + 100 shot */
            segy_set_field(th, SEGY_TR_SOURCE_Y, 2000);
            segy_set_field(th, SEGY_TR_SOURCE_DEPTH, 50);
            segy_set_field(th, SEGY_TR_GROUP_X, 200 * g);
            segy_set_field(th, SEGY_TR_GROUP_Y, 2000);
            segy_set_field(th, SEGY_TR_RECV_GROUP_ELEV, -30);           /* 3 m deep */
            segy_set_field(th, SEGY_TR_SAMPLE_COUNT, ns);
            segy_set_field(th, SEGY_TR_SAMPLE_INTER, 2000);
            cr_assert_eq(segy_write_traceheader(f, t, th, trace0, bsize), 0);
            for (int i = 0; i < ns; i++)
                tr[i] = (float)(1000 * shot + 100 * g + i);
            segy_from_native(5, ns, tr);
            cr_assert_eq(segy_writetrace(f, t, tr, trace0, bsize), 0);
        }
    free(tr);
    segy_close(f);
}

Test(tools_replay, segy_shots_by_field_record)
{
    char *dir = test_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/shots.segy", dir);
    write_shots(path, 50);
    const char *formats[2] = {"f32", "segy"};
    for (int fmt = 0; fmt < 2; fmt++) {
        struct sink s;
        pthread_t th;
        sink_start(&s, &th);
        const char *argv[] = {test_prog("seislive-replay"), "--zmq", s.endpoint, "--format",
                              formats[fmt], "--end", path, NULL};
        struct run_result r;
        cr_assert_eq(test_run(argv, 60, &r), 0);
        sink_stop(&s, th);
        cr_assert_eq(r.status, 0, "%s", r.err);
        test_run_free(&r);
        cr_assert(s.ended);
        cr_assert_eq(s.shots, 2);
        for (int k = 0; k < 2; k++) {
            struct shot *o = &s.shot[k];
            cr_assert_eq(o->id, 11 + k);
            cr_assert_eq(o->ntr, 3 + k);
            cr_assert_eq(o->ns, 50);
            cr_assert_float_eq(o->dt, 0.002, 1e-12);
            cr_assert_float_eq(o->src[0], 100.5 + 100 * k, 1e-9);
            cr_assert_float_eq(o->src[1], 200.0, 1e-9);
            cr_assert_float_eq(o->src[2], 5.0, 1e-9);
            for (int g = 0; g < o->ntr; g++) {
                cr_assert_float_eq(o->rec[3 * g], 20.0f * g, 1e-6);
                cr_assert_float_eq(o->rec[3 * g + 2], 3.0f, 1e-6, "format %s", formats[fmt]);
                for (int i = 0; i < 50; i += 7)
                    cr_assert_eq(o->data[(size_t)g * 50 + i], (float)(1000 * k + 100 * g + i));
            }
            free(o->rec);
        }
    }
    test_rmtree(dir);
    free(dir);
}

/* The shots of write_shots as a Seismic Unix file in the given byte order, written
 * byte by byte (SU: the same trace headers, no file header). */
static void write_su_shots(const char *path, int ns, bool le)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    unsigned char *tr = malloc(240 + 4 * (size_t)ns);
    for (int shot = 0; shot < 2; shot++)
        for (int g = 0; g < 3 + shot; g++) {
            memset(tr, 0, 240);
            struct { int byte, size; int32_t v; } fl[] = {
                {9, 4, 11 + shot}, {71, 2, -10}, {69, 2, -10}, {73, 4, 1005 + 1000 * shot},
                {77, 4, 2000}, {49, 4, 50}, {81, 4, 200 * g}, {85, 4, 2000}, {41, 4, -30},
                {115, 2, ns}, {117, 2, 2000}};
            for (size_t q = 0; q < sizeof fl / sizeof fl[0]; q++)
                for (int k = 0; k < fl[q].size; k++)
                    tr[fl[q].byte - 1 + (le ? k : fl[q].size - 1 - k)] =
                        (unsigned char)((uint32_t)fl[q].v >> (8 * k));
            for (int i = 0; i < ns; i++) {
                float v = (float)(1000 * shot + 100 * g + i);
                uint32_t u;
                memcpy(&u, &v, 4);
                for (int k = 0; k < 4; k++)
                    tr[240 + 4 * i + (le ? k : 3 - k)] = (unsigned char)(u >> (8 * k));
            }
            cr_assert_eq(fwrite(tr, 1, 240 + 4 * (size_t)ns, f), 240 + 4 * (size_t)ns);
        }
    free(tr);
    cr_assert_eq(fclose(f), 0);
}

/* Issue 12.3: seislive-replay reads Seismic Unix too, either byte order. */
Test(tools_replay, seismic_unix_shots_both_byte_orders)
{
    char *dir = test_tmpdir();
    char path[4200];
    for (int le = 0; le < 2; le++) {
        snprintf(path, sizeof path, "%s/shots%d.su", dir, le);
        write_su_shots(path, 50, le);
        struct sink s;
        pthread_t th;
        sink_start(&s, &th);
        const char *argv[] = {test_prog("seislive-replay"), "--zmq", s.endpoint, "--end", path,
                              NULL};
        struct run_result r;
        cr_assert_eq(test_run(argv, 60, &r), 0);
        sink_stop(&s, th);
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_assert(strstr(r.err, le ? "little-endian, detected" : "big-endian, detected") != NULL,
                  "the byte order is logged: %s", r.err);
        test_run_free(&r);
        cr_assert(s.ended);
        cr_assert_eq(s.shots, 2);
        for (int k = 0; k < 2; k++) {
            struct shot *o = &s.shot[k];
            cr_assert_eq(o->id, 11 + k);
            cr_assert_eq(o->ntr, 3 + k);
            cr_assert_eq(o->ns, 50);
            cr_assert_float_eq(o->dt, 0.002, 1e-12);
            cr_assert_float_eq(o->src[0], 100.5 + 100 * k, 1e-9);
            cr_assert_float_eq(o->src[2], 5.0, 1e-9);
            for (int g = 0; g < o->ntr; g++) {
                cr_assert_float_eq(o->rec[3 * g], 20.0f * g, 1e-6);
                cr_assert_float_eq(o->rec[3 * g + 2], 3.0f, 1e-6);
                for (int i = 0; i < 50; i++)
                    cr_assert_eq(o->data[(size_t)g * 50 + i], (float)(1000 * k + 100 * g + i));
            }
            free(o->rec);
        }
    }
    test_rmtree(dir);
    free(dir);
}
