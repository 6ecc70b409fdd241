/* propagator — the one interface every wave physics implements.
 *
 * RTM's strategies (kernels/rtm*.c), the model job (stream/job_model.c), `check` and
 * the benchmarks drive a simulation only through the operations below, without knowing
 * which physics runs underneath.  A physics is a table of operations (struct prop_ops);
 * the isotropic acoustic propagator (kernels/wave.h, prop_acoustic.c) is the first.
 * Adding one (TTI, issue 14) means one new table and its kernels; nothing above changes.
 *
 * What a caller sees, whatever the physics:
 *   - a grid (struct prop_grid, the subdomain descriptor): interior points n, spacing d,
 *     origin o, and per face what lies beyond it (enum prop_face): absorbing CPML layers,
 *     a free surface, random-velocity layers, nothing (the axis of a 2D model, n = 1), or
 *     a neighbour subdomain whose planes arrive in the halo (prop_halo_pack / _unpack);
 *   - a derivative operator (struct prop_operator: kind and order), a parameter of the
 *     physics, not a copy of its kernels;
 *   - two time levels of the wavefield(s) (cur, prev): step forward, step backward,
 *     swap, save and restore the whole state, save and restore the boundary strip;
 *   - point sets for injection and sampling (sources and receivers), interpolated;
 *   - the recorded field (acoustic: p; TTI: p) at the current time level, for imaging;
 *   - the memory it will take, before it is created.
 *
 * Time convention, for every physics (kernels/wave.h gives the acoustic discrete form):
 * a step takes (cur = u(n), prev = u(n-1)) to (cur = u(n+1), prev = u(n)); a source
 * sample f(n) injected after step n shows in u(n+1); a trace sample is the recorded
 * field at step n.  A reverse step takes (cur = u(n), prev = u(n+1)) to (cur = u(n-1),
 * prev = u(n)) with the absorbing terms left out.
 *
 * Errors: 0 or a negative errno with err_msg() (stream/error.h).  Threading: one thread
 * at a time per simulation.  CUDA work goes on the simulation's stream. */
#ifndef SEISLIVE_PROPAGATOR_H
#define SEISLIVE_PROPAGATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/backend.h"
#include "kernels/tti_check.h"

