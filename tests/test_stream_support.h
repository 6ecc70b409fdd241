/* test_stream_support — what the runtime tests share: deterministic synthetic shots,
 * an independent per-shot "migration" (trace energy binned into the grid) and its
 * batch stack (the oracle), a SEG-Y writer, the shot job run in a child process, and
 * ZeroMQ sender / subscriber helpers over ipc:// endpoints in a temp folder. */
#ifndef SEISLIVE_TEST_STREAM_SUPPORT_H
#define SEISLIVE_TEST_STREAM_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/shot.h"
#include "stream/image_stack.h"

/* A small rtm job on the CPU: its start costs little, and it idles on its ZeroMQ input.
 * The text ends inside [runtime], so a test may add keys of that table, then its own. */
#define TS_SMALL_RTM_CFG                                                                        \
    "[job]\nkind = \"rtm\"\n"                                                                    \
    "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [24, 20, 14]\nd = [10.0, 10.0, 10.0]\n" \
    "[propagator]\norder = 4\nt_max = 0.24\npml_width = [5, 5, 5, 5, 5, 5]\nf_peak = 12.0\n"     \
    "[rtm]\nstrategy = \"full\"\naperture = 0.0\n"                                              \
    "[runtime]\ndevice = \"cpu\"\n"

#define TS_NX 8
#define TS_NY 6
#define TS_NZ 10
#define TS_CELLS (TS_NX * TS_NY * TS_NZ)

/* Shot K (id 100 + K): ntr traces of ns samples; malloc'd arrays (ts_shot_free). */
void ts_make_shot(int k, int ntr, int ns, struct shot *s);
void ts_shot_free(struct shot *s);

/* The test's migration: each trace's squared samples, binned in depth by time, at the
 * receiver's cell, scaled by the source position.  Adds into STACK. */
int ts_energy_migrate(void *ctx, const struct shot *shot, struct image_stack *stack);
/* The batch result: the same shots stacked in order, no runtime involved. */
void ts_batch_image(const int *ks, int n, int ntr, int ns, float *out);

/* Write shots ks[0..n) into a SEG-Y file, sample format 1 (IBM) or 5 (IEEE). */
int ts_write_segy(const char *path, const int *ks, int n, int ntr, int ns, int format);

/* Fork a child that loads CONFIG (TOML text) and runs the shot job with the energy
 * migration on the CPU; its stderr goes to LOG.  Returns the pid. */
pid_t ts_spawn_job(const char *config, const char *log);
/* `seislive run -c CFGPATH` (the program of this build) as a child process, its stderr
 * in STDERR_PATH. */
pid_t ts_spawn_run(const char *cfgpath, const char *stderr_path);
/* Wait for PID up to TIMEOUT_S; its exit status, or -1 on timeout (then it is killed). */
int ts_wait(pid_t pid, int timeout_s);

/* A PUSH socket connected to ENDPOINT (HWM 1000, linger 2 s).  */
void *ts_push(void *zctx, const char *endpoint);
/* A SUB socket connected to ENDPOINT, subscribed to TOPIC ("" = all). */
void *ts_sub(void *zctx, const char *endpoint, const char *topic, int rcvhwm);

struct ts_msg {
    char topic[32];
    char *header;        /* NUL-terminated JSON */
    void *payload;       /* first payload frame (malloc'd) */
    size_t payload_len;
    int nframes;
};
/* Receive one published message within TIMEOUT_MS: 0, or -1 on timeout. */
int ts_recv(void *sub, struct ts_msg *m, int timeout_ms);
void ts_msg_free(struct ts_msg *m);
/* Receive until an image with "shots" == SHOTS (and FINAL if asked) arrives; fills M. */
int ts_recv_image(void *sub, int64_t shots, bool final, struct ts_msg *m, int timeout_ms);

/* `seislive run` of the locate job over ZeroMQ (ipc in DIR) on the stations of a
 * synthetic array (written to DIR/stations.txt): the runtime tests' settings (P only,
 * homogeneous 3500 m/s, a 9 x 9 x 6 grid of 100 m from 400 m depth, envelope CF, MAD
 * trigger), BLOCK samples per block, OUTPUT_EXTRA appended to [output].  Fills EP_IN
 * (the endpoint to push to) and LOG (its stderr); returns the pid. */
struct synth;
pid_t ts_spawn_locate_run(const struct synth *s, const char *dir, int block, const char *output_extra,
                          char *ep_in, size_t ep_len, char *log, size_t log_len);

/* Count lines of FILE containing NEEDLE. */
int ts_count_in_file(const char *path, const char *needle);

#endif
