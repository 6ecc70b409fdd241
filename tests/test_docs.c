/* The documentation: every command example marked `sh test` in README.md and docs/ (*.md)
 * runs (from the repository's top folder, the programs of this build on PATH); the
 * Python subscriber in docs/wire-format.md is tools/subscribe.py verbatim and works
 * against a publisher; the generated manual page is current and both pages render
 * without warnings; the README starts with its two commands. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "io/wire.h"
#include "tests/support.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* PATH=$SEISLIVE_BUILD:$PATH for the examples' commands. */
static void build_on_path(void)
{
    const char *b = getenv("SEISLIVE_BUILD");
    char *abs = realpath(b ? b : "build/release", NULL);
    cr_assert_not_null(abs);
    char *path = malloc(strlen(abs) + strlen(getenv("PATH")) + 2);
    sprintf(path, "%s:%s", abs, getenv("PATH"));
    setenv("PATH", path, 1);
    free(path);
    free(abs);
}

/* Run every ```sh test block of PATH in order; returns how many ran. */
static int run_blocks(const char *path)
{
    char *doc = slurp(path);
    int ran = 0;
    const char *p = doc;
    while ((p = strstr(p, "```sh test\n"))) {
        p += strlen("```sh test\n");
        const char *end = strstr(p, "\n```");
        cr_assert_not_null(end, "%s: unterminated block", path);
        char *script = strndup(p, (size_t)(end - p + 1));
        int line = 1;
        for (const char *q = doc; q < p; q++)
            line += *q == '\n';
        const char *argv[] = {"/bin/bash", "-euo", "pipefail", "-c", script, NULL};
        struct run_result r;
        cr_assert_eq(test_run(argv, 180, &r), 0);
        cr_assert_eq(r.status, 0, "%s:%d: the example failed (status %d)\n%s\nstdout: %s\nstderr: %s",
                     path, line, r.status, script, r.out, r.err);
        test_run_free(&r);
        free(script);
        ran++;
        p = end + 4;
    }
    free(doc);
    return ran;
}

Test(docs, command_examples_run, .timeout = 600)
{
    build_on_path();
    int ran = run_blocks("README.md");
    DIR *d = opendir("docs");
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 3 && strcmp(e->d_name + n - 3, ".md") == 0) {
            char path[512];
            snprintf(path, sizeof path, "docs/%s", e->d_name);
            ran += run_blocks(path);
        }
    }
    closedir(d);
    cr_assert_geq(ran, 4, "only %d examples marked `sh test`", ran);
}

Test(docs, readme_starts_with_the_two_commands)
{
    char *s = slurp("README.md");
    const char *block = strstr(s, "```sh\n");
    cr_assert_not_null(block);
    cr_assert_eq(strncmp(block + 6, "make demo", 9), 0, "the README's first command is not make demo");
    cr_assert_not_null(strstr(block, "\nmake test"));
    free(s);
}

Test(docs, python_subscriber_in_docs_is_the_script)
{
    char *doc = slurp("docs/wire-format.md"), *py = slurp("tools/subscribe.py");
    const char *mark = strstr(doc, "<!-- the block below is tools/subscribe.py");
    cr_assert_not_null(mark);
    const char *start = strstr(mark, "```python\n");
    cr_assert_not_null(start);
    start += strlen("```python\n");
    cr_assert_eq(strncmp(start, py, strlen(py)), 0, "docs/wire-format.md differs from tools/subscribe.py");
    cr_assert_eq(strncmp(start + strlen(py), "```", 3), 0);
    free(doc);
    free(py);
}

Test(docs, toml_man_page_is_current)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s reference | bash tools/man-toml.sh", test_prog("seislive"));
    const char *argv[] = {"/bin/bash", "-euo", "pipefail", "-c", cmd, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *page = slurp("docs/seislive.toml.5");
    cr_assert_str_eq(r.out, page,
                     "docs/seislive.toml.5 is out of date: run `build/release/seislive reference | "
                     "bash tools/man-toml.sh > docs/seislive.toml.5`");
    free(page);
    test_run_free(&r);
}

