/* imaging — the imaging conditions of reverse time migration.
 *
 * With u the source wavefield and q the receiver wavefield at the imaging steps n:
 *   xcorr     I = sum_n u q                                  (cross-correlation)
 *   source    I = sum_n u q / (sum_n u^2 + eps_s)            (source illumination)
 *   receiver  I = sum_n u q / (sum_n q^2 + eps_r)            (receiver illumination)
 *   both      I = sum_n u q / sqrt((sum_n u^2 + eps_s)(sum_n q^2 + eps_r))
 * eps = IMAGING_EPS_REL x the largest illumination of the shot: it keeps the division
 * finite where a wavefield never arrives, without touching where it does.
 *
 * The wavefields live on the propagation grid (with absorbing layers); the image
 * covers a box inside it.  Accumulation runs at every imaging step, finalization once
 * per shot.  CPU reference (OpenMP) here, CUDA twin *_cuda on device pointers with
 * the same arithmetic (GPU result within float rounding of the CPU one). */
#ifndef SEISLIVE_IMAGING_H
#define SEISLIVE_IMAGING_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IMAGING_EPS_REL 1e-3

/* The conditions above (the twins of conf/config.h's enum imaging_cond, same values). */
enum imaging_cond_kind { IMAGING_XCORR = 0, IMAGING_SOURCE = 1, IMAGING_RECEIVER = 2, IMAGING_BOTH = 3 };

/* Where the image box sits inside a wavefield array (the box size is the image's). */
struct imaging_box {
    int n[3];      /* image size */
    int off[3];    /* index in the wavefield of the image's first cell */
    int pitch[2];  /* wavefield nx, ny (x fastest, z slowest) */
};

/* Per-shot accumulators, all of the image box size.  NUM is always kept; ILL_S and
 * ILL_R may be NULL when nothing needs them: the condition (imaging_needs_source,
 * imaging_needs_receiver) or, for ILL_S, the caller (the image stack keeps the source
 * illumination beside the image).  A NULL accumulator is neither read nor written. */
struct imaging_acc {
    float *num;
    float *ill_s;
    float *ill_r;
};

/* True when COND (enum imaging_cond_kind) needs the receiver / source illumination. */
int imaging_needs_receiver(int cond);
int imaging_needs_source(int cond);

size_t imaging_cells(const struct imaging_box *b);

/* acc += (u q, u^2, q^2) over the image box; U and Q may sit in arrays of different
 * layouts (BU, BQ: same n, own off and pitch), e.g. a compact stored u. */
void imaging_accumulate_cpu(const struct imaging_box *bu, const float *u,
                            const struct imaging_box *bq, const float *q,
                            const struct imaging_acc *acc);
/* The same for image row (y, z) alone (RTM's fused pass, kernels/rtm_fused.c). */
void imaging_accumulate_row_cpu(const struct imaging_box *bu, const float *u, const struct imaging_box *bq,
                                const float *q, const struct imaging_acc *acc, int y, int z);
/* Copy the box of a wavefield into a compact array (x fastest), e.g. to store u. */
void imaging_extract_cpu(const struct imaging_box *b, const float *field, float *out);
/* OUT = the shot image by COND from the accumulators (OUT may alias acc->num). */
void imaging_finalize_cpu(const struct imaging_box *b, int cond, const struct imaging_acc *acc,
                          float *out);

#ifdef SEISLIVE_CUDA
/* Device pointers; STREAM a cudaStream_t (NULL = default).  0 or -EIO.  The
 * accumulation takes 4 cells of a row per thread (float4) when every row of u, q and
 * the accumulators starts on 16 bytes, unless SCALAR (tuning: rtm_tuning.imaging_scalar)
 * asks for the one-cell kernel; the two give the same bits. */
int imaging_accumulate_cuda(const struct imaging_box *bu, const float *u,
                            const struct imaging_box *bq, const float *q,
                            const struct imaging_acc *acc, bool scalar, void *stream);
int imaging_extract_cuda(const struct imaging_box *b, const float *field, float *out, void *stream);
/* SCRATCH: device memory of 2 floats. */
int imaging_finalize_cuda(const struct imaging_box *b, int cond, const struct imaging_acc *acc,
                          float *out, float *scratch, void *stream);
#endif

#ifdef __cplusplus
}
#endif

#endif
