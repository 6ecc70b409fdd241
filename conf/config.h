/* config — the whole configuration of a seislive run as plain C structs.
 *
 * Filled from TOML by config_load() (through conf_tree and the schema in schema.c);
 * no TOML type appears here.  Every field has a default in the schema, is documented
 * in conf/seislive.example.toml with its unit, and is range-checked on load.
 * Strings are owned by the config and freed by config_free(). */
#ifndef SEISLIVE_CONFIG_H
#define SEISLIVE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum job_kind { JOB_RTM, JOB_LOCATE, JOB_MODEL };
enum model_type { MODEL_CONSTANT, MODEL_RAW, MODEL_SEGY, MODEL_LAYERED };
enum model_quantity { QTY_VELOCITY, QTY_PERMITTIVITY };
enum byte_order { BYTE_ORDER_LITTLE, BYTE_ORDER_BIG };
enum model_layout { LAYOUT_X_FASTEST, LAYOUT_Z_FASTEST };
enum wavelet_kind { WAVELET_RICKER, WAVELET_FILE };
enum kernel_variant { KERNEL_AUTO, KERNEL_NAIVE, KERNEL_TILED };
enum rtm_strategy { STRAT_AUTO, STRAT_FULL, STRAT_CHECKPOINT, STRAT_BOUNDARY, STRAT_RANDOM };
enum ckpt_schedule { CKPT_UNIFORM, CKPT_BINOMIAL };
enum strip_store { STRIPS_AUTO, STRIPS_DEVICE, STRIPS_HOST };
enum imaging_cond { IMG_XCORR, IMG_SOURCE, IMG_RECEIVER, IMG_BOTH };
enum random_ramp { RAMP_LINEAR, RAMP_EXPONENTIAL, RAMP_QUADRATIC };
enum random_range { RRANGE_FULL, RRANGE_NYQUIST, RRANGE_SYMMETRIC };
enum coord_kind { COORDS_CARTESIAN, COORDS_GEOGRAPHIC };
enum phase_set { PHASES_P, PHASES_S, PHASES_PS };
enum cf_scale_kind { CF_SCALE_AUTO, CF_SCALE_LINEAR, CF_SCALE_LOG };
enum tt_kind { TT_HOMOGENEOUS, TT_LAYERED, TT_NONLINLOC };
enum cf_kind { CF_ABS, CF_ENVELOPE, CF_STALTA, CF_RECURSIVE_STALTA, CF_KURTOSIS };
enum stack_norm { NORM_NONE, NORM_COUNT, NORM_GEOMETRIC };
enum trigger_kind { TRIGGER_STATIC, TRIGGER_MAD };
enum input_kind { INPUT_NONE, INPUT_ZMQ, INPUT_FILES, INPUT_SEEDLINK };
enum socket_kind { SOCK_PULL, SOCK_SUB };
enum data_format { FMT_AUTO, FMT_SEGY, FMT_SU, FMT_MSEED, FMT_F32, FMT_SAC };
enum io_method { IO_AUTO, IO_URING, IO_PREAD };
enum physics_kind { PHYSICS_ACOUSTIC, PHYSICS_TTI };
enum decompose_kind { DECOMPOSE_NONE, DECOMPOSE_DOMAIN, DECOMPOSE_SHOTS }; /* [runtime] decompose (docs/mpi.md) */
enum halo_transport { HALO_AUTO, HALO_NCCL, HALO_STAGED }; /* [runtime] halo_transport (docs/mpi.md) */
enum operator_kind { OPERATOR_TAYLOR, OPERATOR_OPTIMIZED, OPERATOR_IMPLICIT }; /* twin of kernels/propagator.h's enum prop_op_kind */ /* twin of kernels/propagator.h's enum prop_physics */
enum time_dispersion_kind { TIME_DISPERSION_NONE, TIME_DISPERSION_CORRECT }; /* docs/time-dispersion.md */
enum cpml_memory_kind { CPML_MEMORY_FP32, CPML_MEMORY_BF16 }; /* twin of kernels/wave.h's enum wave_cpml_memory */

/* A list of points [[x, y, z], ...] in metres. */
struct point_list {
    double (*p)[3];
    size_t n;
};

