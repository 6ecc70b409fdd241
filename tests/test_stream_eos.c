/* End of stream is reliable (issue 12): a sender that queues more units than the
 * receiver can take at once, then the end, then closes its socket, must not lose the end
 * when the receiver is slow to drain (before the fix: the socket's linger ran out, the
 * queued units and the end were dropped, and `seislive run` waited for ever). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "io/wire.h"
#include "stream/error.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

#define NTR 40
#define NS 240

Test(stream_eos, end_survives_a_slow_receiver_and_a_short_sender_linger, .timeout = 180)
{
    char *dir = test_tmpdir();
    char text[4096], ep_in[512], log[600];
    snprintf(ep_in, sizeof ep_in, "ipc://%s/in", dir);
    snprintf(log, sizeof log, "%s/run.log", dir);
    snprintf(text, sizeof text,
             TS_SMALL_RTM_CFG "[input]\nkind = \"zmq\"\nendpoint = \"%s\"\nslots = 2\n"
             "slot_mib = 1.0\n[output]\ndir = \"%s/out\"\n[log]\nlevel = \"info\"\n", ep_in, dir);
    char *cfgpath = test_write_file(dir, "rtm.toml", text);
    pid_t pid = ts_spawn_run(cfgpath, log);
    for (int i = 0; i < 500 && access(ep_in + strlen("ipc://"), F_OK) != 0; i++)
        usleep(10000);
    /* The sender of a tool: everything queued at once, a short linger, then closed.
     * 20 shots of 38 KiB do not fit the receiver's slots, queue and socket buffers:
     * most of them (and the end) are still in the sender's queue when it closes. */
    void *z = zmq_ctx_new();
    void *push = zmq_socket(z, ZMQ_PUSH);
    int linger = 200;
    cr_assert_eq(zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof linger), 0);
    cr_assert_eq(zmq_connect(push, ep_in), 0);
    const int N = 20;
    for (int k = 0; k < N; k++) {
        struct shot s;
        ts_make_shot(k, NTR, NS, &s);
        cr_assert_eq(wire_send_shot_f32(push, &s, k, 0), 0);
        ts_shot_free(&s);
    }
    cr_assert_eq(wire_send_end_wait(z, push, 120000, NULL), 0, "%s", err_msg());
    zmq_close(push);
    zmq_ctx_term(z);
    int st = ts_wait(pid, 90);
    if (st != 0) {
        FILE *f = fopen(log, "r");
        char buf[8192] = "";
        if (f) {
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            buf[n] = '\0';
            fclose(f);
        }
        cr_assert_fail("seislive run did not end (%d): the end of stream was lost\n%s", st, buf);
    }
    cr_assert_eq(ts_count_in_file(log, "end of stream"), 1);
    /* every shot arrived: none was dropped with the sender's queue */
    char want[64];
    snprintf(want, sizeof want, "units %d,", N);
    cr_assert_geq(ts_count_in_file(log, want), 1, "not all %d shots were processed", N);
    free(cfgpath);
    test_rmtree(dir);
    free(dir);
}
