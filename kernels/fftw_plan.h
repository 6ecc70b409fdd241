/* fftw_plan — the process's one lock around FFTW's planner.
 *
 * FFTW's planner is not thread-safe (its execute functions are: fftw3 manual, "Thread
 * safety"), and the rtm engine, the model job and seislive check may plan from different
 * threads: every plan made or destroyed in the process (kernels/time_dispersion.c,
 * kernels/wavelet.c) holds this lock. */
#ifndef SEISLIVE_FFTW_PLAN_H
#define SEISLIVE_FFTW_PLAN_H

#include <pthread.h>

extern pthread_mutex_t fftw_plan_lock;

#endif