struct job_conf {
    int kind;               /* enum job_kind */
    char *name;
};

struct model_conf {
    int type;               /* enum model_type */
    int quantity;           /* enum model_quantity */
    char *file;             /* raw or SEG-Y model, resolved against the config's folder */
    int n[3];               /* nx, ny, nz: grid points */
    double d[3];            /* dx, dy, dz: m */
    double o[3];            /* origin: m */
    int byte_order;         /* enum byte_order (raw) */
    int layout;             /* enum model_layout (raw) */
    double velocity;        /* m/s, constant model */
    double permittivity;    /* relative, constant EM model */
    double permeability;    /* relative */
    double *layer_depths;   /* m, tops of layers 2.. (layered model) */
    size_t n_layer_depths;
    double *layer_velocities; /* m/s, one per layer */
    size_t n_layer_velocities;
    /* TTI ([propagator] physics = "tti"): Thomsen's epsilon and delta and the tilt of the
     * symmetry axis (theta from the vertical, phi azimuth from x towards y; degrees
     * here, radians in the propagator), constants or files read like the velocity file
     * (io/model.h); a file, when given, replaces the constant. */
    double epsilon, delta, theta, phi;
    char *epsilon_file, *delta_file, *theta_file, *phi_file;
};

/* [propagator] CPML defaults with physics = "tti", for the keys a file does not set (the
 * schema's defaults are the acoustic propagator's thin layers; conf/config.c
 * physics_defaults says why TTI keeps these). */
#define CONFIG_TTI_PML_WIDTH 10
#define CONFIG_TTI_PML_DEGREE 2
#define CONFIG_TTI_PML_REFLECTION 1e-4

struct propagator_conf {
    int order;              /* even, 2..16 */
    double dt;              /* s; 0 = automatic (cfl x stable dt) */
    double t_max;           /* s, record length */
    double cfl;             /* fraction of the stable dt used when dt = 0 */
    int pml_width[6];       /* cells: xmin xmax ymin ymax zmin zmax */
    double pml_reflection;  /* theoretical normal-incidence reflection coefficient */
    bool free_surface;
    double ppw_min;         /* warn below this many points per wavelength at fmax */
    int wavelet;            /* enum wavelet_kind */
    double f_peak;          /* Hz, Ricker peak frequency */
    char *wavelet_file;     /* one float per line, sampled at dt_wavelet */
    double wavelet_dt;      /* s */
    int kernel;             /* enum kernel_variant */
    int snapshot_every;     /* steps; 0 = none */
    char *snapshot_dir;
    int physics;            /* enum physics_kind */
    double tti_sigma;       /* TTI: v_sz^2 = v_pz^2 (epsilon - delta_eff) / tti_sigma, delta_eff = min(delta, epsilon) */
    int op;                 /* enum operator_kind */
    double operator_band;   /* fraction of the Nyquist wavenumber; 0 = the operator's default */
    int time_dispersion;    /* enum time_dispersion_kind */
    double dispersion_max;  /* warn above this phase-velocity error at fmax (fraction; 0: off) */
    int cpml_memory;        /* enum cpml_memory_kind: storage of the CPML memory variables */
    int pml_degree;         /* polynomial degree of the CPML damping profile */
};

struct acquisition_conf {
    struct point_list sources;    /* m */
    struct point_list receivers;  /* m; explicit list, or the grid below */
    double rx_origin[3];          /* first receiver of the grid, m */
    double rx_step[2];            /* grid spacing in x and y, m */
    int rx_count[2];              /* receivers in x and y; 0 = use the list */
    double dt_out;                /* s, output trace sample interval; 0 = propagator dt */
};

struct rtm_conf {
    int strategy;           /* enum rtm_strategy */
    int checkpoints;        /* number of checkpoints; 0 = sqrt(nt) */
    int checkpoint_schedule;/* enum ckpt_schedule */
    int imaging;            /* enum imaging_cond */
    int image_every;        /* steps; 0 = auto (kernels/rtm.h rtm_image_every_auto) */
    bool laplacian;
    double aperture;        /* m, added on each side of the receiver spread */
    int random_ramp;        /* enum random_ramp */
    int random_range;       /* enum random_range */
    int random_width;       /* cells */
    int64_t random_seed;
    double memory_budget;   /* MiB of GPU memory for one shot; 0 = what is free */
    int strip_store;        /* enum strip_store: where boundary keeps its strips */
    double host_memory_budget; /* MiB of host memory boundary's strips may take; 0 = 80 % of free */
};

