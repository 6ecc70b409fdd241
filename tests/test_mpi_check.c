/* The decomposition plan (stream/decompose.h) and what `seislive check --ranks N` prints
 * about it (no mpirun needed): subdomains that tile the grid with every cut at least a
 * halo from the next, z first and y only when z runs short, the layers counted in the
 * balance, neighbours that mirror each other, HALO faces exactly at the cuts; the check
 * table's halo bytes against the count from the padded sizes, and the refusals. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/propagator.h"
#include "stream/decompose.h"
#include "stream/error.h"
#include "tests/support.h"

static struct prop_params grid(int nx, int ny, int nz, int order, bool fs)
{
    struct prop_params p;
    const int n[3] = {nx, ny, nz};
    const double d[3] = {10, 10, 10}, o[3] = {0, 0, 0};
    prop_params_init(&p, n, d, o, 1e-3, 10);
    p.op.order = order;
    if (fs) {
        p.grid.face[4] = PROP_FACE_FREE;
        p.grid.width[4] = 0;
    }
    return p;
}

/* The subdomains of P tile the whole grid, each cut axis part >= halo, the neighbours
 * agree, and HALO faces are where the neighbours are. */
static void tiles(const struct dd_plan *p)
{
    const struct prop_grid *g = &p->whole.grid;
    size_t covered = 0;
    for (int r = 0; r < p->nranks; r++) {
        struct prop_params sp;
        dd_sub_params(p, r, 2000, &sp);
        cr_assert_eq(prop_check(&sp), 0, "rank %d: %s", r, err_msg());
        covered += (size_t)sp.grid.n[0] * sp.grid.n[1] * sp.grid.n[2];
        cr_assert_eq(sp.grid.n[0], g->n[0], "x is never cut");
        for (int f = 0; f < PROP_FACES; f++) {
            int nb = dd_neighbour(p, r, f);
            cr_assert_eq(sp.grid.face[f] == PROP_FACE_HALO, nb >= 0, "rank %d face %d", r, f);
            if (nb < 0)
                continue;
            cr_assert_eq(dd_neighbour(p, nb, f ^ 1), r, "rank %d face %d: neighbour %d does not point back", r, f, nb);
            cr_assert_geq(sp.grid.n[f / 2], p->halo, "rank %d: %d planes along %c, halo %d", r, sp.grid.n[f / 2],
                          "xyz"[f / 2], p->halo);
        }
    }
    cr_assert_eq(covered, (size_t)g->n[0] * g->n[1] * g->n[2], "the subdomains do not tile the grid");
}

Test(mpi_check, z_first_then_y_balanced_with_layers)
{
    struct dd_plan p;
    struct prop_params w = grid(20, 40, 60, 8, false);
    cr_assert_eq(dd_plan_make(&w, 4, (const int[3]){0, 0, 0}, &p), 0, "%s", err_msg());
    cr_assert_eq(p.split[1], 1);
    cr_assert_eq(p.split[2], 4);
    /* 60 planes + 10 + 10 layers = 80 computed: 20 each; the end ranks carry 10 layers */
    const int want[5] = {0, 10, 30, 50, 60};
    for (int i = 0; i <= 4; i++)
        cr_assert_eq(p.cut[2][i], want[i], "cut %d at %d, want %d", i, p.cut[2][i], want[i]);
    tiles(&p);
    dd_plan_free(&p);
    /* 60 / 4 = 15 z slabs at most; 30 ranks -> 15 x 2 */
    cr_assert_eq(dd_plan_make(&w, 30, NULL, &p), 0, "%s", err_msg());
    cr_assert_eq(p.split[2], 15);
    cr_assert_eq(p.split[1], 2);
    tiles(&p);
    dd_plan_free(&p);
    /* free surface: no top layers, the top rank gets more planes */
    w = grid(20, 40, 60, 8, true);
    cr_assert_eq(dd_plan_make(&w, 2, NULL, &p), 0, "%s", err_msg());
    cr_assert_eq(p.cut[2][1], 35, "70 computed planes: 35 + 35 (10 layers at the bottom)");
    tiles(&p);
    dd_plan_free(&p);
    /* an explicit split */
    cr_assert_eq(dd_plan_make(&w, 6, (const int[3]){1, 3, 2}, &p), 0, "%s", err_msg());
    cr_assert_eq(p.split[1], 3);
    tiles(&p);
    dd_plan_free(&p);
}

Test(mpi_check, thin_layers_pushed_to_the_halo)
{
    /* very thick layers would leave the end slabs with no interior: each keeps a halo */
    struct prop_params w = grid(10, 1, 24, 16, false);
    w.grid.width[4] = w.grid.width[5] = 200;
    struct dd_plan p;
    cr_assert_eq(dd_plan_make(&w, 3, NULL, &p), 0, "%s", err_msg());
    cr_assert_eq(p.cut[2][1], 8);
    cr_assert_eq(p.cut[2][2], 16);
    tiles(&p);
    dd_plan_free(&p);
}

static void refused(struct prop_params w, int n, const int *split, const char *says)
{
    struct dd_plan q;
    cr_assert_eq(dd_plan_make(&w, n, split, &q), -EINVAL, "accepted %d ranks", n);
    cr_assert_not_null(strstr(err_msg(), says), "message \"%s\"", err_msg());
}

