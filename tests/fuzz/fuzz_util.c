/* fuzz_util — the target table and the helpers of tests/fuzz/fuzz.h. */
#include "tests/fuzz/fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/log.h"

/* max_len: a few records/traces/lines are enough to reach every branch; larger inputs
 * only slow the fuzzer down.  PLACE: "message " for the wire (errors name the message
 * sequence number), the name given to the memory parsers, or the folder the input
 * files are written to (fuzz_dir(): errors name the file). */
const struct fuzz_target fuzz_targets[] = {
    {"wire", fuzz_wire, 16384, "message "},
    {"segy", fuzz_segy, 16384, "fuzz-input"},
    {"su", fuzz_su, 16384, "fuzz-input"},
    {"mseed", fuzz_mseed, 16384, "fuzz-input"},
    {"config", fuzz_config, 16384, "seislive-fuzz-"},
    {"state", fuzz_state, 4096, "seislive-fuzz-"},
    {"nonlinloc", fuzz_nonlinloc, 8192, "seislive-fuzz-"},
    {"stations", fuzz_stations, 8192, "seislive-fuzz-"},
    {"sac", fuzz_sac, 4096, "fuzz-input"},
    {NULL, NULL, 0, NULL},
};

static char dir[256];

static void remove_dir(void)
{
    static const char *const names[] = {"state.bin", "grid.hdr", "grid.buf", "stations.txt",
                                        "corrections.txt", "fuzz-input.toml", "p1", "p2", "p3", "p4", "p5",
                                        "p1.sgy", "p2.sgy", "p3.sgy", "p4.sgy", "p5.sgy", NULL};
    char p[512];
    for (int i = 0; names[i]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

const char *fuzz_dir(void)
{
    if (dir[0])
        return dir;
    struct stat sb;
    const char *base = stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/seislive-fuzz-XXXXXX", base);
    if (!mkdtemp(dir)) {
        perror("fuzz: mkdtemp");
        abort(); /* no folder: nothing can be tested, say so loudly */
    }
    atexit(remove_dir);
    return dir;
}

int fuzz_write(const char *name, const void *data, size_t size)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", fuzz_dir(), name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -errno;
    const char *c = data;
    while (size) {
        ssize_t w = write(fd, c, size);
        if (w < 0) {
            int e = -errno;
            close(fd);
            return e;
        }
        c += w;
        size -= (size_t)w;
    }
    return close(fd) == 0 ? 0 : -errno;
}

void fuzz_quiet(void)
{
    log_set_level(LOG_OFF);
}
