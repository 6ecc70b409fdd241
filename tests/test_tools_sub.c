/* seislive-sub against a publisher in this test (the wire format of io/wire.h): the
 * image it writes is a valid PNG of the expected size, its SEG-Y reads back with
 * segyio with the right geometry and samples, the raw + JSON copy is exact, and event
 * messages become event lines. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <png.h>
#include <pthread.h>
#include <segyio/segy.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "io/png_slices.h"
#include "io/wire.h"
#include "tests/support.h"

enum { NX = 12, NY = 7, NZ = 20 };

struct pub_arg {
    const char *endpoint;
    float *vol;
    atomic_int stop;
};

static void send_frames(void *sock, const char *topic, const char *hdr, const void *p, size_t n)
{
    zmq_send(sock, topic, strlen(topic), ZMQ_SNDMORE);
    zmq_send(sock, hdr, strlen(hdr), p ? ZMQ_SNDMORE : 0);
    if (p)
        zmq_send(sock, p, n, 0);
}

/* Wait for the subscriber's image and event subscriptions (XPUB shows them), then
 * publish a partial image, an event and the final image, once, in that order. */
static void *publisher(void *arg)
{
    struct pub_arg *a = arg;
    void *ctx = zmq_ctx_new();
    void *sock = zmq_socket(ctx, ZMQ_XPUB);
    int linger = 0, timeout = 200;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    cr_assert_eq(zmq_bind(sock, a->endpoint), 0);
    int subs = 0;
    while (subs != 3 && !atomic_load(&a->stop)) {
        char buf[64];
        int n = zmq_recv(sock, buf, sizeof buf, 0);
        if (n == 1 + 5 && buf[0] == 1 && memcmp(buf + 1, "image", 5) == 0)
            subs |= 1;
        if (n == 1 + 5 && buf[0] == 1 && memcmp(buf + 1, "event", 5) == 0)
            subs |= 2;
    }
    uint64_t seq = 0;
    if (!atomic_load(&a->stop)) {
        struct wire_volume_hdr h = {seq++, 3, {NX, NY, NZ}, {10, 20, 5}, {100, 200, 0}, false,
                                    false, {0, 0, 0}, 0};
        char *js = wire_encode_volume(&h);
        send_frames(sock, WIRE_TOPIC_IMAGE, js, a->vol, sizeof(float) * NX * NY * NZ);
        free(js);
        struct wire_event e = {seq++, 1767225600500000000LL, 150, 260, 45, 7.5, 0};
        js = wire_encode_event(&e);
        send_frames(sock, WIRE_TOPIC_EVENT, js, NULL, 0);
        free(js);
        h.seq = seq++;
        h.units = 4;
        h.final = true;
        js = wire_encode_volume(&h);
        send_frames(sock, WIRE_TOPIC_IMAGE, js, a->vol, sizeof(float) * NX * NY * NZ);
        free(js);
    }
    while (!atomic_load(&a->stop))
        usleep(20000);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return NULL;
}

