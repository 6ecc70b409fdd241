/* laplacian_filter — the Laplacian of a migrated image, against the low-wavenumber
 * artifacts of cross-correlation RTM (the backscatter from sharp velocity contrasts
 * images as smooth, large-amplitude noise above the reflectors; Youn & Zhou 2001,
 * Zhang & Sun 2009).  A second derivative boosts the reflector wavenumbers by k^2 and
 * suppresses the smooth part.
 *
 * out = -h^2 lap(in), second-order stencil with the separate spacings d, and
 * h = min(d) over the axes of more than one cell (all axes when none has), so the
 * output keeps the input's scale (the y spacing of a 2D model, one cell across, is
 * no scale of the image).  The sign makes a positive
 * reflector stay positive (the Laplacian of a peak is negative).  On the grid's faces
 * the stencil is mirrored (the missing neighbour is the one on the other side), and an
 * axis of one cell contributes nothing: a 2D-like model one or two cells thick keeps
 * its image (zeroing the faces emptied it).  Inside, the plain 7-point stencil.
 *
 * CPU reference here; CUDA twin laplacian_filter_cuda on device pointers. */
#ifndef SEISLIVE_LAPLACIAN_FILTER_H
#define SEISLIVE_LAPLACIAN_FILTER_H

#ifdef __cplusplus
extern "C" {
#endif

void laplacian_filter_cpu(const int n[3], const double d[3], const float *in, float *out);

/* The h of the filter for grid N, D (see above). */
static inline double laplacian_filter_h(const int n[3], const double d[3])
{
    double h = 0.0;
    for (int a = 0; a < 3; a++)
        if (n[a] > 1 && (h == 0.0 || d[a] < h))
            h = d[a];
    if (h == 0.0)
        h = d[0] < d[1] ? (d[0] < d[2] ? d[0] : d[2]) : (d[1] < d[2] ? d[1] : d[2]);
    return h;
}

#ifdef SEISLIVE_CUDA
/* IN and OUT are device pointers; STREAM a cudaStream_t (NULL = default).  0 or -EIO. */
int laplacian_filter_cuda(const int n[3], const double d[3], const float *in, float *out,
                          void *stream);
#endif

#ifdef __cplusplus
}
#endif

#endif
