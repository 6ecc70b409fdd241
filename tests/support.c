#include "tests/support.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *test_prog(const char *name)
{
    static _Thread_local char buf[4096];
    const char *dir = getenv("SEISLIVE_BUILD");
    snprintf(buf, sizeof buf, "%s/%s", dir ? dir : "build/release", name);
    return buf;
}

pid_t test_fork(void)
{
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* PDEATHSIG survives exec; it fires when the forking thread ends, which for a
         * Criterion test is the worker process's main thread, i.e. the test's end. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
            _exit(126); /* the parent is gone already: do not start at all */
    }
    return pid;
}

static void append(char **buf, size_t *len, const char *data, size_t n)
{
    *buf = realloc(*buf, *len + n + 1);
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = '\0';
}

int test_run(const char *const argv[], int timeout_s, struct run_result *r)
{
    int po[2], pe[2];
    memset(r, 0, sizeof *r);
    if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
        return -errno;
    pid_t pid = test_fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        execv(argv[0], (char *const *)argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    size_t lo = 0, le = 0;
    r->out = calloc(1, 1);
    r->err = calloc(1, 1);
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (open_fds > 0) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > timeout_s) {
            kill(pid, SIGKILL);
            break;
        }
        if (poll(fds, 2, 200) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP))) {
                char buf[65536];
                ssize_t n = read(fds[i].fd, buf, sizeof buf);
                if (n > 0) {
                    if (i == 0)
                        append(&r->out, &lo, buf, (size_t)n);
                    else
                        append(&r->err, &le, buf, (size_t)n);
                } else {
                    close(fds[i].fd);
                    fds[i].fd = -1;
                    open_fds--;
                }
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    int st;
    waitpid(pid, &st, 0);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

void test_run_free(struct run_result *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

char *test_tmpdir(void)
{
    char *p = strdup("/tmp/seislive-test-XXXXXX");
    if (!mkdtemp(p)) {
        free(p);
        return NULL;
    }
    return p;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void test_rmtree(const char *path)
{
    if (path)
        nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

char *test_write_file(const char *dir, const char *name, const char *text)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    snprintf(p, len, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return p;
}

double test_rel_l2_f32(const float *a, const float *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)b[i];
        num += d * d;
        den += (double)b[i] * (double)b[i];
    }
    if (den == 0)
        return num == 0 ? 0 : INFINITY;
    return sqrt(num / den);
}