Test(tools_sub, writes_png_segy_raw_and_events)
{
    char *dir = test_tmpdir();
    float *vol = malloc(sizeof(float) * NX * NY * NZ);
    for (int i = 0; i < NX * NY * NZ; i++)
        vol[i] = (float)((i * 37) % 101) - 50.0f;
    char endpoint[4200];
    snprintf(endpoint, sizeof endpoint, "ipc://%s/pub", dir); /* no fixed TCP port */
    struct pub_arg a = {endpoint, vol, 0};
    pthread_t th;
    pthread_create(&th, NULL, publisher, &a);

    char out[4200];
    snprintf(out, sizeof out, "%s/sub", dir);
    const char *argv[] = {test_prog("seislive-sub"), "-o", out, "--plain", "--scale", "2", "-q",
                          "--idle", "30", endpoint, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    atomic_store(&a.stop, 1);
    pthread_join(th, NULL);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.out, "final image: 4 shots, 12 x 7 x 20"), "%s", r.out);

    /* PNG: valid, of the expected size */
    const struct { const char *name; int w, h; } pngs[] = {
        {"image_final_z.png", NX, NY}, {"image_final_y.png", NX, NZ}, {"image_final_x.png", NY, NZ}};
    for (int i = 0; i < 3; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", out, pngs[i].name);
        png_image img;
        memset(&img, 0, sizeof img);
        img.version = PNG_IMAGE_VERSION;
        cr_assert(png_image_begin_read_from_file(&img, path), "%s: %s", path, img.message);
        cr_assert_eq((int)img.width, 2 * pngs[i].w, "%s", path);
        cr_assert_eq((int)img.height, 2 * pngs[i].h, "%s", path);
        img.format = PNG_FORMAT_RGB;
        void *buf = malloc(PNG_IMAGE_SIZE(img));
        cr_assert(png_image_finish_read(&img, NULL, buf, 0, NULL));
        free(buf);
    }

    /* SEG-Y: geometry and samples through segyio */
    char path[4400];
    snprintf(path, sizeof path, "%s/image_final.segy", out);
    segy_file *f = segy_open(path, "rb");
    cr_assert_not_null(f, "%s", path);
    char bin[SEGY_BINARY_HEADER_SIZE];
    cr_assert_eq(segy_binheader(f, bin), SEGY_OK);
    cr_assert_eq(segy_samples(bin), NZ);
    cr_assert_eq(segy_format(bin), SEGY_IEEE_FLOAT_4_BYTE);
    long trace0 = segy_trace0(bin);
    int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, NZ);
    int traces = 0;
    cr_assert_eq(segy_traces(f, &traces, trace0, bsize), SEGY_OK);
    cr_assert_eq(traces, NX * NY);
    int sorting = -1, ils = 0, xls = 0;
    cr_assert_eq(segy_sorting(f, SEGY_TR_INLINE, SEGY_TR_CROSSLINE, SEGY_TR_OFFSET, &sorting,
                              trace0, bsize), SEGY_OK);
    cr_assert_eq(segy_lines_count(f, SEGY_TR_INLINE, SEGY_TR_CROSSLINE, sorting, 1, &ils, &xls,
                                  trace0, bsize), SEGY_OK);
    cr_assert_eq(ils, NY, "inlines %d", ils);
    cr_assert_eq(xls, NX, "crosslines %d", xls);
    float dz = 0;
    cr_assert_eq(segy_sample_interval(f, 0, &dz), SEGY_OK);
    cr_assert_float_eq(dz, 5000.0f, 1e-3); /* dz = 5 m, in mm */
    /* trace of column (ix = 5, iy = 3): coordinates and samples */
    int t = 3 * NX + 5;
    char thdr[SEGY_TRACE_HEADER_SIZE];
    cr_assert_eq(segy_traceheader(f, t, thdr, trace0, bsize), SEGY_OK);
    int32_t v, sc;
    segy_get_field(thdr, SEGY_TR_CDP_X, &v);
    segy_get_field(thdr, SEGY_TR_SOURCE_GROUP_SCALAR, &sc);
    cr_assert_eq(sc, -100);
    cr_assert_eq(v, (100 + 5 * 10) * 100);
    segy_get_field(thdr, SEGY_TR_CDP_Y, &v);
    cr_assert_eq(v, (200 + 3 * 20) * 100);
    float tr[NZ];
    cr_assert_eq(segy_readtrace(f, t, tr, trace0, bsize), SEGY_OK);
    segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, NZ, tr);
    for (int z = 0; z < NZ; z++)
        cr_assert_eq(tr[z], vol[(z * NY + 3) * NX + 5], "sample %d", z);
    segy_close(f);

    /* raw + JSON */
    snprintf(path, sizeof path, "%s/image_final.f32", out);
    FILE *rf = fopen(path, "rb");
    cr_assert_not_null(rf);
    float *back = malloc(sizeof(float) * NX * NY * NZ);
    cr_assert_eq(fread(back, sizeof(float), NX * NY * NZ, rf), (size_t)(NX * NY * NZ));
    fclose(rf);
    cr_assert_eq(memcmp(back, vol, sizeof(float) * NX * NY * NZ), 0);
    free(back);
    snprintf(path, sizeof path, "%s/image_final.json", out);
    json_t *js = json_load_file(path, 0, NULL);
    cr_assert_not_null(js);
    int n0, n1, n2, fin;
    cr_assert_eq(json_unpack(js, "{s:[iii], s:b}", "n", &n0, &n1, &n2, "final", &fin), 0);
    cr_assert(n0 == NX && n1 == NY && n2 == NZ && fin);
    json_decref(js);

    /* event line and events.jsonl */
    cr_assert_not_null(strstr(r.out, "2026-01-01T00:00:00.500000Z x=150.0 y=260.0 z=45.0"), "%s", r.out);
    snprintf(path, sizeof path, "%s/events.jsonl", out);
    cr_assert_eq(access(path, R_OK), 0);

    test_run_free(&r);
    free(vol);
    test_rmtree(dir);
    free(dir);
}
