/* The propagator decomposed over real MPI ranks (tests/mpi_prop_main.c under mpirun)
 * against the whole grid, bit for bit, for what the model job's tests cannot reach: the
 * random-velocity layers of RTM's random strategy crossing the cuts (with and without a
 * free surface, 3D and 2D), reverse steps after forward ones, y and z cuts together. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/mpi_support.h"
#include "tests/support.h"

static void bitwise(int np, const char *kind, int order, const char *extra)
{
    char o[16];
    snprintf(o, sizeof o, "%d", order);
    char nps[16];
    snprintf(nps, sizeof nps, "%d", np);
    const char *argv[] = {mpi_need(), "--oversubscribe", "-np", nps, test_prog("seislive-mpi_prop"), kind, o, extra,
                          NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_assert_eq(r.status, 0, "%s order %d %s, %d ranks: exit %d: %s", kind, order, extra ? extra : "", np, r.status,
                 r.err);
    cr_assert_not_null(strstr(r.out, "bitwise: "), "%s", r.out);
    test_run_free(&r);
}

/* Every order, the rank counts taking turns (each launch costs ~0.7 s of MPI start-up
 * on the 2-core CI machine; the model job's tests run every count at every order). */
static void all_orders(const char *kind, int turn)
{
    for (int order = 2; order <= 16; order += 2) {
        int k = (order / 2 + turn) % 3;
        bitwise(2 + k, kind, order, k == 2 ? "yz" : NULL);
    }
}

Test(mpi_prop, random_layers_cut, .timeout = 120) { all_orders("random", 0); }

Test(mpi_prop, random_layers_free_surface_cut, .timeout = 120) { all_orders("random-free", 1); }

Test(mpi_prop, two_d_and_cpml, .timeout = 120)
{
    for (int order = 4; order <= 16; order += 12) {
        bitwise(3, "random", order, "2d");
        bitwise(2, "random-free", order, "2d");
        bitwise(4, "cpml", order, "yz");
    }
}