struct locate_conf {
    char *stations;         /* station file */
    int coords;             /* enum coord_kind */
    char *corrections;      /* per-station, per-phase time corrections (optional) */
    int phases;             /* enum phase_set */
    int traveltime;         /* enum tt_kind */
    double vp, vs;          /* m/s (homogeneous) */
    char *layers;           /* 1D model file: depth_m vp vs per line */
    char *nll_p, *nll_s;    /* NonLinLoc grid roots (without .hdr/.buf) */
    int nll_pattern;        /* enum nll_naming (io/nonlinloc.h) */
    bool quakeml;           /* also write events.xml (QuakeML 1.2) */
    int grid_n[3];
    double grid_d[3];       /* m */
    double grid_o[3];       /* m */
    int cf;                 /* enum cf_kind */
    double sta, lta;        /* s */
    double kurtosis_window; /* s */
    double band[2];         /* Hz; [0, 0] = no filter; [-1, -1] = not set */
    /* per phase (0 / [-1, -1] = the shared key above); resolved by locate_cf_resolve() */
    double sta_p, lta_p, kurtosis_window_p, band_p[2];
    double sta_s, lta_s, kurtosis_window_s, band_s[2];
    int cf_scale;           /* enum cf_scale_kind */
    int normalize;          /* enum stack_norm */
    int block_samples;
    int trigger;            /* enum trigger_kind */
    double threshold;       /* absolute (static) or a multiple of the MAD */
    double min_interval;    /* s between events */
    double mad_window;      /* s, trailing window of the MAD trigger level */
    char *coherence_dir;    /* write coherence volumes here (optional) */
};

/* The characteristic-function settings of one phase of [locate] (conf/locate_cf.c):
 * each value is the phase's own key (sta_p ...) if set, else the shared key (sta ...)
 * if set, else 0.05 s / 0.5 s / 0.2 s / no filter / linear -- unless no CF key at all is set
 * for the phase: then DERIVED is 1 and the values are 0 (sta, lta, kurtosis_window)
 * and [-1, -1] (band), to be derived from the sampling rate and the trial grid where
 * they are known (kernels/cf.h: cf_spec_derive).  KEY_* name the key each value came
 * from ("" = a default), for messages. */
struct locate_cf_phase {
    int derived;
    double sta, lta, kurtosis_window, band[2];
    int scale;              /* 0 linear, 1 log, -1 derived */
    const char *key_sta, *key_lta, *key_band;
};
/* PHASE 0 = P, 1 = S. */
void locate_cf_resolve(const struct locate_conf *lc, int phase, struct locate_cf_phase *out);

struct input_conf {
    int kind;               /* enum input_kind */
    char *endpoint;
    int socket;             /* enum socket_kind */
    char **paths;           /* files, globs or directories */
    size_t n_paths;
    char *start_time, *end_time; /* file input window, ISO 8601 UTC; "" = open */
    bool watch;             /* keep watching directories for new files */
    double watch_idle;      /* s without new files before a watched input ends; 0 = never */
    double settle;          /* s a watched file's size must hold still before it is read */
    int expected_shots;     /* the survey's shots, for the status's ETA; 0 = unknown */
    int su_byte_order;      /* enum su_order (io/segy_read.h): auto, big, little */
    int format;             /* enum data_format */
    int slots;              /* pinned slots, >= 2 */
    double slot_mib;        /* MiB per slot */
    int io;                 /* enum io_method */
    bool o_direct;
    char *seedlink;         /* SeedLink server "HOST:PORT" (kind = seedlink; docs/seedlink.md) */
    char **streams;         /* SeedLink selectors "NET_STA[:CHANNELS]" */
    size_t n_streams;
    int seedlink_protocol;  /* 0 auto, 1 = 3.1, 2 = 4.0 (enum names "auto", "3", "4") */
    double seedlink_timeout;     /* s without a byte before reconnecting */
    double seedlink_backoff_max; /* s: cap of the reconnection back-off */
    double seedlink_latency;     /* s of data waited for a late station */
    char *seedlink_start;   /* "" = from the next packet; else a UTC time */
};