#ifdef __cplusplus
extern "C" {
#endif

enum prop_physics {
    PROP_ACOUSTIC = 0,  /* isotropic, constant density: p_tt = v^2 lap p + v^2 f */
    PROP_TTI = 1,       /* pseudo-acoustic TTI, Fletcher, Du & Fowler 2009 (kernels/tti.h) */
    PROP_PHYSICS_COUNT
};

/* Spatial derivative operators (the coefficients the kernels apply). */
enum prop_op_kind {
    PROP_OP_TAYLOR = 0,    /* explicit central differences, Taylor (Fornberg) weights */
    PROP_OP_OPTIMIZED = 1, /* explicit, same half-width, weights designed over a band (issue 15) */
    PROP_OP_IMPLICIT = 2,  /* recursive (implicit) second derivative, tridiagonal sweeps (issue 15) */
    PROP_OP_COUNT
};

struct prop_operator {
    int kind;            /* enum prop_op_kind */
    int order;           /* even, 2..16 */
    double band;         /* optimized/implicit: fraction of the Nyquist wavenumber the design
                            holds; 0 = the operator's default */
};

/* What lies beyond a face of the grid. */
enum prop_face {
    PROP_FACE_CPML = 0,   /* absorbing CPML layers of width[f] cells (0: a rigid p = 0 wall) */
    PROP_FACE_FREE = 1,   /* free surface p = 0 on the first interior plane (top face only) */
    PROP_FACE_RANDOM = 2, /* width[f] cells of random-velocity layers, no damping (Clapp 2009) */
    PROP_FACE_NONE = 3,   /* nothing: the y axis of a 2D model (n[1] = 1; both y faces) */
    PROP_FACE_HALO = 4,   /* a neighbour subdomain: its planes are unpacked into the halo;
                             width[f] is the WHOLE grid's layer width on that side (held by
                             another subdomain: it places this one in the whole grid) */
};

/* Face index: 2 * axis + (0 low, 1 high): xmin xmax ymin ymax zmin zmax. */
#define PROP_FACES 6

/* The grid a propagator runs on (a whole model or one subdomain of it). */
struct prop_grid {
    int n[3];            /* interior points (>= 1 each; n[1] == 1 with NONE y faces: 2D) */
    double d[3];         /* spacing, m */
    double o[3];         /* coordinates of interior point (0,0,0), m */
    int face[PROP_FACES];  /* enum prop_face */
    int width[PROP_FACES]; /* layer cells for CPML and RANDOM faces; the whole grid's on
                              HALO faces; ignored on FREE and NONE faces */
    /* A subdomain of a larger grid: its first interior point is point `origin` of the
     * whole interior grid of `global_n` points (all 0: the grid is whole).  Profiles and
     * random layers are computed in global coordinates, so subdomains match the whole. */
    int origin[3];
    int global_n[3];
};

/* Kernel tuning read once (never from the environment at launch time); the defaults
 * (all zero) are the production choices.  See docs/TUNING.md. */
struct prop_tuning {
    int kernel;          /* 0 auto, 1 naive, 2 tiled (CUDA interior kernel) */
    int tile[2];         /* tiled kernel x, y tile; 0 = default */
    int naive_block[2];  /* naive kernel block x, y; 0 = default */
    int prefetch;        /* 0 default, 1 on, -1 off */
    int layer_zchunk;    /* CPML layer kernel z chunk; 0 = default */
};

struct prop_params {
    int physics;                /* enum prop_physics */
    struct prop_grid grid;
    struct prop_operator op;
    double dt;                  /* s (check stability first: kernels/stability.h) */
    double pml_reflection;      /* CPML theoretical normal-incidence reflection, e.g. 1e-4 */
    double f_ref;               /* Hz: dominant frequency for the CPML alpha */
    double vmax_cpml;           /* m/s for the CPML damping; 0: the model's max (a subdomain
                                   passes the whole model's, so its layers match) */
    struct prop_tuning tuning;
    double tti_sigma;           /* TTI: v_sz^2 = v_pz^2 (epsilon - delta_eff) / tti_sigma (> 0;
                                   prop_params_init: 0.75); ignored by other physics */
    int cpml_memory;            /* acoustic: storage of the CPML memory, enum wave_cpml_memory
                                   (kernels/wave.h; 0 fp32, the reference); TTI: 0 only */
    int pml_degree;             /* CPML damping's polynomial degree (kernels/cpml.h); 0 = 2 */
};

/* The earth model on the interior grid (host memory, x fastest, n[0] n[1] n[2]). */
struct prop_model {
    const float *vp;            /* P velocity, m/s (acoustic: the velocity; TTI: v_pz, along
                                   the symmetry axis) */
    /* TTI only: Thomsen's epsilon and delta, the tilt theta of the symmetry axis from the
     * vertical (radians, |theta| <= pi/2) and its azimuth phi from x towards y (radians,
     * |phi| <= 2 pi); a NULL array takes the constant (..0) beside it. */
    const float *epsilon, *delta, *theta, *phi;
    double epsilon0, delta0, theta0, phi0;
    /* TTI only: a check of this model the caller ran and it passed, with what it saw
     * (kernels/tti_check.h); the simulation takes its results only for these very points
     * and sigma, else checks them itself.  Zeroed: the simulation checks. */
    struct tti_check tti_checked;
};

/* Where things are in the arrays of the recorded field (counts in elements). */
struct prop_layout {
    int n[3];            /* interior */
    int npad[3];         /* interior + layers */
    int halo;            /* stencil half-width */
    int dim[3];          /* allocated dims */
    int off[3];          /* index of interior (0,0,0) in the allocated array */
    size_t stride_y, stride_z;
    size_t count;        /* elements of one allocated field array */
};

/* Interpolation of off-grid points. */
enum prop_interp { PROP_INTERP_SINC = 0, PROP_INTERP_TRILINEAR = 1, PROP_INTERP_NEAREST = 2 };

/* Flags of prop_inject / prop_sample. */
enum {
    PROP_BUF_DEVICE = 1 << 0,       /* amps / out is device memory (CUDA simulations) */
    PROP_INJECT_PHYSICAL = 1 << 1,  /* a source term f, scaled so that a homogeneous
                                       medium gives s(t - r/v) / (4 pi r) (kernels/wave.h) */
};

struct prop;
struct prop_points;
struct random_boundary;
struct prop_fused;
struct imaging_box; /* kernels/imaging.h */
struct imaging_acc;

/* prop_set_mid_exchange's callback (below). */
typedef int (*prop_mid_fn)(void *ctx, struct prop *s);

struct prop_ops {
    const char *name;
    int (*check)(const struct prop_params *p);
    size_t (*memory_bytes)(const struct prop_params *p);
    size_t (*state_bytes)(const struct prop_params *p);
    int (*layout_of)(const struct prop_params *p, struct prop_layout *out);
    int (*create)(const struct sl_device *dev, const struct prop_params *p, const struct prop_model *m,
                  struct prop **out);
    int (*create_like)(const struct prop *like, struct prop **out);
    void (*destroy)(struct prop *s);
    void (*set_stream)(struct prop *s, void *stream);
    int (*sync)(struct prop *s);
    int (*reset)(struct prop *s);
    int (*step)(struct prop *s);
    int (*step_reverse)(struct prop *s);
    void (*set_reverse_interior)(struct prop *s, bool on);
    void (*swap)(struct prop *s);
    int64_t (*step_index)(const struct prop *s);
    void (*set_absorbing)(struct prop *s, bool on);
    int (*randomize_layers)(struct prop *s, const struct random_boundary *rb, uint64_t shot_id);
    int (*points_create)(struct prop *s, const double *xyz, size_t n, int interp, struct prop_points **out);
    void (*points_destroy)(struct prop_points *pts);
    int (*inject)(struct prop *s, const struct prop_points *pts, const float *amps, size_t stride, float scale,
                  unsigned flags);
    int (*sample)(struct prop *s, const struct prop_points *pts, float *out, size_t stride, unsigned flags);
    const float *(*field)(struct prop *s);
    const struct prop_layout *(*layout)(const struct prop *s);
    int (*copy_out)(struct prop *s, bool prev, float *host);
    int (*copy_in)(struct prop *s, bool prev, const float *host);
    size_t (*strip_count)(const struct prop *s);
    int (*strip_save)(struct prop *s, float *buf, bool on_device);
    int (*strip_load)(struct prop *s, const float *buf, bool on_device);
    size_t (*state_size)(const struct prop *s);
    int (*state_save)(struct prop *s, void *buf, bool on_device);
    int (*state_load)(struct prop *s, const void *buf, bool on_device);
    size_t (*halo_count)(const struct prop *s, int face);
    int (*halo_pack)(struct prop *s, int face, float *buf);
    int (*halo_unpack)(struct prop *s, int face, const float *buf);
    void (*describe)(const struct prop *s, char *buf, size_t len);
    /* optional (NULL: -ENOTSUP): single-node point sets (prop_points_create_nodes) */
    int (*nodes_create)(struct prop *s, const int *ijk, size_t n, struct prop_points **out);
    /* optional (NULL: -ENOTSUP): a step in parts, halo planes on a stream (below) */
    int (*step_part)(struct prop *s, int part);
    bool (*has_step_part)(const struct prop *s);
    int (*halo_pack_async)(struct prop *s, int face, float *buf, void *stream);
    int (*halo_unpack_async)(struct prop *s, int face, const float *buf, void *stream);
    /* optional (NULL: -ENOTSUP): RTM's fused backward step (prop_fused_create) */
    int (*fused_create)(struct prop *q, struct prop *u, int variant, void **out);
    int (*fused_step)(void *f, const struct imaging_box *b, const struct imaging_acc *acc);
    int (*fused_image_step)(void *f, const struct imaging_box *b, const struct imaging_acc *acc, void *ev);
    void (*fused_destroy)(void *f);
    /* optional (NULL: no exchange inside a step): a step in stages (below) */
    int (*step_stage)(struct prop *s, int stage);
    int (*set_mid_exchange)(struct prop *s, prop_mid_fn fn, void *ctx);
};

/* Every simulation starts with this header (implementations embed it first). */
struct prop {
    const struct prop_ops *ops;
    const struct sl_device *dev;
    struct prop_params p;
};

/* The table of PHYSICS, or NULL. */
const struct prop_ops *prop_ops_of(int physics);
const char *prop_physics_name(int physics);

/* Parameters filled with the defaults: acoustic, Taylor order 8, CPML faces of WIDTH
 * cells (NONE on y when n[1] == 1: 2D), no subdomain. */
void prop_params_init(struct prop_params *p, const int n[3], const double d[3], const double o[3], double dt,
                      int width);

/* ---- planning (no allocation) ---- */
int prop_check(const struct prop_params *p);
size_t prop_memory_bytes(const struct prop_params *p);
size_t prop_state_bytes_of(const struct prop_params *p);
int prop_layout_of(const struct prop_params *p, struct prop_layout *out);

/* ---- life cycle ---- */
int prop_create(const struct sl_device *dev, const struct prop_params *p, const struct prop_model *m,
                struct prop **out);
int prop_create_like(const struct prop *like, struct prop **out);
/* M's TTI model (kernels/tti.h): its arrays, constants and handed-over check, as a TTI
 * simulation takes it (callers that check a prop_model themselves) */
struct tti_model;
void prop_tti_model(const struct prop_model *m, struct tti_model *out);
void prop_destroy(struct prop *s);
static inline const struct prop_params *prop_params_of(const struct prop *s) { return &s->p; }
static inline const struct sl_device *prop_device(const struct prop *s) { return s->dev; }
void prop_set_stream(struct prop *s, void *stream);
int prop_sync(struct prop *s);
int prop_reset(struct prop *s);

/* ---- stepping ---- */
int prop_step(struct prop *s);
int prop_step_reverse(struct prop *s);
void prop_set_reverse_interior(struct prop *s, bool on);
void prop_swap(struct prop *s);
int64_t prop_step_index(const struct prop *s);

/* ---- boundaries ---- */
/* Absorbing layers damped (default) or not (time-reversible, for the random boundary). */
void prop_set_absorbing(struct prop *s, bool on);
int prop_randomize_layers(struct prop *s, const struct random_boundary *rb, uint64_t shot_id);

/* ---- sources and receivers ---- */
int prop_points_create(struct prop *s, const double *xyz, size_t n, int interp, struct prop_points **out);
void prop_points_destroy(struct prop *s, struct prop_points *pts);
int prop_inject(struct prop *s, const struct prop_points *pts, const float *amps, size_t stride, float scale,
                unsigned flags);
int prop_sample(struct prop *s, const struct prop_points *pts, float *out, size_t stride, unsigned flags);

/* ---- the recorded field ---- */
/* cur of the recorded field (device memory on CUDA), valid until the next step or swap. */
const float *prop_field(struct prop *s);
const struct prop_layout *prop_layout(const struct prop *s);
int prop_copy_out(struct prop *s, bool prev, float *host);
int prop_copy_in(struct prop *s, bool prev, const float *host);

/* ---- time reversal and checkpoints ---- */
size_t prop_strip_count(const struct prop *s);
int prop_strip_save(struct prop *s, float *buf, bool on_device);
int prop_strip_load(struct prop *s, const float *buf, bool on_device);
size_t prop_state_bytes(const struct prop *s);
int prop_state_save(struct prop *s, void *buf, bool on_device);
int prop_state_load(struct prop *s, const void *buf, bool on_device);

/* ---- subdomains: halo planes of a HALO face (host buffers) ----
 * prop_halo_count: floats of one exchange across FACE (0 when FACE is not HALO).  Pack
 * the planes next to FACE of the current field, unpack them into the neighbour's halo
 * beyond its opposite face (face ^ 1), for every cut after each step and injection;
 * then step all subdomains.  Stepped so, the subdomains give the whole grid's result bit
 * for bit (tests/test_subdomain.c).  kernels/wave.h (wave_halo_pack) gives the layout. */
size_t prop_halo_count(const struct prop *s, int face);
int prop_halo_pack(struct prop *s, int face, float *buf);
int prop_halo_unpack(struct prop *s, int face, const float *buf);

/* ---- subdomains: a step in parts, so the halo exchange runs beside the interior ----
 * prop_step_part(s, PROP_PART_CUT_SLABS) computes only the `halo` planes next to every
 * HALO face (what prop_halo_pack sends) and leaves them in the current field: pack them,
 * inject into them, start their exchange; prop_step_part(s, PROP_PART_REST) then
 * computes every other cell and ends the step.  The pair is prop_step bit for bit (CPU;
 * CUDA: see kernels/wave.h, wave_step_part).  Between the two, the other cells of the
 * current field are not the new level yet: inject into them and sample after REST.
 * PROP_PART_ALL is prop_step.  -ENOTSUP where a physics or operator has no parts (the
 * implicit operator: step whole and exchange after; TTI: its stages, below). */
enum prop_part { PROP_PART_ALL = 0, PROP_PART_CUT_SLABS = 1, PROP_PART_REST = 2 };
int prop_step_part(struct prop *s, int part);
/* Whether S steps in parts (prop_step_part does not answer -ENOTSUP). */
bool prop_has_step_part(const struct prop *s);
/* prop_halo_pack / _unpack without synchronising: BUF is device memory on a GPU (host
 * memory on the CPU, where these are the calls above) and the copy is queued on STREAM
 * (cudaStream_t; NULL the default stream).  The caller orders STREAM after the work
 * that wrote the planes and the next step after the unpack (events, kernels/device.h). */
int prop_halo_pack_async(struct prop *s, int face, float *buf, void *stream);
int prop_halo_unpack_async(struct prop *s, int face, const float *buf, void *stream);

/* ---- subdomains: a step with an exchange inside it ----
 * TTI's step is two passes, the second differentiating products formed by the first
 * (kernels/tti_internal.h), so its subdomains exchange twice per step: the fields after
 * the step (as above), and the products between the passes.  Where
 * prop_has_step_stage(s), step as
 *   prop_step_stage(s, PROP_STAGE_PASS1); exchange (prop_halo_pack / _unpack, same
 *   counts, now carry the products); prop_step_stage(s, PROP_STAGE_UPDATE)
 * for the whole grid's step bit for bit (the update ends the step: swap, step index).
 * -ENOTSUP where a physics has none (acoustic: one exchange suffices) or on a GPU. */
enum prop_stage { PROP_STAGE_PASS1 = 1, PROP_STAGE_UPDATE = 2 };
int prop_step_stage(struct prop *s, int stage);
bool prop_has_step_stage(const struct prop *s);
/* For drivers that step through prop_step and prop_step_reverse (RTM's strategies): with
 * FN set, every such step of S runs in its stages with FN(CTX, S) -- the products'
 * exchange -- between them (a reverse step likewise, its halo the products of the
 * reverse pass 1).  FN NULL: whole steps again.  -ENOTSUP without stages. */
int prop_set_mid_exchange(struct prop *s, prop_mid_fn fn, void *ctx);

/* N single grid nodes, weight 1 each, at interior indices IJK (3 per node; layer cells
 * allowed): a subdomain injects and samples through them with the whole grid's weights
 * where a point's support crosses a cut (kernels/points_nodes.h, stream/decompose_points.c).
 * Destroyed with prop_points_destroy.  -ENOTSUP for a physics without them. */
int prop_points_create_nodes(struct prop *s, const int *ijk, size_t n, struct prop_points **out);

/* ---- RTM's fused backward step (kernels/rtm_fused.h has the acoustic one) ----
 * One pass that steps the receiver simulation Q forward (as prop_step), the source
 * simulation U in reverse (as prop_step_reverse) and, when ACC is not NULL, adds the
 * imaging condition of the levels before the steps (U's previous level, Q's current one;
 * image box B, the same in both) into ACC, each field read once.  VARIANT: the kernel's
 * shape, 0 the default.  -ENOTSUP (with the reason) for a pair that cannot be fused
 * (another physics, grids that differ, a kernel choice the fused pass does not follow);
 * the caller then runs the separate steps.  Both simulations must outlive F and stay on
 * one stream while it steps them. */
int prop_fused_create(struct prop *q, struct prop *u, int variant, struct prop_fused **out);
int prop_fused_step(struct prop_fused *f, const struct imaging_box *b, const struct imaging_acc *acc);
/* Half of it: Q's step with the imaging condition in it (U's previous level with Q's
 * current one), U not stepped; EV (CUDA event or NULL) recorded on Q's stream once U's
 * level has been read, before the rest of Q's step.  U's level must be ready on Q's
 * stream (the caller's event); U may step on its own stream meanwhile. */
int prop_fused_image_step(struct prop_fused *f, const struct imaging_box *b, const struct imaging_acc *acc,
                          void *ev);
void prop_fused_destroy(struct prop_fused *f);

/* A one-line description of what a step runs (physics, operator, kernel variant). */
void prop_describe(const struct prop *s, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
