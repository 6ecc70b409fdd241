#include "tests/test_stream_support.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <segyio/segy.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "conf/config.h"
#include "io/wire.h"
#include "kernels/backend.h"
#include "stream/job_rtm.h"
#include "stream/error.h"
#include "stream/log.h"
#include "stream/signals.h"
#include "tests/support.h"
#include "tests/test_locate_synth.h"

void ts_make_shot(int k, int ntr, int ns, struct shot *s)
{
    s->id = 100 + k;
    s->ns = ns;
    s->dt = 0.004;
    s->ntr = ntr;
    s->src[0] = 10.0 * k;
    s->src[1] = 5.0;
    s->src[2] = 2.0;
    s->rec = malloc((size_t)ntr * 3 * sizeof(float));
    s->data = malloc((size_t)ntr * (size_t)ns * sizeof(float));
    for (int i = 0; i < ntr; i++) {
        s->rec[3 * i + 0] = (float)((i * 7 + k * 3) % 80);
        s->rec[3 * i + 1] = (float)((i * 13) % 60);
        s->rec[3 * i + 2] = 0.0f;
        for (int t = 0; t < ns; t++)
            s->data[(size_t)i * ns + t] =
                (float)(sin(0.3 * t + 0.7 * i + k) * exp(-0.01 * t) * (1 + k % 3));
    }
}

void ts_shot_free(struct shot *s)
{
    free(s->rec);
    free(s->data);
    s->rec = s->data = NULL;
}

static void energy_image(const struct shot *s, float *img)
{
    memset(img, 0, TS_CELLS * sizeof(float));
    float w = (float)(1.0 + 0.001 * s->src[0]);
    for (int i = 0; i < s->ntr; i++) {
        int ix = (int)lrintf(s->rec[3 * i] / 10.0f), iy = (int)lrintf(s->rec[3 * i + 1] / 10.0f);
        ix = ix < 0 ? 0 : ix >= TS_NX ? TS_NX - 1 : ix;
        iy = iy < 0 ? 0 : iy >= TS_NY ? TS_NY - 1 : iy;
        for (int t = 0; t < s->ns; t++) {
            int iz = t * TS_NZ / s->ns;
            float v = s->data[(size_t)i * s->ns + t];
            img[((size_t)iz * TS_NY + iy) * TS_NX + ix] += w * v * v;
        }
    }
}

int ts_energy_migrate(void *ctx, const struct shot *shot, struct image_stack *stack)
{
    (void)ctx;
    float *img = malloc(TS_CELLS * sizeof(float));
    energy_image(shot, img);
    struct image_patch p = {.off = {0, 0, 0}, .n = {TS_NX, TS_NY, TS_NZ}, .image = img};
    int rc = image_stack_add(stack, shot->id, &p);
    free(img);
    return rc;
}

void ts_batch_image(const int *ks, int n, int ntr, int ns, float *out)
{
    struct image_stack st;
    int gn[3] = {TS_NX, TS_NY, TS_NZ};
    double d[3] = {10, 10, 10}, o[3] = {0, 0, 0};
    image_stack_init(&st, gn, d, o);
    for (int j = 0; j < n; j++) {
        struct shot s;
        ts_make_shot(ks[j], ntr, ns, &s);
        ts_energy_migrate(NULL, &s, &st);
        ts_shot_free(&s);
    }
    image_stack_render(&st, false, out);
    image_stack_free(&st);
}

