/* stack — coherent stacking (emission tomography) of characteristic functions:
 *
 *   s_j(t) = N( sum over rows r of CF_r(t + D_rj) )      for t in [0, nt), every trial point j
 *
 * where a row is one (station, phase), D_rj the travel time in whole samples, and N the
 * normalization: none (the sum), count (divided by the number of rows whose CF sample
 * is valid, i.e. not NaN) or geometric (CF holds log values; exp of their mean).
 * Invalid (NaN) CF samples are left out of both the sum and the count.
 *
 * The 4D map s_j(t) is never stored.  Two reductions are made on the fly:
 *   max_val[t], max_idx[t]: the maximum over trial points at each time (ties: smallest j)
 *   coh[j]:                 the maximum over the nt times for each trial point.
 *
 * Layout: delay is nrow x nj_pad uint16 (j fastest, nj_pad = stack_nj_pad(nj), padding
 * zero); cf is nrow rows of cf_stride floats, readable (NaN where invalid) up to index
 * stack_cf_need(nt, max_delay) - 1, which the caller guarantees.  Rows are summed in
 * order 0..nrow-1 in float on both backends, so the sums agree bit for bit.
 *
 * Delays are whole samples (uint16); sub-sample travel times are used only by the
 * engine's refinement of a detected event (on the host).  CUDA kernels: `staged`
 * (default: each row's CF window for the block's 32 points is copied once into shared
 * memory), `staged-db` (the same with two alternating window buffers) and `direct` (the
 * first version: every sum read through L1), chosen by struct stack_tuning when the
 * context is created (seislive-bench stack --kernels; docs/PERFORMANCE.md has the
 * measurements: staged-db gains 2 % at 128^3 and falls back to global reads at half the
 * delay spread, direct is half as fast, so only the benchmark and the tests pick them);
 * see stack.cu. */
#ifndef SEISLIVE_STACK_H
#define SEISLIVE_STACK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STACK_J_TILE 32   /* trial points per CUDA thread block */
#define STACK_T_TILE 128  /* times per CUDA thread block */

struct stack_args {
    int nrow;
    size_t nj, nj_pad;
    const uint16_t *delay;
    int max_delay;
    const float *cf;
    size_t cf_stride;
    int nt;
    int norm;            /* enum stack_normalization */
    float *max_val;      /* nt */
    int32_t *max_idx;    /* nt; -1 when no point has a value */
    float *coh;          /* nj */
};

static inline size_t stack_nj_pad(size_t nj)
{
    return (nj + STACK_J_TILE - 1) / STACK_J_TILE * STACK_J_TILE;
}
/* Samples a CF row must hold for NT times with delays up to MAX_DELAY. */
static inline size_t stack_cf_need(int nt, int max_delay)
{
    return (size_t)((nt + STACK_T_TILE - 1) / STACK_T_TILE * STACK_T_TILE) + (size_t)max_delay + 1;
}

/* N of the stack (the [locate] normalize key; the job maps it). */
enum stack_normalization { STACK_NORM_NONE = 0, STACK_NORM_COUNT = 1, STACK_NORM_GEOMETRIC = 2 };

enum stack_kernel { STACK_KERNEL_STAGED = 0, STACK_KERNEL_DIRECT = 1, STACK_KERNEL_STAGED_DB = 2 };

/* The CUDA kernel variant, read once when a context is created.  All zero = the default
 * (staged). */
struct stack_tuning {
    int kernel;          /* enum stack_kernel */
};

/* "staged", "direct", "staged-db"; NULL for another value. */
const char *stack_kernel_name(int kernel);
/* The enum stack_kernel of NAME, or -1. */
int stack_kernel_parse(const char *name);

/* CPU stack (OpenMP over blocks of trial points, SIMD over time; kernels/stack_cpu.c):
 * the widest instruction set this CPU runs (stack_cpu_isa_best).  The same result bit for
 * bit as stack_run_cpu_ref and the CUDA kernels (rows are summed in the same order).
 * Returns 0 or -ENOMEM. */
int stack_run_cpu(const struct stack_args *a);
/* The first CPU version (one trial point at a time; kernels/stack.c), the oracle of the
 * fast path in tests. */
int stack_run_cpu_ref(const struct stack_args *a);

/* Instruction-set variants of the CPU stack, chosen at run time (__builtin_cpu_supports):
 * generic = the build's own flags (x86-64-v2: SSE4.2 on x86, NEON on arm64, ...). */
enum stack_cpu_isa { STACK_CPU_GENERIC = 0, STACK_CPU_AVX2 = 1, STACK_CPU_AVX512 = 2, STACK_CPU_NISA = 3 };
/* "generic", "avx2", "avx512"; NULL for another value. */
const char *stack_cpu_isa_name(int isa);
/* 1 when ISA is compiled in and this CPU runs it. */
int stack_cpu_isa_supported(int isa);
/* The widest supported variant (what stack_run_cpu uses). */
int stack_cpu_isa_best(void);
/* stack_run_cpu with a given variant (benchmarks and tests); -EINVAL when unsupported. */
int stack_run_cpu_isa(const struct stack_args *a, int isa);

#ifdef SEISLIVE_CUDA
/* CUDA twin on device pointers (kernels/device.h allocates and copies them).  CTX keeps
 * scratch between calls (create once per engine/thread) and the kernel TUNING chose
 * (NULL: the default); STREAM is a cudaStream_t (0 = default).  Returns 0 or -EIO. */
struct stack_cuda;
int stack_cuda_create(struct stack_cuda **ctx, const struct stack_tuning *tuning);
int stack_run_cuda(struct stack_cuda *ctx, const struct stack_args *a, void *stream);
void stack_cuda_destroy(struct stack_cuda *ctx);

/* For benchmarks and tests.  Fill the device delay table DELAY (nrow x nj_pad, padding 0)
 * with straight-ray times in a homogeneous medium of velocity V from the stations
 * STA_XYZ (host, nrow x 3 floats, m) to the points of the grid N/D/O (x fastest):
 * llrint(distance / (v dt)) in double with explicit roundings, so a host loop doing
 * the same arithmetic gets the same table. */
int stack_cuda_delays_straight(uint16_t *delay, size_t nj_pad, int nrow, const float *sta_xyz, const int n[3],
                               const double d[3], const double o[3], double v, double dt);
/* SM clock in GHz, timed with a kernel that spins SMS warps for a known cycle count. */
int stack_cuda_clock_ghz(int sms, double *ghz);
#endif

#ifdef __cplusplus
}
#endif

#endif