struct output_conf {
    char *endpoint;         /* PUB/XPUB endpoint; "" = none */
    int image_every;        /* publish the image every N units */
    double image_interval;  /* s; 0 = only by count */
    bool slices_only;
    int hwm;                /* send high-water mark per subscriber */
    double drain;           /* s: caches served after the end while subscribers remain */
    char *dir;              /* final files */
    bool pictures;          /* PNG slices of the final image in dir (io/picture.h) */
    double picture_gain;    /* depth^k gain exponent; 0 = none */
    double picture_agc;     /* AGC window along depth, m; 0 = none */
    double picture_percentile; /* colour clip: percentile of |gained value| */
    int picture_at[3];      /* slice cells; -1 = the middle */
    int picture_size;       /* pixels of the plot's longer side */
    char *state_dir;        /* checkpointed state; "" = none */
    int checkpoint_every;   /* units */
    double checkpoint_interval; /* s */
    char *curve_secret_key; /* Z85 server secret key; "" = no CURVE */
    char *curve_public_key;
    char *curve_clients;    /* file of allowed client public keys (Z85, one per line) */
    char *http;             /* status page "HOST:PORT"; "" = none (docs/http.md) */
    char *http_token;       /* "" = no token asked */
    double http_keep;       /* s the page stays up after the run ends */
};

struct runtime_conf {
    char *device;           /* "auto" | "cpu" | "cuda:N" */
    int threads;            /* OpenMP threads; 0 = all cores */
    double metrics_interval;/* s between status messages */
    int decompose;          /* enum decompose_kind: how MPI ranks share the work (docs/mpi.md) */
    int split[3];           /* domain: subdomains along x, y, z; all 0 = chosen from the grid */
    int ranks;              /* `check`: the rank count to plan for; 0 = this run's (1 without mpirun) */
    char *device_map;       /* "" = GPU by local rank; else "A,B,..": GPU of local rank i */
    int halo_transport;     /* enum halo_transport: domain on GPUs (docs/mpi.md) */
};

struct log_conf {
    int level;              /* enum log_level */
    char *file;             /* "" = stderr only */
};

struct sl_config {
    char *path;             /* the file this came from */
    struct job_conf job;
    struct model_conf model;
    struct propagator_conf propagator;
    struct acquisition_conf acquisition;
    struct rtm_conf rtm;
    struct locate_conf locate;
    struct input_conf input;
    struct output_conf output;
    struct runtime_conf runtime;
    struct log_conf log;
    struct conf_where *where; /* source positions of the keys that were set */
    size_t n_where;
};

/* Load and validate PATH into CFG (defaults for every key not given).  Returns 0, or a
 * negative code with err_msg() "FILE:LINE:COL: [section] key: reason". */
int config_load(const char *path, struct sl_config *cfg);
/* Same from a string (tests); NAME stands for the file name in messages. */
int config_load_string(const char *text, const char *name, struct sl_config *cfg);
/* All defaults, as if from an empty file. */
void config_defaults(struct sl_config *cfg);
void config_free(struct sl_config *cfg);

/* "FILE:LINE:COL" of KEY ("section.key") if it was set in the file, else "FILE". */
const char *config_where(const struct sl_config *cfg, const char *key, char *buf, size_t len);

/* Print the resolved configuration, every key, as TOML. */
void config_print(const struct sl_config *cfg, FILE *out);
/* Print the key reference (Markdown table per section) from the schema. */
void config_print_reference(FILE *out);

/* Print an example file: every key at its default, with its doc, unit and default. */
void config_print_example(FILE *out);

/* A stable fingerprint of everything that changes the numbers of a run
 * (used by the state checkpoint to refuse resuming under another config). */
uint64_t config_fingerprint(const struct sl_config *cfg);

/* The same hash over the whole resolved configuration as `check` prints it, every key of
 * every section (ranks of one MPI job compare it: they must run the same config). */
uint64_t config_fingerprint_all(const struct sl_config *cfg);

/* The enum's name, as written in the file. */
const char *config_enum_name(const char *section, const char *key, int value);

#ifdef __cplusplus
}
#endif

#endif