Test(mpi_check, refusals)
{
    /* 2D, 24 z-planes, order 16 (halo 8): 3 slabs at most, no y cuts */
    refused(grid(10, 1, 24, 16, false), 4, NULL, "4 ranks are more than the grid allows");
    /* 3D 16 x 16 (halo 8): 2 x 2 at most; 5 ranks do not factor into that */
    refused(grid(10, 16, 16, 16, false), 5, NULL, "more than the grid allows");
    refused(grid(10, 16, 38, 16, false), 5, (const int[3]){1, 1, 5}, "thinner than the halo");
    refused(grid(10, 16, 40, 8, false), 4, (const int[3]){1, 2, 1}, "the product must be the rank count");
    refused(grid(10, 16, 40, 8, false), 2, (const int[3]){2, 1, 1}, "x is never cut");
    refused(grid(10, 1, 40, 8, false), 2, (const int[3]){1, 2, 1}, "cannot be cut along y");
}

static const char *conf_text =
    "[job]\nkind = \"model\"\n[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [30, 24, 28]\n"
    "d = [10.0, 10.0, 10.0]\n[propagator]\norder = 8\nt_max = 0.1\nf_peak = 15.0\npml_width = [6, 5, 7, 4, 5, 6]\n"
    "[acquisition]\nsources = [[120.0, 101.0, 113.3]]\nreceivers = [[50.0, 50.0, 20.0], [150.0, 100.0, 131.7]]\n"
    "[runtime]\ndevice = \"cpu\"\n%s\n";

static char *check(const char *runtime, const char *ranks, int want_status)
{
    char *dir = test_tmpdir(), text[2048];
    snprintf(text, sizeof text, conf_text, runtime);
    char *c = test_write_file(dir, "c.toml", text);
    const char *argv[] = {test_prog("seislive"), "check", "-c", c, ranks ? "--ranks" : NULL, ranks, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_assert_eq(r.status, want_status, "exit %d: %s", r.status, r.err);
    char *out = strdup(want_status ? r.err : r.out);
    test_run_free(&r);
    test_rmtree(dir);
    free(dir);
    free(c);
    return out;
}

Test(mpi_check, check_prints_subdomains_halo_and_memory, .timeout = 60)
{
    char *o = check("decompose = \"domain\"", "4", 0);
    cr_assert_not_null(strstr(o, "decomposition: domain, 4 ranks, split 1 x 1 x 4"), "%s", o);
    /* a z cut sends 4 planes of the padded x-y section: (30 + 6 + 5) x (24 + 7 + 4) floats */
    const double face_kib = 4.0 * 41 * 35 * 4 / 1024;
    char want[128];
    snprintf(want, sizeof want, "halo per step: %.1f KiB sent by all ranks", 6 * face_kib);
    cr_assert_not_null(strstr(o, want), "want \"%s\" in %s", want, o);
    snprintf(want, sizeof want, "%.1f KiB", face_kib);
    cr_assert_not_null(strstr(o, want), "the end ranks send one face: %s", o);
    cr_assert_not_null(strstr(o, "memory per rank: at most"), "%s", o);
    for (int r = 0; r < 4; r++) {
        snprintf(want, sizeof want, "\n  %4d ", r);
        cr_assert_not_null(strstr(o, want), "no row for rank %d: %s", r, o);
    }
    free(o);
    /* [runtime] ranks, and a split along y */
    o = check("decompose = \"domain\"\nranks = 4\nsplit = [1, 2, 2]", NULL, 0);
    cr_assert_not_null(strstr(o, "4 ranks, split 1 x 2 x 2"), "%s", o);
    free(o);
    /* refused as the run would refuse it: 28 planes / halo 4 = 7 slabs, 24 / 4 = 6 -> 43 is prime */
    o = check("decompose = \"domain\"", "43", 2);
    cr_assert_not_null(strstr(o, "43 ranks are more than the grid allows"), "%s", o);
    free(o);
    o = check("decompose = \"domain\"\nsplit = [1, 3, 1]", "2", 2);
    cr_assert_not_null(strstr(o, "the product must be the rank count"), "%s", o);
    free(o);
}

Test(mpi_check, config_refuses_what_never_runs)
{
    char *o = check("split = [2, 1, 1]", NULL, 2);
    cr_assert_not_null(strstr(o, "[runtime] split: [2, 1, 1]"), "%s", o);
    free(o);
    o = check("device_map = \"0,,1\"", NULL, 2);
    cr_assert_not_null(strstr(o, "device_map"), "%s", o);
    free(o);
    o = check("decompose = \"shots\"", NULL, 2); /* the model job: no shots to hand out */
    cr_assert_not_null(strstr(o, "\"shots\" hands the shots of the rtm job out to the ranks"), "%s", o);
    free(o);
    /* the locate job has no decomposition yet: check refuses it as run does */
    char *dir = test_tmpdir();
    char *c = test_write_file(dir, "locate.toml",
                              "[job]\nkind = \"locate\"\n[model]\ntype = \"constant\"\nvelocity = 2000.0\n"
                              "n = [30, 24, 28]\n[input]\nkind = \"zmq\"\n[locate]\nstations = \"/dev/null\"\n"
                              "[runtime]\ndevice = \"cpu\"\ndecompose = \"domain\"\n");
    const char *argv[] = {test_prog("seislive"), "check", "-q", "-c", c, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_assert_not_null(strstr(r.err, "runs the model and rtm jobs only so far"), "%s", r.err);
    test_run_free(&r);
    test_rmtree(dir);
    free(dir);
    free(c);
}
