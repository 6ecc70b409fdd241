/* Log rotation: while `seislive run` runs, the log file ([log] file) is renamed as
 * logrotate does and SIGHUP is sent; the process keeps running, the lines after the
 * signal land in a fresh file at the configured path, and the renamed file keeps the
 * lines written before.  Without a [log] file, SIGHUP (`systemctl reload`) does not
 * kill the service either. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "io/wire.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

#define NTR 12
#define NS 60

static const char *rtm_cfg = TS_SMALL_RTM_CFG;

/* Wait up to TIMEOUT_S for a line of PATH containing NEEDLE. */
static int wait_line(const char *path, const char *needle, int timeout_s)
{
    for (int i = 0; i < timeout_s * 50; i++) {
        if (ts_count_in_file(path, needle) > 0)
            return 0;
        usleep(20000);
    }
    return -1;
}

/* Every byte of PATH belongs to a complete line (nothing torn by the reopen). */
static void assert_whole_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s missing", path);
    int c, last = '\n';
    long n = 0;
    while ((c = fgetc(f)) != EOF) {
        last = c;
        n++;
    }
    fclose(f);
    cr_assert_gt(n, 0, "%s is empty", path);
    cr_assert_eq(last, '\n', "%s ends in the middle of a line", path);
}

static void send_shot(void *push, int k)
{
    struct shot s;
    ts_make_shot(k, NTR, NS, &s);
    cr_assert_eq(wire_send_shot_f32(push, &s, k, 0), 0);
    ts_shot_free(&s);
}

Test(stream_log, sighup_reopens_the_log_file_after_rotation, .timeout = 120)
{
    char *dir = test_tmpdir();
    char text[4096], ep_in[512], ep_out[512], logf[512], rotated[520], err[512];
    snprintf(ep_in, sizeof ep_in, "ipc://%s/in", dir);
    snprintf(ep_out, sizeof ep_out, "ipc://%s/out", dir);
    snprintf(logf, sizeof logf, "%s/seislive.log", dir);
    snprintf(rotated, sizeof rotated, "%s.1", logf);
    snprintf(err, sizeof err, "%s/stderr.txt", dir);
    snprintf(text, sizeof text,
             "%s[input]\nkind = \"zmq\"\nendpoint = \"%s\"\nslots = 2\nslot_mib = 1.0\n"
             "[output]\nendpoint = \"%s\"\ndir = \"%s/files\"\n"
             "[log]\nlevel = \"info\"\nfile = \"%s\"\n",
             rtm_cfg, ep_in, ep_out, dir, logf);
    char *cfgpath = test_write_file(dir, "rtm.toml", text);
    pid_t pid = ts_spawn_run(cfgpath, err);
    void *z = zmq_ctx_new();
    void *sub = ts_sub(z, ep_out, "image", 0);
    void *push = ts_push(z, ep_in);
    cr_assert_eq(wait_line(logf, " slots of ", 30), 0, "the run did not start (see %s)", err);

    /* Before the rotation: one shot migrated and published. */
    send_shot(push, 0);
    struct ts_msg m;
    cr_assert_eq(ts_recv_image(sub, 1, false, &m, 60000), 0, "no image after shot 0");
    ts_msg_free(&m);
    int before = ts_count_in_file(logf, "");

    /* logrotate: move the file away, then postrotate `kill -HUP`. */
    cr_assert_eq(rename(logf, rotated), 0);
    cr_assert_eq(kill(pid, SIGHUP), 0);
    /* The idle runtime reopens from its main loop, without waiting for a line to log. */
    cr_assert_eq(wait_line(logf, "reopened", 10), 0, "no fresh %s after SIGHUP", logf);

    /* After the rotation: the process lives on and its lines go to the new file. */
    send_shot(push, 1);
    cr_assert_eq(ts_recv_image(sub, 2, false, &m, 60000), 0, "no image after shot 1: SIGHUP killed the run?");
    ts_msg_free(&m);
    cr_assert_eq(wire_send_end(push, 0), 0);
    cr_assert_eq(ts_wait(pid, 60), 0, "seislive run did not exit 0 after SIGHUP and the end of input");

    /* The old file: exactly the lines written before the signal, nothing after. */
    cr_assert_eq(ts_count_in_file(rotated, ""), before, "lines reached the rotated file after SIGHUP");
    cr_assert_eq(ts_count_in_file(rotated, "job \"") > 0 ? 1 : 0, 1, "the start line is not in the old file");
    cr_assert_eq(ts_count_in_file(rotated, "receiving on"), 1);
    cr_assert_eq(ts_count_in_file(rotated, "reopened"), 0);
    cr_assert_eq(ts_count_in_file(rotated, "end of stream"), 0);
    assert_whole_lines(rotated);

    /* The new file at the configured path: the reopen note first, then the rest of the run. */
    FILE *f = fopen(logf, "r");
    cr_assert(f);
    char first[4096] = "";
    cr_assert(fgets(first, sizeof first, f));
    fclose(f);
    cr_assert(strstr(first, "SIGHUP: log file") && strstr(first, "reopened"), "first line: %s", first);
    cr_assert_eq(ts_count_in_file(logf, "end of stream"), 1, "the end of the run is not in the new file");
    cr_assert_eq(ts_count_in_file(logf, "receiving on"), 0, "the new file repeats old lines");
    assert_whole_lines(logf);
    /* stderr got every line of both files. */
    cr_assert_eq(ts_count_in_file(err, "receiving on"), 1);
    cr_assert_eq(ts_count_in_file(err, "end of stream"), 1);

    zmq_close(push);
    zmq_close(sub);
    zmq_ctx_term(z);
    free(cfgpath);
    test_rmtree(dir);
    free(dir);
}

Test(stream_log, sighup_without_log_file_keeps_the_service_running, .timeout = 60)
{
    char *dir = test_tmpdir();
    char text[4096], ep_in[512], err[512];
    snprintf(ep_in, sizeof ep_in, "ipc://%s/in", dir);
    snprintf(err, sizeof err, "%s/stderr.txt", dir);
    snprintf(text, sizeof text,
             "%s[input]\nkind = \"zmq\"\nendpoint = \"%s\"\nslots = 2\nslot_mib = 1.0\n"
             "[output]\ndir = \"%s/files\"\n[log]\nlevel = \"info\"\n",
             rtm_cfg, ep_in, dir);
    char *cfgpath = test_write_file(dir, "rtm.toml", text);
    pid_t pid = ts_spawn_run(cfgpath, err);
    cr_assert_eq(wait_line(err, " slots of ", 30), 0, "the run did not start (see %s)", err);
    cr_assert_eq(kill(pid, SIGHUP), 0);
    cr_assert_eq(wait_line(err, "no [log] file to reopen", 10), 0, "SIGHUP not handled");
    cr_assert_eq(waitpid(pid, NULL, WNOHANG), 0, "SIGHUP ended the run");
    cr_assert_eq(kill(pid, SIGTERM), 0);
    cr_assert_eq(ts_wait(pid, 30), 0);
    free(cfgpath);
    test_rmtree(dir);
    free(dir);
}
