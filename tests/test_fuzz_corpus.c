/* The fuzz regression set (issue 12, docs/RELIABILITY.md): every file of
 * tests/fuzz/corpus/NAME (seeds and what the fuzzers kept) and tests/fuzz/crashes/NAME
 * (every crash or hang a fuzzer found, once fixed) through the target NAME of
 * tests/fuzz.  Each must return normally (a crash kills the test, ASan/UBSan report
 * under `make SAN=1 test`), with 0 or a negative code, and a rejection must come with
 * an error that names the place (the message, the file); a seed called ok-* is valid
 * and must be accepted (so a target that stops early is noticed).  tests/fuzz/pending/ holds
 * inputs whose fix belongs to another branch; they are not replayed here. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stream/error.h"
#include "tests/fuzz/fuzz.h"

/* The repository root: SEISLIVE_BUILD is ROOT/build/KIND; else the current folder. */
static void fuzz_root(char *out, size_t len)
{
    const char *b = getenv("SEISLIVE_BUILD");
    char p[PATH_MAX];
    struct stat sb;
    if (b) {
        snprintf(p, sizeof p, "%s/../../tests/fuzz/corpus", b);
        if (stat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            snprintf(out, len, "%s/../../tests/fuzz", b);
            return;
        }
    }
    snprintf(out, len, "tests/fuzz");
}

static const struct fuzz_target *target(const char *name)
{
    for (const struct fuzz_target *t = fuzz_targets; t->name; t++)
        if (strcmp(t->name, name) == 0)
            return t;
    cr_assert_fail("no fuzz target '%s'", name);
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replay every regular file of DIR (sorted) through T; returns how many. */
static int replay_dir(const struct fuzz_target *t, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.' || strcmp(de->d_name, "README") == 0)
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        cr_assert_not_null(names);
        names[n++] = strdup(de->d_name);
    }
    closedir(d);
    if (n) /* an empty folder: names is NULL, which qsort must not get */
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        FILE *f = fopen(p, "rb");
        cr_assert_not_null(f, "%s", p);
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        cr_assert_geq(len, 0, "%s", p);
        uint8_t *buf = malloc((size_t)len + 1);
        cr_assert_not_null(buf);
        cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len, "%s", p);
        fclose(f);
        cr_expect_leq((size_t)len, t->max_len, "%s: %ld bytes, more than -max_len %zu", p, len,
                      t->max_len);
        err_clear();
        int rc = t->fn(buf, (size_t)len);
        cr_log_info("%s: %d %s", p, rc, rc ? err_msg() : "");
        cr_expect_leq(rc, 0, "%s: target returned %d", p, rc);
        if (strncmp(names[i], "ok-", 3) == 0) /* a valid seed: the target reaches the end */
            cr_expect_eq(rc, 0, "%s: a valid seed rejected: %s", p, err_msg());
        if (rc < 0)
            cr_expect_not_null(strstr(err_msg(), t->place),
                               "%s: rejected (%d) with an error that does not name the place "
                               "('%s'): '%s'", p, rc, t->place, err_msg());
        free(buf);
        free(names[i]);
    }
    free(names);
    return (int)n;
}

static void replay(const char *name)
{
    const struct fuzz_target *t = target(name);
    char root[PATH_MAX], dir[PATH_MAX + 64];
    fuzz_root(root, sizeof root);
    snprintf(dir, sizeof dir, "%s/corpus/%s", root, name);
    int seeds = replay_dir(t, dir);
    cr_assert_gt(seeds, 0, "%s: no seed corpus (the fuzz regression set must not be empty)", dir);
    snprintf(dir, sizeof dir, "%s/crashes/%s", root, name);
    replay_dir(t, dir);
}

Test(fuzz_corpus, wire) { replay("wire"); }
Test(fuzz_corpus, segy) { replay("segy"); }
Test(fuzz_corpus, su) { replay("su"); }
Test(fuzz_corpus, mseed) { replay("mseed"); }
Test(fuzz_corpus, config) { replay("config"); }
Test(fuzz_corpus, state) { replay("state"); }
Test(fuzz_corpus, nonlinloc) { replay("nonlinloc"); }
Test(fuzz_corpus, stations) { replay("stations"); }
Test(fuzz_corpus, sac) { replay("sac"); }
