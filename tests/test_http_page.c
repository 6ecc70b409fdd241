/* The status page in a real browser: headless Chromium (Debian's `chromium`, installed
 * by tools/install-deps.sh; missing is a failure, not a skip) loads http://.../ while a
 * small job runs.  rtm: the shots counter follows the shots and the section's image
 * source changes with each image; a screenshot's image area is not blank.  locate: the
 * event table gains a row per located event. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <png.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "io/wire.h"
#include "tests/http_client.h"
#include "tests/support.h"
#include "tests/test_locate_synth.h"
#include "tests/test_stream_support.h"

static const char *chromium(void)
{
    static const char *const names[] = {"/usr/bin/chromium", "/usr/lib/chromium/chromium", NULL};
    for (int i = 0; names[i]; i++)
        if (access(names[i], X_OK) == 0)
            return names[i];
    cr_assert_fail("chromium is missing: the page test needs it (tools/install-deps.sh installs it)");
    return NULL;
}

/* chromium --headless ... MODE URL, stdout to OUT; fails the test when it fails. */
static void run_chromium(const char *dir, const char *mode, const char *url, const char *out)
{
    char profile[600], log[600];
    snprintf(profile, sizeof profile, "--user-data-dir=%s/chromium", dir);
    snprintf(log, sizeof log, "%s/chromium.log", dir);
    fflush(NULL);
    pid_t pid = test_fork();
    if (pid == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644), fl = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        dup2(fd, 1);
        dup2(fl, 2);
        execl(chromium(), "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
              "--disable-dev-shm-usage", profile, "--window-size=1200,1400", "--timeout=1500", mode, url,
              (char *)NULL);
        _exit(127);
    }
    int st = ts_wait(pid, 20);
    cr_assert_eq(st, 0, "chromium %s %s failed (%d; see %s)", mode, url, st, log);
}

