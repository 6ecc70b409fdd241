/* The shipped configurations give bitwise the results they gave before the propagator
 * redesign (issue 13: "it changes no result"): tools/golden.sh runs their jobs on the CPU
 * with the programs of this build (SEISLIVE_BUILD), reduced to seconds, and prints a
 * SHA-256 digest per output; each must equal the line recorded in
 * tests/golden/digests.txt, made by commit ac2dbaf (the last before the redesign).
 *
 * What is hashed is the data only (tools/golden.sh says why for each): SEG-Y records
 * after their 3200-byte textual header (it describes the propagator in words), the rtm
 * image volume (image.f32; image.json holds no results), the locate events files (no
 * wall-clock field in them) and the coherence volumes' .f32.  Nothing the programs write
 * depends on the time or the version once these are left out, and nothing depends on the
 * number of OpenMP threads (checked with 1 and 2).
 *
 * conf/model.example.toml is one cell wide (n = [201, 1, 101], 4 CPML cells across y):
 * should the 2D mode of issue 13 take such a model as 2D, its digest changes by design
 * and is recorded anew (with the reason); the other cases are 3D.
 *
 * A mismatch names the output, prints both digests and keeps the outputs (the folder is
 * in the message).  To see what changed, run the previous commit's build into another
 * folder and compare the files the two runs wrote:
 *
 *   git worktree add /tmp/prev ac2dbaf && make -C /tmp/prev -j2 CUDA=0 all
 *   tools/golden.sh /tmp/prev/build/cpu /tmp/g-prev        # the recorded digests
 *   tools/golden.sh build/cpu /tmp/g-now                   # this build's
 *   cmp /tmp/g-prev/rtm/full/out/image.f32 /tmp/g-now/rtm/full/out/image.f32
 *
 * A change of results that is intended (a bug fixed, a new default) records new digests,
 * saying why in the commit: tools/golden.sh build/cpu /tmp/g > tests/golden/digests.txt
 * (then put back the provenance comment at its top). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

#define DIGESTS "tests/golden/digests.txt"

struct line {
    char name[128];
    long long bytes;
    char sha[65];
    char made[512]; /* the command that made the output */
};

/* Parse "NAME BYTES SHA256 MADE-BY..." lines of TEXT ('#' comments and blank lines left
 * out) into OUT; returns how many. */
static int parse(const char *text, struct line *out, int max)
{
    int n = 0;
    for (const char *p = text; *p && n < max;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char buf[1024];
        cr_assert_lt(len, sizeof buf, "digest line too long: %.80s", p);
        memcpy(buf, p, len);
        buf[len] = '\0';
        p += len + (eol ? 1 : 0);
        if (buf[0] == '#' || buf[0] == '\0')
            continue;
        struct line *l = &out[n];
        int used = 0;
        cr_assert_eq(sscanf(buf, "%127s %lld %64s %n", l->name, &l->bytes, l->sha, &used), 3,
                     "not a digest line: %s", buf);
        cr_assert_eq(strlen(l->sha), 64, "not a SHA-256: %s", buf);
        snprintf(l->made, sizeof l->made, "%s", buf + used);
        n++;
    }
    return n;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    cr_assert_eq(fseek(f, 0, SEEK_SET), 0);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n, "%s: short read", path);
    s[n] = '\0';
    fclose(f);
    return s;
}

enum { MAXL = 64 };

/* Run tools/golden.sh for GROUP and check every recorded output of the group ("GROUP/"
 * names) against this build's, and that the build made no output left unrecorded. */
static void check_group(const char *group)
{
    static struct line rec[MAXL], got[MAXL];
    char *text = slurp(DIGESTS);
    int nrec = parse(text, rec, MAXL);
    free(text);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%s/", group);
    int want = 0;
    for (int i = 0; i < nrec; i++)
        want += strncmp(rec[i].name, prefix, strlen(prefix)) == 0;
    cr_assert_gt(want, 0, "%s records nothing for %s", DIGESTS, group);

    char *dir = test_tmpdir();
    const char *b = getenv("SEISLIVE_BUILD");
    const char *argv[] = {"/bin/bash", "tools/golden.sh", b ? b : "build/release", dir, group, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 280, &r), 0);
    cr_assert_eq(r.status, 0, "tools/golden.sh %s failed (outputs in %s):\n%s", group, dir, r.err);
    int ngot = parse(r.out, got, MAXL);
    test_run_free(&r);

    /* every difference at once: one changed output often explains the others */
    char report[16384] = "";
    size_t rl = 0;
    int bad = 0;
    for (int i = 0; i < nrec; i++) {
        if (strncmp(rec[i].name, prefix, strlen(prefix)) != 0)
            continue;
        const struct line *g = NULL;
        for (int j = 0; j < ngot && !g; j++)
            if (strcmp(got[j].name, rec[i].name) == 0)
                g = &got[j];
        if (!g) {
            bad++;
            rl += (size_t)snprintf(report + rl, sizeof report - rl, "\n%s: not made by this build",
                                   rec[i].name);
        } else if (g->bytes != rec[i].bytes || strcmp(g->sha, rec[i].sha) != 0) {
            bad++;
            rl += (size_t)snprintf(report + rl, sizeof report - rl,
                                   "\n%s differs:\n  this build %lld bytes sha256 %s\n"
                                   "  recorded   %lld bytes sha256 %s\n  made by: %s",
                                   rec[i].name, g->bytes, g->sha, rec[i].bytes, rec[i].sha, rec[i].made);
        } else {
            fprintf(stderr, "golden %s: %lld bytes, sha256 %s (as recorded)\n", rec[i].name, g->bytes,
                    g->sha);
        }
        if (rl >= sizeof report)
            rl = sizeof report - 1;
    }
    for (int j = 0; j < ngot; j++) {
        int known = 0;
        for (int i = 0; i < nrec && !known; i++)
            known = strcmp(got[j].name, rec[i].name) == 0;
        if (!known) {
            bad++;
            rl += (size_t)snprintf(report + rl, sizeof report - rl,
                                   "\n%s: made by this build (sha256 %s) but not recorded in %s",
                                   got[j].name, got[j].sha, DIGESTS);
            if (rl >= sizeof report)
                rl = sizeof report - 1;
        }
    }
    cr_assert_eq(bad, 0, "golden %s: %d of %d outputs not bitwise as recorded (outputs kept in %s):%s",
                 group, bad, want, dir, report);
    test_rmtree(dir);
    free(dir);
}

/* conf/model.example.toml: the model job's shot records. */
Test(golden, model_example_traces, .timeout = 300)
{
    check_group("model");
}

/* tools/demo.sh's survey: seislive-gen shots (two runs of the model job: the demo model,
 * then the direct wave to subtract). */
Test(golden, generator_survey, .timeout = 300)
{
    check_group("gen");
}

/* tools/demo.toml's rtm job on that survey: each strategy with the demo's imaging, and
 * the other imaging conditions. */
Test(golden, rtm_images, .timeout = 300)
{
    check_group("rtm");
}

/* tools/demo-locate.toml's locate job on tools/demo-locate.sh's recording: the events
 * and the coherence volumes. */
Test(golden, locate_events, .timeout = 300)
{
    check_group("locate");
}
