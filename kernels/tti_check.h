/* tti_check — a TTI model check's result together with what it saw (kernels/tti.h
 * tti_model_check), handed from a caller that checked a model to the simulations made of
 * it (an RTM shot's receiver and source simulations: 26 M points of 380 x 380 x 180
 * checked once instead of twice).
 *
 * Why the witness and not a flag: a model struct is copied (a subdomain's part of the
 * whole model starts as a copy, tests reuse one for the next case), and a flag copied with
 * it would let points nobody checked skip validation.  A simulation takes the result only
 * for the very points it was computed on, the same arrays, constants, cell count and
 * sigma (tti_check_matches in kernels/tti.c); anything else is checked again.  The caller
 * must not change the arrays between its check and the simulations' creation.  Zeroed (as
 * an initialiser leaves it): no check. */
#ifndef SEISLIVE_KERNELS_TTI_CHECK_H
#define SEISLIVE_KERNELS_TTI_CHECK_H

#include <stddef.h>

struct tti_check {
    double vqp;             /* the fastest qP speed; > 0: a check passed */
    double sigma;           /* the sigma it was checked with */
    size_t nless;           /* its count of points with eps < delta */
    size_t n;               /* cells checked */
    const float *arrays[5]; /* v_pz, eps, delta, theta, phi as checked (NULL: constant) */
    double consts[4];       /* eps0, delta0, theta0, phi0 as checked */
};

#endif