/* The page's DOM as Chromium built it (scripts run, the stream's first messages in). */
static char *dump_dom(const char *dir, const char *url)
{
    char out[600];
    snprintf(out, sizeof out, "%s/dom.html", dir);
    run_chromium(dir, "--dump-dom", url, out);
    FILE *f = fopen(out, "r");
    cr_assert(f);
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The text of the element with id ID (its first text), or "". */
static void text_of(const char *dom, const char *id, char *out, size_t len)
{
    char key[64];
    snprintf(key, sizeof key, "id=\"%s\"", id);
    const char *p = strstr(dom, key);
    out[0] = '\0';
    if (p && (p = strchr(p, '>'))) {
        size_t k = strcspn(p + 1, "<");
        snprintf(out, len, "%.*s", (int)(k < len - 1 ? k : len - 1), p + 1);
    }
}

/* The value of attribute ATTR of the element with id ID, or "". */
static void attr_of(const char *dom, const char *id, const char *attr, char *out, size_t len)
{
    char key[64], a[64];
    snprintf(key, sizeof key, "id=\"%s\"", id);
    snprintf(a, sizeof a, " %s=\"", attr);
    const char *p = strstr(dom, key), *end = p ? strchr(p, '>') : NULL, *q = p ? strstr(p, a) : NULL;
    out[0] = '\0';
    if (!q || q > end) { /* the attribute may come before the id */
        const char *start = p;
        while (start && start > dom && *start != '<')
            start--;
        q = start ? strstr(start, a) : NULL;
        if (q && q > end)
            q = NULL;
    }
    if (q) {
        q += strlen(a);
        size_t k = strcspn(q, "\"");
        snprintf(out, len, "%.*s", (int)(k < len - 1 ? k : len - 1), q);
    }
}

/* Dump the DOM until #units reads WANT (the stream's messages arrive after the page
 * loaded; a few tries absorb that), then return it. */
static char *dom_with_units(const char *dir, const char *url, long want)
{
    char units[64] = "";
    char *dom = NULL;
    for (int i = 0; i < 5; i++) {
        free(dom);
        dom = dump_dom(dir, url);
        text_of(dom, "units", units, sizeof units);
        if (atol(units) == want)
            break;
    }
    cr_assert_eq(atol(units), want, "the page shows %s shots, %ld were stacked", units, want);
    return dom;
}

static void push_shot(void *push, int k)
{
    struct shot s;
    ts_make_shot(k, 12, 60, &s);
    cr_assert_eq(wire_send_shot_f32(push, &s, k, 0), 0);
    ts_shot_free(&s);
}

static void wait_image(int port, long shots)
{
    for (int i = 0; i < 600 && http_image_shots(port, "pg") < shots; i++)
        usleep(100000);
    cr_assert_eq(http_image_shots(port, "pg"), shots);
}

/* The screenshot's pixels inside RECT (CSS pixels = screenshot pixels at scale 1):
 * distinct colours and the standard deviation of their grey level. */
static void pixel_stats(const char *png, const int rect[4], int *distinct, double *sd)
{
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    cr_assert(png_image_begin_read_from_file(&im, png), "%s: %s", png, im.message);
    im.format = PNG_FORMAT_RGB;
    unsigned char *px = malloc(PNG_IMAGE_SIZE(im));
    cr_assert(png_image_finish_read(&im, NULL, px, 0, NULL), "%s", im.message);
    cr_assert(rect[0] >= 0 && rect[1] >= 0 && rect[2] > 8 && rect[3] > 8 &&
                  rect[0] + rect[2] <= (int)im.width && rect[1] + rect[3] <= (int)im.height,
              "image area %d,%d %dx%d outside the %ux%u screenshot", rect[0], rect[1], rect[2], rect[3],
              im.width, im.height);
    static unsigned char seen[1 << 21]; /* a bit per 21-bit colour (7 bits a channel) */
    memset(seen, 0, sizeof seen);
    double s = 0, s2 = 0;
    long n = 0;
    *distinct = 0;
    for (int y = rect[1]; y < rect[1] + rect[3]; y++)
        for (int x = rect[0]; x < rect[0] + rect[2]; x++) {
            const unsigned char *p = px + 3 * ((size_t)y * im.width + (size_t)x);
            unsigned c = (unsigned)(p[0] >> 1) << 14 | (unsigned)(p[1] >> 1) << 7 | (unsigned)(p[2] >> 1);
            if (!(seen[c >> 3] & (1u << (c & 7)))) {
                seen[c >> 3] |= (unsigned char)(1u << (c & 7));
                (*distinct)++;
            }
            double g = (p[0] + p[1] + p[2]) / 3.0;
            s += g;
            s2 += g * g;
            n++;
        }
    *sd = sqrt(fmax(s2 / n - (s / n) * (s / n), 0));
    free(px);
    png_image_free(&im);
}

Test(http_page, rtm_page_in_chromium_follows_the_shots, .timeout = 120)
{
    chromium();
    char *dir = test_tmpdir();
    char ep_in[600], ep_out[600], log[600], url[128];
    pid_t pid = http_spawn_rtm(dir, "http = \"127.0.0.1:0\"\nhttp_token = \"pg\"\n", 0.2, ep_in, ep_out, log,
                               sizeof log);
    int port = http_wait_port(log, pid);
    cr_assert_gt(port, 0, "no status page in %s", log);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/?token=pg", port);
    void *z = zmq_ctx_new();
    void *push = ts_push(z, ep_in);
    char src[2][256];
    for (int k = 0; k < 2; k++) {
        push_shot(push, k);
        wait_image(port, k + 1);
        char *dom = dom_with_units(dir, url, k + 1);
        attr_of(dom, "img-y", "src", src[k], sizeof src[k]);
        cr_expect(strstr(src[k], "/image/y.png?seq=") != NULL, "the section's source is \"%s\"", src[k]);
        free(dom);
    }
    cr_expect_str_neq(src[0], src[1], "the section's source did not change with the image");
    printf("http_page: image source after shot 1 \"%s\", after shot 2 \"%s\"\n", src[0], src[1]);

    /* A screenshot: the slices' area (where the page says it drew them) is a picture. */
    char *dom = dom_with_units(dir, url, 2);
    int rect[3][4], nrect = 0;
    for (int k = 0; k < 3; k++) {
        char rect_s[64], attr[32];
        snprintf(attr, sizeof attr, "data-rect-%c", "xyz"[k]);
        attr_of(dom, "rtm-page", attr, rect_s, sizeof rect_s);
        if (sscanf(rect_s, "%d,%d,%d,%d", &rect[nrect][0], &rect[nrect][1], &rect[nrect][2], &rect[nrect][3]) == 4)
            nrect++;
    }
    free(dom);
    cr_assert_eq(nrect, 3, "the page said where %d of its 3 slices are", nrect);
    char shot[600], arg[700];
    snprintf(shot, sizeof shot, "%s/page.png", dir);
    snprintf(arg, sizeof arg, "--screenshot=%s", shot);
    char devnull[600];
    snprintf(devnull, sizeof devnull, "%s/shot.out", dir);
    run_chromium(dir, arg, url, devnull);
    int total = 0;
    double sd_max = 0;
    for (int k = 0; k < nrect; k++) {
        int distinct;
        double sd;
        pixel_stats(shot, rect[k], &distinct, &sd);
        printf("http_page: screenshot, slice %c: %dx%d at (%d, %d), %d colours, grey sd %.1f\n", "xyz"[k],
               rect[k][2], rect[k][3], rect[k][0], rect[k][1], distinct, sd);
        /* each slice, not only their sum: a picture (axes, colour bar, the section) */
        cr_expect_geq(distinct, 16, "slice %c has %d colours: blank", "xyz"[k], distinct);
        cr_expect_gt(sd, 5.0, "slice %c is uniform (grey sd %.2f)", "xyz"[k], sd);
        total += distinct;
        sd_max = fmax(sd_max, sd);
    }
    cr_expect_geq(total, 48, "the image areas have %d colours: blank", total);
    cr_expect_gt(sd_max, 5.0, "the image areas are uniform (grey sd at most %.2f)", sd_max);

    cr_assert_eq(wire_send_end(push, 0), 0);
    cr_assert_eq(ts_wait(pid, 60), 0, "seislive run failed (see %s)", log);
    zmq_close(push);
    zmq_ctx_term(z);
    if (!getenv("SEISLIVE_KEEP_PAGE_TEST"))
        test_rmtree(dir);
    free(dir);
}

#define NSTA 36
#define NS 4000
#define BLOCK 500

static long events_on_page(int port)
{
    struct http_resp r;
    long n = -1;
    if (http_get(port, "/events.json", "", &r) == 0 && r.code == 200) {
        json_t *a = json_loads(r.body, 0, NULL);
        n = json_is_array(a) ? (long)json_array_size(a) : -1;
        json_decref(a);
    }
    http_resp_free(&r);
    return n;
}

static int table_rows(const char *dom)
{
    const char *p = strstr(dom, "id=\"events\"");
    const char *body = p ? strstr(p, "<tbody>") : NULL, *end = body ? strstr(body, "</tbody>") : NULL;
    int n = 0;
    for (const char *q = body; q && (q = strstr(q + 1, "<tr>")) && q < end;)
        n++;
    return n;
}

/* The rows of the table with id ID. */
static int rows_of(const char *dom, const char *id)
{
    char key[64];
    snprintf(key, sizeof key, "id=\"%s\"", id);
    const char *p = strstr(dom, key);
    const char *body = p ? strstr(p, "<tbody>") : NULL, *end = body ? strstr(body, "</tbody>") : NULL;
    int n = 0;
    for (const char *q = body; q && (q = strstr(q + 1, "<tr>")) && q < end;)
        n++;
    return n;
}

/* The stations: /stations.json has them where the station file puts them, the status
 * lists the worst 32 and sums up the rest, the page draws each in both views and lists
 * the health table's rows. */
static void check_stations(const char *dir, const char *url, int port, const struct synth *s)
{
    struct http_resp r;
    cr_assert_eq(http_get(port, "/stations.json", "", &r), 0);
    cr_assert_eq(r.code, 200);
    json_t *a = json_loads(r.body, 0, NULL);
    http_resp_free(&r);
    cr_assert_eq(json_array_size(a), NSTA);
    for (int i = 0; i < NSTA; i++) {
        json_t *p = json_array_get(a, (size_t)i);
        cr_expect_float_eq(json_number_value(json_object_get(p, "x")), s->st.st[i].x, 1e-6, "station %d x", i);
        cr_expect_float_eq(json_number_value(json_object_get(p, "y")), s->st.st[i].y, 1e-6, "station %d y", i);
        cr_expect_float_eq(json_number_value(json_object_get(p, "z")), s->st.st[i].z, 1e-6, "station %d z", i);
    }
    json_decref(a);
    /* the final status (the run has ended: the stream's last sample is in) */
    json_t *st = NULL, *h = NULL;
    for (int i = 0; i < 100; i++) {
        cr_assert_eq(http_get(port, "/status.json", "", &r), 0);
        json_decref(st);
        st = r.code == 200 ? json_loads(r.body, 0, NULL) : NULL;
        http_resp_free(&r);
        h = json_object_get(st, "stations");
        if (h && strcmp(json_string_value(json_object_get(st, "health")), "stopped") == 0)
            break;
        usleep(100000);
    }
    cr_assert(json_is_object(h), "the status has no \"stations\"");
    cr_expect_eq(json_integer_value(json_object_get(h, "n")), NSTA);
    cr_expect_eq(json_array_size(json_object_get(h, "list")), 32);
    cr_expect_eq(json_integer_value(json_object_get(json_object_get(h, "more"), "n")), NSTA - 32);
    json_t *e0 = json_array_get(json_object_get(h, "list"), 0);
    /* every block whole: no gaps, the last sample the stream's last */
    cr_expect_eq(json_integer_value(json_object_get(e0, "gaps")), 0);
    cr_expect_float_eq(json_number_value(json_object_get(e0, "last")), 1e-9 * (double)s->t0_ns + (NS - 1) * s->dt,
                       1e-3);
    json_decref(st);
    char *dom = dump_dom(dir, url);
    char n[32];
    attr_of(dom, "plan", "data-stations", n, sizeof n);
    cr_expect_eq(atoi(n), NSTA, "the plan view drew %s stations of %d", n, NSTA);
    attr_of(dom, "section", "data-stations", n, sizeof n);
    cr_expect_eq(atoi(n), NSTA, "the section drew %s stations of %d", n, NSTA);
    int rows = rows_of(dom, "station-health");
    cr_expect_eq(rows, 33, "the health table has %d rows: 32 stations and one for the rest", rows);
    printf("http_page: locate: %d stations drawn in each view, %d health rows\n", atoi(n), rows);
    free(dom);
}

Test(http_page, locate_page_in_chromium_gains_event_rows, .timeout = 120)
{
    chromium();
    struct synth s = {0};
    static const double ev[2][4] = {{437.0, 612.0, 655.0, 5.0}, {320.0, 250.0, 530.0, 10.0}};
    s.nev = 2;
    memcpy(s.ev, ev, sizeof ev);
    synth_make(&s, NSTA, NS, 0.004, 3.0, 11);
    char *dir = test_tmpdir();
    char ep_in[512], log[600], url[128];
    pid_t pid = ts_spawn_locate_run(&s, dir, BLOCK, "http = \"127.0.0.1:0\"\nhttp_keep = 60.0\n", ep_in,
                                    sizeof ep_in, log, sizeof log);
    int port = http_wait_port(log, pid);
    cr_assert_gt(port, 0, "no status page in %s", log);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
    void *zc = zmq_ctx_new();
    void *push = ts_push(zc, ep_in);
    float *buf = malloc((size_t)NSTA * BLOCK * sizeof(float));
    long seen = 0;
    int checks = 0;
    for (int off = 0, seq = 0; off < NS; off += BLOCK, seq++) {
        for (int r = 0; r < NSTA; r++)
            memcpy(buf + (size_t)r * BLOCK, s.data + (size_t)r * 3 * NS + off, BLOCK * sizeof(float));
        struct wire_traces_hdr h = {.t0_ns = s.t0_ns + (int64_t)llround(off * s.dt * 1e9), .dt = s.dt,
                                    .nrec = NSTA, .ns = BLOCK, .format = WIRE_F32, .chan = NULL};
        cr_assert_eq(wire_send_traces_f32(push, &h, buf, seq, 0), 0);
        usleep(300000);
        long n = events_on_page(port);
        if (n > seen) { /* a new event: the page's table has a row for each */
            char *dom = dump_dom(dir, url);
            int rows = table_rows(dom);
            for (int t = 0; t < 4 && rows < n; t++) {
                free(dom);
                dom = dump_dom(dir, url);
                rows = table_rows(dom);
            }
            cr_expect_eq(rows, n, "%ld events published, the page's table has %d rows", n, rows);
            printf("http_page: locate: %ld events published, %d rows on the page\n", n, rows);
            free(dom);
            seen = n;
            checks++;
        }
    }
    cr_assert_eq(wire_send_end(push, 0), 0);
    /* The page stays up after the end (http_keep): the last event is there too. */
    for (int i = 0; i < 100 && events_on_page(port) < 2; i++)
        usleep(100000);
    long n = events_on_page(port);
    if (n > seen) {
        char *dom = dump_dom(dir, url);
        int rows = table_rows(dom);
        cr_expect_eq(rows, n, "%ld events published, the page's table has %d rows", n, rows);
        printf("http_page: locate (after the end): %ld events published, %d rows on the page\n", n, rows);
        free(dom);
        seen = n;
        checks++;
    }
    cr_expect_geq(seen, 2, "the run located %ld events, 2 were made", seen);
    cr_expect_geq(checks, 1);
    check_stations(dir, url, port, &s);
    /* The coherence trace: a peak per stacked window, published by a live run that
     * publishes even without [locate] coherence_dir. */
    struct http_resp cr;
    cr_assert_eq(http_get(port, "/coherence.json", "", &cr), 0);
    json_t *ca = json_loads(cr.body, 0, NULL);
    cr_expect(json_is_array(ca) && json_array_size(ca) >= 2, "coherence.json: %.200s", cr.body);
    double peak = 0;
    for (size_t i = 0; i < json_array_size(ca); i++)
        peak = fmax(peak, json_number_value(json_array_get(json_array_get(ca, i), 1)));
    printf("http_page: locate: %zu coherence windows on the page, largest peak %g\n", json_array_size(ca), peak);
    cr_expect_gt(peak, 0, "the coherence trace is flat: %.200s", cr.body);
    json_decref(ca);
    http_resp_free(&cr);
    kill(pid, SIGTERM); /* ends http_keep */
    cr_assert_eq(ts_wait(pid, 30), 0, "seislive run failed (see %s)", log);
    free(buf);
    int linger = 0;
    zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(push);
    zmq_ctx_term(zc);
    synth_free(&s);
    test_rmtree(dir);
    free(dir);
}