int ts_write_segy(const char *path, const int *ks, int n, int ntr, int ns, int format)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -errno;
    char head[3600];
    memset(head, ' ', 3200);
    memset(head + 3200, 0, 400);
    segy_set_bfield(head + 3200, SEGY_BIN_INTERVAL, 4000);
    segy_set_bfield(head + 3200, SEGY_BIN_SAMPLES, ns);
    segy_set_bfield(head + 3200, SEGY_BIN_FORMAT, format);
    fwrite(head, 1, sizeof head, f);
    char th[240];
    float *buf = malloc((size_t)ns * 4);
    for (int j = 0; j < n; j++) {
        struct shot s;
        ts_make_shot(ks[j], ntr, ns, &s);
        for (int i = 0; i < ntr; i++) {
            memset(th, 0, sizeof th);
            segy_set_field(th, SEGY_TR_FIELD_RECORD, (int32_t)s.id);
            segy_set_field(th, SEGY_TR_SOURCE_GROUP_SCALAR, -10);
            segy_set_field(th, SEGY_TR_ELEV_SCALAR, -100);
            segy_set_field(th, SEGY_TR_SOURCE_X, (int32_t)lrint(s.src[0] * 10));
            segy_set_field(th, SEGY_TR_SOURCE_Y, (int32_t)lrint(s.src[1] * 10));
            segy_set_field(th, SEGY_TR_SOURCE_DEPTH, (int32_t)lrint(s.src[2] * 100));
            segy_set_field(th, SEGY_TR_GROUP_X, (int32_t)lrint(s.rec[3 * i] * 10));
            segy_set_field(th, SEGY_TR_GROUP_Y, (int32_t)lrint(s.rec[3 * i + 1] * 10));
            segy_set_field(th, SEGY_TR_RECV_GROUP_ELEV, (int32_t)lrint(-s.rec[3 * i + 2] * 100));
            segy_set_field(th, SEGY_TR_SAMPLE_COUNT, ns);
            segy_set_field(th, SEGY_TR_SAMPLE_INTER, 4000);
            memcpy(buf, s.data + (size_t)i * ns, (size_t)ns * 4);
            segy_from_native(format, ns, buf);
            fwrite(th, 1, sizeof th, f);
            fwrite(buf, 4, (size_t)ns, f);
        }
        ts_shot_free(&s);
    }
    free(buf);
    return fclose(f) == 0 ? 0 : -EIO;
}

pid_t ts_spawn_job(const char *config, const char *log)
{
    fflush(NULL);
    pid_t pid = test_fork();
    if (pid != 0)
        return pid;
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 2);
    close(fd);
    struct sl_config cfg;
    if (config_load_string(config, "test.toml", &cfg) < 0) {
        fprintf(stderr, "config: %s\n", err_msg());
        _exit(2);
    }
    log_set_level((enum log_level)cfg.log.level);
    signals_install(); /* SIGTERM/SIGINT: finish, checkpoint, publish, exit 0 */
    struct sl_device dev;
    backend_select("cpu", &dev);
    struct shot_job j = {.name = "rtm", .n = {TS_NX, TS_NY, TS_NZ}, .d = {10, 10, 10},
                         .fingerprint = config_fingerprint(&cfg), .migrate = ts_energy_migrate};
    int rc = shot_job_run(&cfg, &dev, &j, NULL);
    if (rc < 0)
        fprintf(stderr, "job failed: %s\n", err_msg());
    config_free(&cfg);
    _exit(rc < 0 ? 1 : 0);
}

pid_t ts_spawn_run(const char *cfgpath, const char *stderr_path)
{
    fflush(NULL);
    pid_t pid = test_fork();
    if (pid == 0) {
        if (!freopen(stderr_path, "w", stderr))
            _exit(126);
        /* stdout too: a child must never hold the test runner's output open */
        dup2(2, 1);
        execl(test_prog("seislive"), "seislive", "run", "-c", cfgpath, (char *)NULL);
        _exit(127);
    }
    return pid;
}