Test(docs, man_pages_render_without_warnings)
{
    if (access("/usr/bin/groff", X_OK) != 0)
        cr_skip_test("groff is not installed");
    const char *pages[] = {"docs/seislive.1", "docs/seislive.toml.5"};
    for (int i = 0; i < 2; i++) {
        const char *argv[] = {"/usr/bin/env", "LC_ALL=C", "/usr/bin/groff", "-man", "-ww", "-z",
                              pages[i], NULL};
        struct run_result r;
        cr_assert_eq(test_run(argv, 60, &r), 0);
        cr_assert_eq(r.status, 0);
        cr_assert_str_eq(r.err, "", "%s: %s", pages[i], r.err);
        test_run_free(&r);
    }
}

/* ---- the Python subscriber against a publisher ---- */

struct pub {
    char endpoint[64];
    atomic_int stop;
};

static void *publish(void *arg)
{
    struct pub *p = arg;
    void *ctx = zmq_ctx_new(), *sock = zmq_socket(ctx, ZMQ_XPUB);
    int linger = 0, timeout = 200;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    cr_assert_eq(zmq_bind(sock, p->endpoint), 0);
    int subs = 0;
    while (subs != 3 && !atomic_load(&p->stop)) { /* image, event and status subscribed */
        char buf[64];
        int n = zmq_recv(sock, buf, sizeof buf, 0);
        if (n > 1 && buf[0] == 1)
            subs |= (n == 6 && !memcmp(buf + 1, "image", 5)) | (n == 6 && !memcmp(buf + 1, "event", 5)) << 1;
    }
    /* 6 x 4 x 10 image, strongest at depth index 7 (o = 100 m, dz = 5 m: 135 m) */
    enum { NX = 6, NY = 4, NZ = 10 };
    float vol[NX * NY * NZ] = {0};
    for (int i = 0; i < NX * NY; i++)
        vol[7 * NX * NY + i] = -2.0f;
    struct wire_event e = {0, 1767225600250000000LL, 100, 200, 300, 9.5, 0};
    char *js = wire_encode_event(&e);
    zmq_send(sock, "event", 5, ZMQ_SNDMORE);
    zmq_send(sock, js, strlen(js), 0);
    free(js);
    struct wire_volume_hdr h = {1, 2, {NX, NY, NZ}, {10, 10, 5}, {0, 0, 100}, true, false, {0, 0, 0}, 0};
    js = wire_encode_volume(&h);
    zmq_send(sock, "image", 5, ZMQ_SNDMORE);
    zmq_send(sock, js, strlen(js), ZMQ_SNDMORE);
    zmq_send(sock, vol, sizeof vol, 0);
    free(js);
    while (!atomic_load(&p->stop))
        usleep(20000);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return NULL;
}

Test(docs, python_subscriber_runs)
{
    /* Debian's interpreter has python3-zmq and python3-numpy (tools/install-deps.sh) */
    const char *py = "/usr/bin/python3";
    const char *check[] = {py, "-c", "import zmq, numpy", NULL};
    struct run_result r;
    if (access(py, X_OK) != 0 || test_run(check, 60, &r) != 0 || r.status != 0)
        cr_skip_test("no /usr/bin/python3 with zmq and numpy");
    test_run_free(&r);
    char *dir = test_tmpdir();
    struct pub p = {.stop = 0};
    snprintf(p.endpoint, sizeof p.endpoint, "tcp://127.0.0.1:%d", 23000 + getpid() % 20000);
    pthread_t th;
    pthread_create(&th, NULL, publish, &p);
    char save[4200];
    snprintf(save, sizeof save, "%s/latest.npy", dir);
    const char *argv[] = {py, "tools/subscribe.py", p.endpoint, "--save", save, NULL};
    cr_assert_eq(test_run(argv, 60, &r), 0);
    atomic_store(&p.stop, 1);
    pthread_join(th, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, "event 2026-01-01T00:00:00.250000000Z at x=100 y=200 z=300 m, strength 9.5"),
                       "%s", r.out);
    cr_assert_not_null(strstr(r.out, "image 1: 2 shots, 6x4x10, strongest depth 135 m (final)"), "%s", r.out);
    cr_assert_eq(access(save, R_OK), 0);
    test_run_free(&r);
    test_rmtree(dir);
    free(dir);
}
