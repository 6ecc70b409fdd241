/* subvolume — the part of the full model one shot illuminates.
 *
 * A shot's sub-volume spans, in x and y, the box of its receivers and source widened
 * by the aperture ([rtm] aperture) on each side, clipped to the model; in z the whole
 * depth.  The propagator adds its absorbing layers outside it (kernels/wave.h), so
 * memory and time scale with the shot's spread, not with the survey.  The shot image
 * has the sub-volume's size and goes back into the full image at `off`
 * (stream/image_stack.h, or subvolume_paste_add). */
#ifndef SEISLIVE_SUBVOLUME_H
#define SEISLIVE_SUBVOLUME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct subvolume {
    int off[3];   /* first cell in the full grid */
    int n[3];     /* cells per axis */
    double o[3];  /* coordinates of its first cell, m */
};

/* The sub-volume of a shot with source SRC and NREC receivers REC (x, y, z floats, m)
 * in the full grid N, D, O, widened by APERTURE (m).  Receivers outside the model are
 * not counted for the box (the caller drops and counts them); the source must lie
 * inside the model (-EINVAL, err_msg() with its coordinates). */
int subvolume_of_shot(const int n[3], const double d[3], const double o[3], const double src[3],
                      const float *rec, size_t nrec, double aperture, struct subvolume *out);

/* True when point P (m) lies inside the grid N, D, O (its cell range, edges included;
 * on an axis of one cell: on its line, within float32 rounding). */
int subvolume_contains(const int n[3], const double d[3], const double o[3], const double p[3]);
/* The same on one axis of N cells. */
int subvolume_axis_contains(int n, double d, double o, double p);

/* Copy the sub-volume SV of the full array FULL (grid N) into PART (sv->n cells). */
void subvolume_cut(const int n[3], const float *full, const struct subvolume *sv, float *part);

/* FULL += PART at the sub-volume's place. */
void subvolume_paste_add(const int n[3], float *full, const struct subvolume *sv, const float *part);

size_t subvolume_cells(const struct subvolume *sv);

#ifdef __cplusplus
}
#endif

#endif
