/* revolve: the binomial schedule visits every state in reverse order and recomputes
 * exactly the least number of forward steps, found here independently by dynamic
 * programming over every split (Griewank's recurrence); the closed form agrees; the
 * uniform schedule visits correctly with two forward sweeps. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "kernels/revolve.h"
#include "stream/error.h"

#define NMAX 70
#define SMAX 6

/* cost[s][n]: least advances to visit n states backward with s slots (x_0 stored). */
static long cost[SMAX + 1][NMAX + 1];

static void dp(void)
{
    for (int s = 1; s <= SMAX; s++)
        for (int n = 1; n <= NMAX; n++) {
            if (n == 1) {
                cost[s][n] = 0;
                continue;
            }
            long best = -1;
            if (s == 1) {
                best = 0; /* restore x_0 and advance j for each j */
                for (int j = 1; j < n; j++)
                    best += j;
            } else {
                for (int m = 1; m < n; m++) {
                    long c = m + cost[s - 1][n - m] + cost[s][m];
                    if (best < 0 || c < best)
                        best = c;
                }
            }
            cost[s][n] = best;
        }
}

Test(revolve, binomial_is_optimal_and_correct)
{
    dp();
    for (int s = 1; s <= SMAX; s++)
        for (int n = 1; n <= NMAX; n++) {
            struct rv_schedule sc;
            cr_assert_eq(revolve_binomial(n, s, &sc), 0, "%s", err_msg());
            cr_assert_eq(revolve_check(&sc), 0, "n=%d s=%d: %s", n, s, err_msg());
            cr_assert_eq(sc.advances, cost[s][n], "n=%d s=%d: %ld advances, optimum %ld", n, s,
                         sc.advances, cost[s][n]);
            cr_assert_eq(revolve_min_steps(n, s), cost[s][n], "closed form n=%d s=%d", n, s);
            cr_assert_leq(sc.snaps, s);
            revolve_free(&sc);
        }
}

Test(revolve, known_values)
{
    /* Griewank & Walther: 1 snap is quadratic; n <= s + 1 needs only n - 1 advances. */
    cr_assert_eq(revolve_min_steps(10, 1), 45);
    cr_assert_eq(revolve_min_steps(5, 10), 4);
    /* beta(2, 2) = 6 states reversed with 2 snaps and repetition 2: 2*6 - beta(3,1) = 8. */
    cr_assert_eq(revolve_min_steps(6, 2), 8);
}

Test(revolve, large_binomial_schedule)
{
    struct rv_schedule sc;
    cr_assert_eq(revolve_binomial(3001, 20, &sc), 0, "%s", err_msg());
    cr_assert_eq(revolve_check(&sc), 0, "%s", err_msg());
    cr_assert_eq(sc.advances, revolve_min_steps(3001, 20));
    /* beta(20,3) = 1771 < 3001 <= beta(20,4): repetition number 4, under 4 sweeps */
    cr_assert_lt(sc.advances, 4L * 3001);
    revolve_free(&sc);
}

Test(revolve, uniform)
{
    int cases[][2] = {{1, 1}, {10, 1}, {10, 3}, {100, 10}, {101, 10}, {57, 8}, {5, 9}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        int n = cases[k][0], s = cases[k][1];
        struct rv_schedule sc;
        cr_assert_eq(revolve_uniform(n, s, &sc), 0, "%s", err_msg());
        cr_assert_eq(revolve_check(&sc), 0, "n=%d s=%d: %s", n, s, err_msg());
        int seg = revolve_uniform_segment(n, s);
        cr_assert_eq(sc.buf, seg);
        cr_assert_leq(sc.snaps, s);
        cr_assert_lt(sc.advances, 2L * n, "n=%d s=%d advances %ld", n, s, sc.advances);
        revolve_free(&sc);
    }
}

Test(revolve, refuses_bad_input)
{
    struct rv_schedule sc;
    cr_assert_eq(revolve_binomial(0, 3, &sc), -EINVAL);
    cr_assert_eq(revolve_binomial(10, 0, &sc), -EINVAL);
    cr_assert_eq(revolve_uniform(10, 0, &sc), -EINVAL);
}
