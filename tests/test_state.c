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

/* Overwrite 8 bytes at OFF of DIR/state.bin with V. */
static void poke64(const char *dir, long off, uint64_t v)
{
    char fin[600];
    snprintf(fin, sizeof fin, "%s/state.bin", dir);
    FILE *f = fopen(fin, "r+b");
    cr_assert_not_null(f);
    fseek(f, off, SEEK_SET);
    cr_assert_eq(fwrite(&v, 8, 1, f), 1);
    fclose(f);
}

static long file_size(const char *dir)
{
    char fin[600];
    snprintf(fin, sizeof fin, "%s/state.bin", dir);
    FILE *f = fopen(fin, "rb");
    cr_assert_not_null(f, "the state file must still be there");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

/* Load must fail naming the file and BYTE, and leave the file as it was. */
static void refused_at(const char *dir, uint64_t fp, const char *byte, long size)
{
    struct state b;
    cr_assert_lt(state_load(dir, fp, &b), 0);
    cr_assert(strstr(err_msg(), "state.bin") != NULL, "%s", err_msg());
    cr_assert(strstr(err_msg(), byte) != NULL, "want '%s' in: %s", byte, err_msg());
    cr_assert_eq(file_size(dir), size, "the user's state file is kept");
    cr_assert_null(b.image);
}

/* Issue 12.5: every size in the header is bounded and cross-checked (with n[] and the
 * file size) before anything is allocated; the refusal names the field's byte. */
Test(state, crafted_header_sizes_are_refused_by_byte)
{
    char *dir = test_tmpdir();
    struct state a;
    fill(&a, 3);
    uint64_t fp = a.fingerprint;
    cr_assert_eq(state_save(dir, &a), 0);
    long size = file_size(dir);
    /* 2^36 floats (256 GiB) for a 4 x 3 x 2 grid in a file of a few hundred bytes. */
    poke64(dir, 32, 1ULL << 36);
    refused_at(dir, fp, "byte 32", size);
    cr_assert(strstr(err_msg(), "4 x 3 x 2") != NULL, "%s", err_msg());
    /* One float more than the grid. */
    cr_assert_eq(state_save(dir, &a), 0);
    poke64(dir, 32, 25);
    refused_at(dir, fp, "byte 32", size);
    /* Illumination neither none nor the image's size. */
    cr_assert_eq(state_save(dir, &a), 0);
    poke64(dir, 40, 7);
    refused_at(dir, fp, "byte 40", size);
    /* A ledger of 2^31 shots, a catalogue of 2^33 bytes: far more than the file. */
    cr_assert_eq(state_save(dir, &a), 0);
    poke64(dir, 48, 1ULL << 31);
    refused_at(dir, fp, "byte 48", size);
    cr_assert_eq(state_save(dir, &a), 0);
    poke64(dir, 56, 1ULL << 33);
    refused_at(dir, fp, "byte 56", size);
    /* A negative grid size. */
    cr_assert_eq(state_save(dir, &a), 0);
    poke64(dir, 16, (uint64_t)(uint32_t)-5 | (uint64_t)3 << 32);
    refused_at(dir, fp, "byte 16", size);
    /* A file from a newer program: the version is named, not "damaged". */
    cr_assert_eq(state_save(dir, &a), 0);
    uint64_t magic;
    memcpy(&magic, "SLSTATE9", 8);
    poke64(dir, 0, magic);
    refused_at(dir, fp, "version 9", size);
    state_free(&a);
    test_rmtree(dir);
    free(dir);
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* A version 1 file (before digests), written here field by field: still loads, its
 * ledger with unknown digests. */
Test(state, version_1_file_still_loads)
{
    char *dir = test_tmpdir();
    char fin[600];
    snprintf(fin, sizeof fin, "%s/state.bin", dir);
    struct {
        char magic[8];
        uint64_t fp;
        int32_t n[3], pad;
        uint64_t n_image, n_illum, n_ledger, cat;
        int64_t last;
    } h = {{'S', 'L', 'S', 'T', 'A', 'T', 'E', '1'}, 42, {2, 1, 1}, 0, 2, 0, 2, 0, -1};
    float img[2] = {1.5f, -2.5f};
    int64_t ids[2] = {7, 9};
    uint64_t sum = 14695981039346656037ULL;
    sum = fnv1a(sum, &h, sizeof h);
    sum = fnv1a(sum, img, sizeof img);
    sum = fnv1a(sum, ids, sizeof ids);
    FILE *f = fopen(fin, "wb");
    fwrite(&h, sizeof h, 1, f);
    fwrite(img, sizeof img, 1, f);
    fwrite(ids, sizeof ids, 1, f);
    fwrite(&sum, 8, 1, f);
    fclose(f);
    struct state b;
    cr_assert_eq(state_load(dir, 42, &b), 0, "%s", err_msg());
    cr_assert_eq(b.version, 1);
    cr_assert_eq(b.n_ledger, 2);
    cr_assert_eq(b.ledger[1], 9);
    cr_assert_eq(b.image[1], -2.5f);
    cr_assert_null(b.sources, "a version 1 file has no digests");
    state_free(&b);
    test_rmtree(dir);
    free(dir);
}

/* Version 2 keeps each stacked shot's digest and origin. */
Test(state, ledger_digests_and_origins_round_trip)
{
    char *dir = test_tmpdir();
    struct state a, b;
    fill(&a, 3);
    a.sources = calloc(a.cap_ledger, sizeof *a.sources);
    for (int k = 0; k < 3; k++) {
        a.sources[k].digest = 0xfeed0000ULL + (uint64_t)k;
        snprintf(a.sources[k].origin, sizeof a.sources[k].origin, "f%d.segy: traces 0..9", k);
    }
    cr_assert_eq(state_ledger_add(&a, 2000), 0);
    cr_assert_eq(state_save(dir, &a), 0, "%s", err_msg());
    cr_assert_eq(state_load(dir, a.fingerprint, &b), 0, "%s", err_msg());
    cr_assert_eq(b.version, 2);
    cr_assert_eq(b.n_ledger, 4);
    cr_assert_not_null(b.sources);
    cr_assert_eq(b.sources[2].digest, 0xfeed0002ULL);
    cr_assert_str_eq(b.sources[1].origin, "f1.segy: traces 0..9");
    cr_assert_eq(b.sources[3].digest, 0, "added without a digest: unknown");
    state_free(&a);
    state_free(&b);
    test_rmtree(dir);
    free(dir);
}

/* Format version 3: the input's position (SeedLink's next sequence numbers) is saved
 * with the rest and read back; without one the file stays version 2; a damaged length
 * is refused by byte. */
Test(state, input_position_is_version_3)
{
    char *dir = test_tmpdir();
    struct state a, b;
    fill(&a, 2);
    cr_assert_eq(state_save(dir, &a), 0, "%s", err_msg());
    cr_assert_eq(state_load(dir, a.fingerprint, &b), 0, "%s", err_msg());
    cr_expect_eq(b.version, 2, "no input position: still version 2");
    cr_expect_null(b.resume);
    state_free(&b);
    static const char pos[] = "seedlink-resume 1\ngrid 0 250 3000\nstation XX_S01 28\n";
    a.resume = strdup(pos);
    a.resume_len = strlen(pos);
    cr_assert_eq(state_save(dir, &a), 0, "%s", err_msg());
    cr_assert_eq(state_load(dir, a.fingerprint, &b), 0, "%s", err_msg());
    cr_expect_eq(b.version, 3);
    cr_assert_not_null(b.resume);
    cr_expect_str_eq(b.resume, pos);
    cr_expect_str_eq(b.catalogue, a.catalogue);
    cr_expect_eq(b.n_ledger, 2);
    state_free(&b);
    long size = file_size(dir);
    poke64(dir, 72, 1ULL << 40); /* the position's length */
    refused_at(dir, a.fingerprint, "byte 72", size);
    state_free(&a);
    test_rmtree(dir);
    free(dir);
}
