/* points_nodes — point sets of single grid nodes, weight 1 each (no interpolation).
 *
 * A subdomain of a decomposed grid (stream/decompose_points.c) injects and samples a
 * source or receiver whose interpolation support crosses a cut: it computes the whole
 * grid's weights itself and hands the nodes it owns to the ordinary wave_inject /
 * wave_sample through a set of this kind, so what lands in each cell (and what is read
 * from it) is the whole grid's, bit for bit.  Nodes are addressed by interior index and
 * may lie in the absorbing layers (negative, or >= n, along a face with layers). */
#ifndef SEISLIVE_POINTS_NODES_H
#define SEISLIVE_POINTS_NODES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct wave_sim;
struct wave_points;

/* N nodes at interior indices IJK (3 per node, x y z; y is 0 in 2D); -EINVAL naming the
 * first node outside the grid with its layers. */
int wave_points_create_nodes(struct wave_sim *s, const int *ijk, size_t n, struct wave_points **out);

#ifdef __cplusplus
}
#endif

#endif