int ts_wait(pid_t pid, int timeout_s)
{
    for (int i = 0; i < timeout_s * 50; i++) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        struct timespec ts = {0, 20000000L};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

void *ts_push(void *zctx, const char *endpoint)
{
    void *s = zmq_socket(zctx, ZMQ_PUSH);
    int hwm = 1000, linger = 2000;
    zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_connect(s, endpoint);
    return s;
}

void *ts_sub(void *zctx, const char *endpoint, const char *topic, int rcvhwm)
{
    void *s = zmq_socket(zctx, ZMQ_SUB);
    int linger = 0;
    if (rcvhwm > 0)
        zmq_setsockopt(s, ZMQ_RCVHWM, &rcvhwm, sizeof rcvhwm);
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(s, ZMQ_SUBSCRIBE, topic, strlen(topic));
    zmq_connect(s, endpoint);
    return s;
}

int ts_recv(void *sub, struct ts_msg *m, int timeout_ms)
{
    memset(m, 0, sizeof *m);
    zmq_pollitem_t it = {sub, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&it, 1, timeout_ms) <= 0)
        return -1;
    int more = 1;
    while (more) {
        zmq_msg_t f;
        zmq_msg_init(&f);
        zmq_msg_recv(&f, sub, 0);
        more = zmq_msg_more(&f);
        size_t n = zmq_msg_size(&f);
        if (m->nframes == 0)
            snprintf(m->topic, sizeof m->topic, "%.*s", (int)n, (char *)zmq_msg_data(&f));
        else if (m->nframes == 1) {
            m->header = malloc(n + 1);
            memcpy(m->header, zmq_msg_data(&f), n);
            m->header[n] = '\0';
        } else if (m->nframes == 2) {
            m->payload = malloc(n + 1);
            memcpy(m->payload, zmq_msg_data(&f), n);
            m->payload_len = n;
        }
        m->nframes++;
        zmq_msg_close(&f);
    }
    return 0;
}

void ts_msg_free(struct ts_msg *m)
{
    free(m->header);
    free(m->payload);
    memset(m, 0, sizeof *m);
}

int ts_recv_image(void *sub, int64_t shots, bool final, struct ts_msg *m, int timeout_ms)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        int left = timeout_ms - (int)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0 || ts_recv(sub, m, left) < 0)
            return -1;
        if (strcmp(m->topic, "image") == 0) {
            struct wire_volume_hdr h;
            if (wire_parse_volume(m->header, strlen(m->header), &h) == 0 && h.units == shots &&
                (!final || h.final))
                return 0;
        }
        ts_msg_free(m);
    }
}

int ts_count_in_file(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, needle))
            n++;
    fclose(f);
    return n;
}

pid_t ts_spawn_locate_run(const struct synth *s, const char *dir, int block, const char *output_extra,
                          char *ep_in, size_t ep_len, char *log, size_t log_len)
{
    size_t cap = 64 * (size_t)s->st.n + 1;
    char *sta = calloc(1, cap), line[128];
    if (!sta)
        return -1;
    for (int i = 0; i < s->st.n; i++) {
        snprintf(line, sizeof line, "%s %.17g %.17g %.17g\n", s->st.st[i].name, s->st.st[i].x,
                 s->st.st[i].y, s->st.st[i].z);
        strcat(sta, line);
    }
    char *stpath = test_write_file(dir, "stations.txt", sta);
    free(sta);
    char text[4096];
    snprintf(ep_in, ep_len, "ipc://%s/in", dir);
    snprintf(log, log_len, "%s/run.log", dir);
    snprintf(text, sizeof text,
             "[job]\nkind = \"locate\"\n"
             "[input]\nkind = \"zmq\"\nendpoint = \"%s\"\nslots = 2\nslot_mib = 1.0\n"
             "[output]\ndir = \"%s/files\"\n%s"
             "[locate]\nstations = \"%s\"\nphases = \"P\"\ntraveltime = \"homogeneous\"\nvp = 3500.0\n"
             "vs = 2000.0\ngrid_n = [9, 9, 6]\ngrid_d = [100.0, 100.0, 100.0]\ngrid_o = [0.0, 0.0, 400.0]\n"
             "cf = \"envelope\"\nsta = 0.06\nlta = 1.0\nband = [4.0, 30.0]\nnormalize = \"count\"\n"
             "block_samples = %d\ntrigger = \"mad\"\nthreshold = 15.0\nmin_interval = 1.0\nmad_window = 8.0\n"
             "[runtime]\ndevice = \"cpu\"\n[log]\nlevel = \"info\"\n",
             ep_in, dir, output_extra ? output_extra : "", stpath, block);
    char *cfgpath = test_write_file(dir, "locate.toml", text);
    pid_t pid = ts_spawn_run(cfgpath, log);
    free(cfgpath);
    free(stpath);
    return pid;
}
