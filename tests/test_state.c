/* State checkpoint: round trip, a config change is refused, damage is detected, and
 * an interrupted save leaves the previous checkpoint intact. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream/error.h"
#include "stream/state.h"
#include "tests/support.h"

static void fill(struct state *s, int shots)
{
    state_init(s);
    s->fingerprint = 0x1234abcdULL;
    s->n[0] = 4, s->n[1] = 3, s->n[2] = 2;
    s->n_image = s->n_illum = 24;
    s->image = malloc(24 * sizeof(float));
    s->illum = malloc(24 * sizeof(float));
    for (int i = 0; i < 24; i++) {
        s->image[i] = (float)(i * 0.5 + shots);
        s->illum[i] = (float)(i * i);
    }
    for (int k = 0; k < shots; k++)
        state_ledger_add(s, 1000 + k);
    s->last_t_ns = 777;
    s->catalogue = strdup("2026-01-01T00:00:00Z 1 2 3 0.5\n");
    s->catalogue_len = strlen(s->catalogue);
}

Test(state, round_trip_and_ledger)
{
    char *dir = test_tmpdir();
    struct state a, b;
    fill(&a, 5);
    cr_assert(state_ledger_has(&a, 1003));
    cr_assert(!state_ledger_has(&a, 1005));
    cr_assert_eq(state_save(dir, &a), 0, "%s", err_msg());
    cr_assert_eq(state_load(dir, a.fingerprint, &b), 0, "%s", err_msg());
    cr_assert_eq(b.n_ledger, 5);
    cr_assert_eq(b.ledger[4], 1004);
    cr_assert_eq(memcmp(a.image, b.image, 24 * sizeof(float)), 0);
    cr_assert_eq(memcmp(a.illum, b.illum, 24 * sizeof(float)), 0);
    cr_assert_eq(b.last_t_ns, 777);
    cr_assert_str_eq(b.catalogue, a.catalogue);
    cr_assert_eq(b.n[0], 4);
    state_free(&b);
    /* Another configuration: refused, with both fingerprints in the message. */
    cr_assert_eq(state_load(dir, 99, &b), -ESTALE);
    cr_assert(strstr(err_msg(), "another configuration") != NULL);
    state_free(&a);
    test_rmtree(dir);
    free(dir);
}

Test(state, missing_damaged_and_interrupted)
{
    char *dir = test_tmpdir();
    struct state a, b;
    cr_assert_eq(state_load(dir, 1, &b), -ENOENT);
    fill(&a, 3);
    cr_assert_eq(state_save(dir, &a), 0);
    /* A save that died before its rename leaves a stray temp file: ignored. */
    char tmp[600], fin[600];
    snprintf(tmp, sizeof tmp, "%s/state.bin.tmp", dir);
    snprintf(fin, sizeof fin, "%s/state.bin", dir);
    FILE *f = fopen(tmp, "wb");
    fputs("half written", f);
    fclose(f);
    cr_assert_eq(state_load(dir, a.fingerprint, &b), 0);
    cr_assert_eq(b.n_ledger, 3);
    state_free(&b);
    /* Flip one byte of the image: the checksum catches it. */
    f = fopen(fin, "r+b");
    fseek(f, 80, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 80, SEEK_SET);
    fputc(c ^ 0x40, f);
    fclose(f);
    cr_assert_lt(state_load(dir, a.fingerprint, &b), 0);
    cr_assert(strstr(err_msg(), "checksum") != NULL, "%s", err_msg());
    /* Truncated. */
    cr_assert_eq(state_save(dir, &a), 0);
    cr_assert_eq(truncate(fin, 100), 0);
    cr_assert_lt(state_load(dir, a.fingerprint, &b), 0);
    cr_assert(strstr(err_msg(), "truncated") != NULL, "%s", err_msg());
    state_free(&a);
    test_rmtree(dir);
    free(dir);
}
