/* The configuration schema: one line per key.  See schema.h. */
#include "conf/schema.h"

#include <float.h>
#include <stddef.h>
#include <string.h>

#include "conf/config.h"

#define OFF(sec, field) offsetof(struct sl_config, sec.field)
#define BIG DBL_MAX

/* Enum names, in the order of the enums in config.h. */
static const char *const job_kinds[] = {"rtm", "locate", "model", NULL};
static const char *const model_types[] = {"constant", "raw", "segy", "layered", NULL};
static const char *const quantities[] = {"velocity", "permittivity", NULL};
static const char *const byte_orders[] = {"little", "big", NULL};
static const char *const layouts[] = {"x-fastest", "z-fastest", NULL};
static const char *const wavelets[] = {"ricker", "file", NULL};
static const char *const kernels[] = {"auto", "naive", "tiled", NULL};
static const char *const strategies[] = {"auto", "full", "checkpoint", "boundary", "random", NULL};
static const char *const schedules[] = {"uniform", "binomial", NULL};
static const char *const strip_stores[] = {"auto", "device", "host", NULL};
static const char *const imagings[] = {"xcorr", "source", "receiver", "both", NULL};
static const char *const ramps[] = {"linear", "exponential", "quadratic", NULL};
static const char *const ranges[] = {"full", "nyquist", "symmetric", NULL};
static const char *const coords[] = {"cartesian", "geographic", NULL};
static const char *const phase_sets[] = {"P", "S", "PS", NULL};
static const char *const tt_kinds[] = {"homogeneous", "layered", "nonlinloc", NULL};
static const char *const nll_patterns[] = {"auto", "station-phase", "phase-station", NULL}; /* enum nll_naming */
static const char *const cf_kinds[] = {"abs", "envelope", "stalta", "recursive-stalta", "kurtosis", NULL};
static const char *const norms[] = {"none", "count", "geometric", NULL};
static const char *const cf_scales[] = {"auto", "linear", "log", NULL};
static const char *const triggers[] = {"static", "mad", NULL};
static const char *const input_kinds[] = {"none", "zmq", "files", "seedlink", NULL};
static const char *const sl_protocols[] = {"auto", "3", "4", NULL};
static const char *const sockets[] = {"pull", "sub", NULL};
static const char *const formats[] = {"auto", "segy", "su", "mseed", "f32", "sac", NULL};
static const char *const su_orders[] = {"auto", "big", "little", NULL}; /* enum su_order */
static const char *const io_methods[] = {"auto", "uring", "pread", NULL};
static const char *const physics_kinds[] = {"acoustic", "tti", NULL};
static const char *const operator_kinds[] = {"taylor", "optimized", "implicit", NULL};
static const char *const time_dispersion_kinds[] = {"none", "correct", NULL};
static const char *const cpml_memory_kinds[] = {"fp32", "bf16", NULL};
static const char *const decompose_kinds[] = {"none", "domain", "shots", NULL};
static const char *const halo_transports[] = {"auto", "nccl", "staged", NULL};
static const char *const log_levels[] = {"debug", "info", "warn", "error", NULL};

#define END {NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 0}

static const struct conf_key job_keys[] = {
    {"kind", KT_ENUM, OFF(job, kind), 0, 0, 0, 0, job_kinds, "\"rtm\"", "",
     "what `seislive run` does: rtm (migrate shots), locate (microseismic events), model (forward modeling)", 0},
    {"name", KT_STRING, OFF(job, name), 0, KF_NO_RANGE, 0, 0, NULL, "\"seislive\"", "",
     "a name for this job, in logs and published headers", 0},
    END};

static const struct conf_key model_keys[] = {
    {"type", KT_ENUM, OFF(model, type), 0, 0, 0, 0, model_types, "\"constant\"", "",
     "where the model comes from: constant, raw (float32 file), segy (one trace per x-y column), layered", 0},
    {"quantity", KT_ENUM, OFF(model, quantity), 0, 0, 0, 0, quantities, "\"velocity\"", "",
     "what the model holds: velocity (m/s, acoustic) or permittivity (relative, GPR: v = c0/sqrt(eps_r mu_r))", 0},
    {"file", KT_PATH, OFF(model, file), 0, KF_MUST_EXIST | KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "model file for type = raw or segy (relative to this config file)", 0},
    {"n", KT_INT_VEC, OFF(model, n), 3, 0, 1, 1 << 16, NULL, "[101, 101, 101]", "points",
     "grid points nx, ny, nz (z is depth)", 0},
    {"d", KT_DOUBLE_VEC, OFF(model, d), 3, KF_MIN_EXCL, 0, 1e6, NULL, "[10.0, 10.0, 10.0]", "m",
     "grid spacing dx, dy, dz", 0},
    {"o", KT_DOUBLE_VEC, OFF(model, o), 3, 0, -1e9, 1e9, NULL, "[0.0, 0.0, 0.0]", "m",
     "coordinates of the first grid point", 0},
    {"byte_order", KT_ENUM, OFF(model, byte_order), 0, 0, 0, 0, byte_orders, "\"little\"", "",
     "byte order of a raw model file", 0},
    {"layout", KT_ENUM, OFF(model, layout), 0, 0, 0, 0, layouts, "\"x-fastest\"", "",
     "sample order of a raw model file: x-fastest (x, then y, then z) or z-fastest (depth first, as SEG-Y)", 0},
    {"velocity", KT_DOUBLE, OFF(model, velocity), 0, KF_MIN_EXCL, 0, 3.1e8, NULL, "2000.0", "m/s",
     "velocity of a constant model", 0},
    {"permittivity", KT_DOUBLE, OFF(model, permittivity), 0, 0, 1, 1e4, NULL, "1.0", "",
     "relative permittivity of a constant model (quantity = permittivity)", 0},
    {"permeability", KT_DOUBLE, OFF(model, permeability), 0, 0, 1, 1e4, NULL, "1.0", "",
     "relative permeability (quantity = permittivity)", 0},
    {"layer_depths", KT_DOUBLE_LIST, OFF(model, layer_depths), 0, 0, -1e9, 1e9, NULL, "[]", "m",
     "layered model: depth of the top of each layer after the first, increasing", OFF(model, n_layer_depths)},
    {"layer_velocities", KT_DOUBLE_LIST, OFF(model, layer_velocities), 0, KF_MIN_EXCL, 0, 3.1e8, NULL, "[]", "m/s",
     "layered model: velocity of each layer, one more than layer_depths", OFF(model, n_layer_velocities)},
    {"epsilon", KT_DOUBLE, OFF(model, epsilon), 0, KF_MIN_EXCL, -0.5, 10, NULL, "0.0", "",
     "TTI (physics = tti): Thomsen's epsilon, v_px = v_pz sqrt(1 + 2 epsilon); velocity is v_pz", 0},
    {"delta", KT_DOUBLE, OFF(model, delta), 0, KF_MIN_EXCL, -0.5, 10, NULL, "0.0", "",
     "TTI: Thomsen's delta, v_pn = v_pz sqrt(1 + 2 delta); where epsilon < delta the propagator lowers delta to epsilon (the only stable choice where the tilt varies; warned about, docs/tti.md)", 0},
    {"theta", KT_DOUBLE, OFF(model, theta), 0, 0, -90, 90, NULL, "0.0", "degrees",
     "TTI: tilt of the symmetry axis from the vertical, -90 to 90 (0: VTI)", 0},
    {"phi", KT_DOUBLE, OFF(model, phi), 0, KF_NO_RANGE, 0, 0, NULL, "0.0", "degrees",
     "TTI: azimuth of the symmetry axis from x towards y, any finite value (taken modulo 360)", 0},
    {"epsilon_file", KT_PATH, OFF(model, epsilon_file), 0, KF_MUST_EXIST | KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "TTI: epsilon per grid point, read like the velocity file (raw float32 of the same n, layout and byte order, or SEG-Y; see docs) instead of epsilon", 0},
    {"delta_file", KT_PATH, OFF(model, delta_file), 0, KF_MUST_EXIST | KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "TTI: delta per grid point (as epsilon_file) instead of delta", 0},
    {"theta_file", KT_PATH, OFF(model, theta_file), 0, KF_MUST_EXIST | KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "TTI: tilt per grid point, degrees in [-90, 90] (as epsilon_file) instead of theta", 0},
    {"phi_file", KT_PATH, OFF(model, phi_file), 0, KF_MUST_EXIST | KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "TTI: azimuth per grid point, degrees, any finite value (as epsilon_file) instead of phi", 0},
    END};

static const struct conf_key propagator_keys[] = {
    {"order", KT_INT, OFF(propagator, order), 0, KF_EVEN, 2, 16, NULL, "8", "",
     "spatial order of the finite-difference stencil (even, 2 to 16)", 0},
    {"dt", KT_DOUBLE, OFF(propagator, dt), 0, 0, 0, 1, NULL, "0.0", "s",
     "time step; 0 = cfl x the largest stable step. A dt above the stable one is refused", 0},
    {"t_max", KT_DOUBLE, OFF(propagator, t_max), 0, KF_MIN_EXCL, 0, 1e5, NULL, "1.0", "s",
     "record length (modeled time)", 0},
    {"cfl", KT_DOUBLE, OFF(propagator, cfl), 0, KF_MIN_EXCL, 0, 1, NULL, "0.9", "",
     "fraction of the largest stable dt used when dt = 0", 0},
    {"pml_width", KT_INT_VEC, OFF(propagator, pml_width), 6, KF_BROADCAST, 0, 1000, NULL, "12", "cells",
     "CPML width: one number for all faces or [xmin, xmax, ymin, ymax, zmin, zmax]. Default 12 (10 of degree 2 and 1e-4 with physics = \"tti\": docs/tti.md); 20 with pml_degree = 2 and pml_reflection = 1e-4 is the profile before the thin default (docs/model.md)", 0},
    {"pml_reflection", KT_DOUBLE, OFF(propagator, pml_reflection), 0, KF_MIN_EXCL, 0, 1, NULL, "1e-3", "",
     "theoretical normal-incidence reflection coefficient of the CPML damping. Default 1e-3 (1e-4 with physics = \"tti\")", 0},
    {"pml_degree", KT_INT, OFF(propagator, pml_degree), 0, 0, 1, 6, NULL, "4", "",
     "polynomial degree N of the CPML damping d0 (x/L)^N; 2 is the reference profile. Default 4 (2 with physics = \"tti\"): 12 layers of degree 4 reflect -72 to -89 dB at normal incidence (orders 4 to 16), where 20 layers of degree 2 reflected -63 to -66 dB (docs/model.md, seislive-bench cpml)", 0},
    {"free_surface", KT_BOOL, OFF(propagator, free_surface), 0, 0, 0, 0, NULL, "false", "",
     "pressure-free surface at z = 0 instead of an absorbing top", 0},
    {"ppw_min", KT_DOUBLE, OFF(propagator, ppw_min), 0, KF_MIN_EXCL, 0, 100, NULL, "6.0", "points",
     "taylor operator: warn when the grid has fewer points per wavelength at the wavelet's maximum frequency (other operators: dispersion_max only)", 0},
    {"wavelet", KT_ENUM, OFF(propagator, wavelet), 0, 0, 0, 0, wavelets, "\"ricker\"", "",
     "source wavelet: ricker or file", 0},
    {"f_peak", KT_DOUBLE, OFF(propagator, f_peak), 0, KF_MIN_EXCL, 0, 1e10, NULL, "15.0", "Hz",
     "peak frequency of the Ricker wavelet", 0},
    {"wavelet_file", KT_PATH, OFF(propagator, wavelet_file), 0, KF_MUST_EXIST | KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "user wavelet: one sample per line (wavelet = file)", 0},
    {"wavelet_dt", KT_DOUBLE, OFF(propagator, wavelet_dt), 0, 0, 0, 1, NULL, "0.0", "s",
     "sample interval of wavelet_file; 0 = the propagator dt", 0},
    {"kernel", KT_ENUM, OFF(propagator, kernel), 0, 0, 0, 0, kernels, "\"auto\"", "",
     "CUDA kernel variant: auto (fastest), naive, tiled", 0},
    {"snapshot_every", KT_INT, OFF(propagator, snapshot_every), 0, 0, 0, 1e9, NULL, "0", "steps",
     "write a wavefield snapshot every N steps; 0 = none", 0},
    {"snapshot_dir", KT_PATH, OFF(propagator, snapshot_dir), 0, KF_DIR | KF_NO_RANGE, 0, 0, NULL, "\"snapshots\"", "path",
     "folder for snapshots", 0},
    {"physics", KT_ENUM, OFF(propagator, physics), 0, 0, 0, 0, physics_kinds, "\"acoustic\"", "",
     "wave physics: acoustic (isotropic) or tti (pseudo-acoustic tilted TI, Fletcher, Du & Fowler 2009: [model] velocity is v_pz, epsilon, delta, theta, phi)", 0},
    {"tti_sigma", KT_DOUBLE, OFF(propagator, tti_sigma), 0, KF_MIN_EXCL, 0, 1e3, NULL, "0.75", "",
     "TTI: v_sz^2 = v_pz^2 (epsilon - min(delta, epsilon)) / tti_sigma, the finite shear velocity of Fletcher et al. (larger: weaker shear artefact)", 0},
    {"operator", KT_ENUM, OFF(propagator, op), 0, 0, 0, 0, operator_kinds, "\"taylor\"", "",
     "spatial derivative operator: taylor (central differences of accuracy order), optimized (explicit, same half-width, weights designed over operator_band), implicit (recursive second derivative, tridiagonal sweeps per line)", 0},
    {"operator_band", KT_DOUBLE, OFF(propagator, operator_band), 0, KF_AUTO, 0, 1, NULL, "0.0", "",
     "optimized/implicit: fraction of the Nyquist wavenumber the operator's design holds; 0 = the operator's default (optimized 8: 0.632, implicit 8: 0.84); \"auto\" = the band the wavelet reaches on this grid, 0.9 x 2 / (points per wavelength at its fmax in the slowest medium on the coarsest axis), within [0.1, 0.95] (seislive check and the log print it; docs/operators.md)", 0},
    {"time_dispersion", KT_ENUM, OFF(propagator, time_dispersion), 0, 0, 0, 0, time_dispersion_kinds, "\"none\"", "",
     "none, or correct: remove the leapfrog's time dispersion (Koene et al. 2018; docs/time-dispersion.md): model, the wavelet transformed before and the traces after propagation; rtm, the wavelet and the recorded traces transformed before propagation", 0},
    {"dispersion_max", KT_DOUBLE, OFF(propagator, dispersion_max), 0, 0, 0, 0.5, NULL, "0.01", "",
     "warn when the worst-direction phase-velocity error (space and time, the configured operator and dt) of the slowest wave at the wavelet's maximum frequency exceeds this fraction; 0 = no such warning (docs/operators.md)", 0},
    {"cpml_memory", KT_ENUM, OFF(propagator, cpml_memory), 0, 0, 0, 0, cpml_memory_kinds, "\"fp32\"", "",
     "storage of the absorbing layers' memory variables: fp32 (the reference), or bf16 (rounded to bfloat16, half the layers' bytes per step; acoustic physics with the taylor or optimized operator, and on CUDA the tiled kernel; its storage error sets a reflection floor near -62 to -75 dB: the default 12 layers reflect -74 instead of -88 dB at order 8 (20 layers of degree 2: -62 instead of -65); measured 1-2 % faster at orders 4-8 on the H100, slower at 16: docs/model.md)", 0},
    END};

static const struct conf_key acquisition_keys[] = {
    {"sources", KT_POINTS, OFF(acquisition, sources), 0, 0, -1e9, 1e9, NULL, "[]", "m",
     "source positions [[x, y, z], ...] for `model` (any position, not only grid nodes)", 0},
    {"receivers", KT_POINTS, OFF(acquisition, receivers), 0, 0, -1e9, 1e9, NULL, "[]", "m",
     "receiver positions [[x, y, z], ...]; or leave empty and set the rx_ grid", 0},
    {"rx_origin", KT_DOUBLE_VEC, OFF(acquisition, rx_origin), 3, 0, -1e9, 1e9, NULL, "[0.0, 0.0, 0.0]", "m",
     "first receiver of a receiver grid", 0},
    {"rx_step", KT_DOUBLE_VEC, OFF(acquisition, rx_step), 2, 0, 0, 1e9, NULL, "[10.0, 10.0]", "m",
     "receiver grid spacing in x and y", 0},
    {"rx_count", KT_INT_VEC, OFF(acquisition, rx_count), 2, 0, 0, 1 << 20, NULL, "[0, 0]", "",
     "receivers in x and y of the grid; [0, 0] = use the receivers list", 0},
    {"dt_out", KT_DOUBLE, OFF(acquisition, dt_out), 0, 0, 0, 1, NULL, "0.0", "s",
     "sample interval of output traces; 0 = the propagator dt", 0},
    END};

static const struct conf_key rtm_keys[] = {
    {"strategy", KT_ENUM, OFF(rtm, strategy), 0, 0, 0, 0, strategies, "\"auto\"", "",
     "source-wavefield strategy: auto, full, checkpoint, boundary, random", 0},
    {"checkpoints", KT_INT, OFF(rtm, checkpoints), 0, 0, 0, 1e6, NULL, "0", "",
     "number of checkpoints (strategy = checkpoint); 0 = sqrt of the step count", 0},
    {"checkpoint_schedule", KT_ENUM, OFF(rtm, checkpoint_schedule), 0, 0, 0, 0, schedules, "\"binomial\"", "",
     "checkpoint placement: uniform, or binomial (optimal, Griewank's revolve)", 0},
    {"imaging", KT_ENUM, OFF(rtm, imaging), 0, 0, 0, 0, imagings, "\"xcorr\"", "",
     "imaging condition: xcorr, source (source-illumination normalized), receiver, both", 0},
    {"image_every", KT_INT, OFF(rtm, image_every), 0, 0, 0, 1e6, NULL, "0", "steps",
     "apply the imaging condition every k time steps; 0 = auto: k = floor(1 / (2 fmax dt)), the image's Nyquist for the wavelet's maximum frequency (seislive check and the log say which k); the image is summed with weight k, so its amplitude does not depend on k", 0},
    {"laplacian", KT_BOOL, OFF(rtm, laplacian), 0, 0, 0, 0, NULL, "false", "",
     "Laplacian filter of the stacked image against low-wavenumber artifacts", 0},
    {"aperture", KT_DOUBLE, OFF(rtm, aperture), 0, 0, 0, 1e9, NULL, "1000.0", "m",
     "migration aperture added on each side of a shot's receiver spread", 0},
    {"random_ramp", KT_ENUM, OFF(rtm, random_ramp), 0, 0, 0, 0, ramps, "\"exponential\"", "",
     "random boundary: how the randomness grows into the layer (exponential, the slowest start, scatters least back: image 0.9 % from full vs 2.9 % linear, 20 cells)", 0},
    {"random_range", KT_ENUM, OFF(rtm, random_range), 0, 0, 0, 0, ranges, "\"full\"", "",
     "random boundary: velocity range (full stable range, nyquist-limited, symmetric around the model)", 0},
    {"random_width", KT_INT, OFF(rtm, random_width), 0, 0, 1, 1000, NULL, "20", "cells",
     "random boundary layer width", 0},
    {"random_seed", KT_I64, OFF(rtm, random_seed), 0, 0, 0, 9.2e18, NULL, "12345", "",
     "seed of the random boundary (regenerated, never stored)", 0},
    {"memory_budget", KT_DOUBLE, OFF(rtm, memory_budget), 0, 0, 0, 1e9, NULL, "0.0", "MiB",
     "device memory one shot may use; 0 = what the device has free", 0},
    {"strip_store", KT_ENUM, OFF(rtm, strip_store), 0, 0, 0, 0, strip_stores, "\"auto\"", "",
     "where strategy boundary keeps the strip it saves at every step: auto (the device when the strips fit memory_budget; on a GPU, else page-locked host memory, copied out and back on a copy stream while the steps compute), device (always: a boundary whose strips do not fit is refused, as before), host (always: to measure what the copies cost, or to leave the device's memory to others); seislive check says where they go and why", 0},
    {"host_memory_budget", KT_DOUBLE, OFF(rtm, host_memory_budget), 0, 0, 0, 1e9, NULL, "0.0", "MiB",
     "host memory boundary's strips may take when they go to the host; 0 = 80 % of the host memory available to the process (MemAvailable, capped by its cgroup's limit)", 0},
    END};

static const struct conf_key locate_keys[] = {
    {"stations", KT_PATH, OFF(locate, stations), 0, KF_MUST_EXIST | KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "station file: name and coordinates per line", 0},
    {"coords", KT_ENUM, OFF(locate, coords), 0, 0, 0, 0, coords, "\"cartesian\"", "",
     "station coordinates: cartesian (name x y z, m, z down) or geographic (name lat lon elevation_m, projected to a local equirectangular frame on WGS84 about the mean station position)", 0},
    {"corrections", KT_PATH, OFF(locate, corrections), 0, KF_MUST_EXIST | KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "per-station, per-phase time corrections (optional)", 0},
    {"phases", KT_ENUM, OFF(locate, phases), 0, 0, 0, 0, phase_sets, "\"PS\"", "",
     "phases stacked: P, S or PS", 0},
    {"traveltime", KT_ENUM, OFF(locate, traveltime), 0, 0, 0, 0, tt_kinds, "\"homogeneous\"", "",
     "travel times: homogeneous, layered (eikonal on the grid), nonlinloc (time grids)", 0},
    {"vp", KT_DOUBLE, OFF(locate, vp), 0, KF_MIN_EXCL, 0, 1e5, NULL, "3500.0", "m/s",
     "P velocity (homogeneous)", 0},
    {"vs", KT_DOUBLE, OFF(locate, vs), 0, KF_MIN_EXCL, 0, 1e5, NULL, "2000.0", "m/s",
     "S velocity (homogeneous)", 0},
    {"layers", KT_PATH, OFF(locate, layers), 0, KF_MUST_EXIST | KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "1D model file: top depth (m), vp, vs (m/s) per line (traveltime = layered)", 0},
    {"nll_p", KT_PATH, OFF(locate, nll_p), 0, KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "NonLinLoc P time grid root (files ROOT.P.STATION.time.hdr/.buf as Grid2Time names them, or ROOT.STATION.P.time.*; see nll_pattern)", 0},
    {"nll_s", KT_PATH, OFF(locate, nll_s), 0, KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "NonLinLoc S time grid root", 0},
    {"nll_pattern", KT_ENUM, OFF(locate, nll_pattern), 0, 0, 0, 0, nll_patterns, "\"auto\"", "",
     "NonLinLoc time grid file names: auto (whichever exists; both existing is an error), station-phase (ROOT.STATION.PHASE.time), phase-station (ROOT.PHASE.STATION.time, NonLinLoc's Grid2Time)", 0},
    {"quakeml", KT_BOOL, OFF(locate, quakeml), 0, 0, 0, 0, NULL, "false", "",
     "also write the events as QuakeML 1.2 ([output] dir/events.xml, rewritten whole after each event); needs geographic coordinates (geographic stations or NonLinLoc grids with a TRANSFORM)", 0},
    {"grid_n", KT_INT_VEC, OFF(locate, grid_n), 3, 0, 1, 4096, NULL, "[21, 21, 21]", "points",
     "trial-source grid points", 0},
    {"grid_d", KT_DOUBLE_VEC, OFF(locate, grid_d), 3, KF_MIN_EXCL, 0, 1e6, NULL, "[50.0, 50.0, 50.0]", "m",
     "trial-source grid spacing", 0},
    {"grid_o", KT_DOUBLE_VEC, OFF(locate, grid_o), 3, 0, -1e9, 1e9, NULL, "[0.0, 0.0, 0.0]", "m",
     "first trial-source point", 0},
    {"cf", KT_ENUM, OFF(locate, cf), 0, 0, 0, 0, cf_kinds, "\"stalta\"", "",
     "characteristic function: abs, envelope, stalta, recursive-stalta, kurtosis", 0},
    {"sta", KT_DOUBLE, OFF(locate, sta), 0, 0, 0, 1e4, NULL, "0.0", "s",
     "short-term average window, both phases; 0 = not set (when no characteristic-function key is set for a phase, all are derived from the sampling rate and the grid, docs/locate.md; else 0.05)", 0},
    {"lta", KT_DOUBLE, OFF(locate, lta), 0, 0, 0, 1e5, NULL, "0.0", "s",
     "long-term average window (longer than sta), both phases; 0 = not set (derived, or 0.5 when another CF key is set)", 0},
    {"kurtosis_window", KT_DOUBLE, OFF(locate, kurtosis_window), 0, 0, 0, 1e4, NULL, "0.0", "s",
     "kurtosis window, both phases; 0 = not set (derived, or 0.2 when another CF key is set)", 0},
    {"band", KT_DOUBLE_VEC, OFF(locate, band), 2, 0, -1, 1e6, NULL, "[-1.0, -1.0]", "Hz",
     "band-pass corners before the characteristic function, both phases; [0, 0] = no filter; [-1, -1] = not set (derived, or no filter when another CF key is set)", 0},
    {"cf_scale", KT_ENUM, OFF(locate, cf_scale), 0, 0, 0, 0, cf_scales, "\"auto\"", "",
     "what is stacked: linear (the function's value) or log (log(1 + value): one station's glitch cannot outweigh the array); auto = log when the functions are derived, else linear", 0},
    {"sta_p", KT_DOUBLE, OFF(locate, sta_p), 0, 0, 0, 1e4, NULL, "0.0", "s",
     "P (verticals) short-term average window; 0 = sta", 0},
    {"lta_p", KT_DOUBLE, OFF(locate, lta_p), 0, 0, 0, 1e5, NULL, "0.0", "s",
     "P long-term average window; 0 = lta", 0},
    {"kurtosis_window_p", KT_DOUBLE, OFF(locate, kurtosis_window_p), 0, 0, 0, 1e4, NULL, "0.0", "s",
     "P kurtosis window; 0 = kurtosis_window", 0},
    {"band_p", KT_DOUBLE_VEC, OFF(locate, band_p), 2, 0, -1, 1e6, NULL, "[-1.0, -1.0]", "Hz",
     "P band-pass corners; [0, 0] = no filter; [-1, -1] = band", 0},
    {"sta_s", KT_DOUBLE, OFF(locate, sta_s), 0, 0, 0, 1e4, NULL, "0.0", "s",
     "S (horizontals) short-term average window; 0 = sta", 0},
    {"lta_s", KT_DOUBLE, OFF(locate, lta_s), 0, 0, 0, 1e5, NULL, "0.0", "s",
     "S long-term average window; 0 = lta", 0},
    {"kurtosis_window_s", KT_DOUBLE, OFF(locate, kurtosis_window_s), 0, 0, 0, 1e4, NULL, "0.0", "s",
     "S kurtosis window; 0 = kurtosis_window", 0},
    {"band_s", KT_DOUBLE_VEC, OFF(locate, band_s), 2, 0, -1, 1e6, NULL, "[-1.0, -1.0]", "Hz",
     "S band-pass corners; [0, 0] = no filter; [-1, -1] = band", 0},
    {"normalize", KT_ENUM, OFF(locate, normalize), 0, 0, 0, 0, norms, "\"count\"", "",
     "stack normalization: none, count (by contributing channels), geometric (geometric mean)", 0},
    {"block_samples", KT_INT, OFF(locate, block_samples), 0, 0, 16, 1 << 24, NULL, "1000", "samples",
     "samples per processing block", 0},
    {"trigger", KT_ENUM, OFF(locate, trigger), 0, 0, 0, 0, triggers, "\"mad\"", "",
     "trigger on the maximum coalescence: static threshold or threshold x running MAD", 0},
    {"threshold", KT_DOUBLE, OFF(locate, threshold), 0, KF_MIN_EXCL, 0, 1e12, NULL, "8.0", "",
     "trigger threshold (absolute, or a multiple of the median absolute deviation)", 0},
    {"min_interval", KT_DOUBLE, OFF(locate, min_interval), 0, 0, 0, 1e6, NULL, "1.0", "s",
     "triggers closer than this are one event", 0},
    {"mad_window", KT_DOUBLE, OFF(locate, mad_window), 0, KF_MIN_EXCL, 0, 1e6, NULL, "30.0", "s",
     "trailing window of the maximum-coalescence trace for the MAD trigger level (level = median + threshold x MAD)", 0},
    {"coherence_dir", KT_PATH, OFF(locate, coherence_dir), 0, KF_DIR | KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "write each block's coherence volume here; \"\" = do not", 0},
    END};

static const struct conf_key input_keys[] = {
    {"kind", KT_ENUM, OFF(input, kind), 0, 0, 0, 0, input_kinds, "\"none\"", "",
     "where units come from: zmq, files, seedlink (a SeedLink server, locate job: docs/seedlink.md), or none (model job)", 0},
    {"endpoint", KT_STRING, OFF(input, endpoint), 0, KF_NO_RANGE, 0, 0, NULL, "\"tcp://127.0.0.1:5555\"", "",
     "ZeroMQ endpoint to bind (pull) or connect (sub)", 0},
    {"socket", KT_ENUM, OFF(input, socket), 0, 0, 0, 0, sockets, "\"pull\"", "",
     "ZeroMQ socket type: pull (back-pressure to the sender) or sub", 0},
    {"paths", KT_STRING_LIST, OFF(input, paths), 0, 0, 0, 1 << 20, NULL, "[]", "",
     "input files, globs or directories (kind = files)", OFF(input, n_paths)},
    {"start_time", KT_STRING, OFF(input, start_time), 0, KF_NO_RANGE, 0, 0, NULL, "\"\"", "",
     "locate job, file input: samples before this UTC time (ISO 8601, e.g. \"2024-05-01T12:00:00Z\") are not stacked (counted in the log); \"\" = from the start", 0},
    {"end_time", KT_STRING, OFF(input, end_time), 0, KF_NO_RANGE, 0, 0, NULL, "\"\"", "",
     "locate job, file input: samples at or after this UTC time (ISO 8601) are not stacked; \"\" = to the end", 0},
    {"watch", KT_BOOL, OFF(input, watch), 0, 0, 0, 0, NULL, "false", "",
     "keep watching directories and globs for new files", 0},
    {"watch_idle", KT_DOUBLE, OFF(input, watch_idle), 0, 0, 0, 1e9, NULL, "0.0", "s",
     "end a watched input after this long without new data; 0 = never", 0},
    {"settle", KT_DOUBLE, OFF(input, settle), 0, 0, 0, 1e6, NULL, "2.0", "s",
     "watch: read a file once its size has held still this long (or a later file appeared); a recorder still writing it is waited for", 0},
    {"expected_shots", KT_INT, OFF(input, expected_shots), 0, 0, 0, 1e9, NULL, "0", "shots",
     "rtm: the shots the survey will have, for the status's units_total and eta_s (the page's ETA); 0 = unknown: files not watched are estimated from the share of their bytes read, a stream has none", 0},
    {"su_byte_order", KT_ENUM, OFF(input, su_byte_order), 0, 0, 0, 0, su_orders, "\"auto\"", "",
     "Seismic Unix byte order: auto (decided per file from the first trace header, logged), big, little", 0},
    {"format", KT_ENUM, OFF(input, format), 0, 0, 0, 0, formats, "\"auto\"", "",
     "file format: auto (from the name and contents), segy, su, mseed, f32, sac (the locate job, not watched: SAC binary, either byte order)", 0},
    {"slots", KT_INT, OFF(input, slots), 0, 0, 2, 64, NULL, "3", "",
     "pinned host slots (2 = double buffering)", 0},
    {"slot_mib", KT_DOUBLE, OFF(input, slot_mib), 0, KF_MIN_EXCL, 0, 65536, NULL, "64.0", "MiB",
     "size of each slot; a unit larger than this is rejected", 0},
    {"io", KT_ENUM, OFF(input, io), 0, 0, 0, 0, io_methods, "\"auto\"", "",
     "file reads: auto (io_uring, pread when unavailable), uring, pread", 0},
    {"o_direct", KT_BOOL, OFF(input, o_direct), 0, 0, 0, 0, NULL, "true", "",
     "read files with O_DIRECT where the file system allows it", 0},
    {"seedlink", KT_STRING, OFF(input, seedlink), 0, KF_NO_RANGE, 0, 0, NULL, "\"\"", "",
     "SeedLink server HOST:PORT (kind = seedlink, docs/seedlink.md), e.g. \"127.0.0.1:18000\"", 0},
    {"streams", KT_STRING_LIST, OFF(input, streams), 0, KF_PLAIN, 0, 4096, NULL, "[]", "",
     "SeedLink stream selectors NET_STA or NET_STA:CHANNELS, channels as CCC or LLCCC, several separated by spaces; '?' one character, '*' in NET and STA any run (e.g. [\"XX_S*:HH?\"])", OFF(input, n_streams)},
    {"seedlink_protocol", KT_ENUM, OFF(input, seedlink_protocol), 0, 0, 0, 0, sl_protocols, "\"auto\"", "",
     "SeedLink protocol: auto (4.0 when the server's HELLO offers it, else 3.1), 3 or 4 (an error when the server lacks it)", 0},
    {"seedlink_timeout", KT_DOUBLE, OFF(input, seedlink_timeout), 0, KF_MIN_EXCL, 0, 86400, NULL, "60.0", "s",
     "SeedLink: nothing received for this long (an INFO ID keepalive is sent at half of it) drops the connection and reconnects", 0},
    {"seedlink_backoff_max", KT_DOUBLE, OFF(input, seedlink_backoff_max), 0, KF_MIN_EXCL, 0, 86400, NULL, "30.0", "s",
     "SeedLink: the wait before a reconnection doubles from 0.5 s up to this", 0},
    {"seedlink_latency", KT_DOUBLE, OFF(input, seedlink_latency), 0, 0, 0, 86400, NULL, "10.0", "s",
     "SeedLink: a block leaves when every channel has reached its end, or when one channel is this much recording time beyond it (the late channels' missing samples are invalid, counted)", 0},
    {"seedlink_start", KT_STRING, OFF(input, seedlink_start), 0, KF_NO_RANGE, 0, 0, NULL, "\"\"", "UTC",
     "SeedLink: a first run asks for data from this time (\"2026-01-01T00:00:00Z\"; v3 TIME, v4 DATA ALL time); \"\" = from the next packet.  A saved sequence number ([output] state_dir) wins", 0},
    END};

static const struct conf_key output_keys[] = {
    {"endpoint", KT_STRING, OFF(output, endpoint), 0, KF_NO_RANGE, 0, 0, NULL, "\"\"", "",
     "ZeroMQ XPUB endpoint to publish on; \"\" = do not publish", 0},
    {"image_every", KT_INT, OFF(output, image_every), 0, 0, 1, 1e9, NULL, "1", "units",
     "publish the image every N shots", 0},
    {"image_interval", KT_DOUBLE, OFF(output, image_interval), 0, 0, 0, 1e9, NULL, "0.0", "s",
     "also publish when this long has passed; 0 = by count only", 0},
    {"slices_only", KT_BOOL, OFF(output, slices_only), 0, 0, 0, 0, NULL, "false", "",
     "publish three orthogonal slices instead of the volume", 0},
    {"hwm", KT_INT, OFF(output, hwm), 0, 0, 1, 1e7, NULL, "16", "messages",
     "send high-water mark per subscriber; a slower one is dropped, never waited for", 0},
    {"drain", KT_DOUBLE, OFF(output, drain), 0, 0, 0.05, 3600, NULL, "1.0", "s",
     "after the end of a run, how long the publisher keeps answering connected subscribers "
     "from its caches (final image, status, events) so that one that lost messages can fetch "
     "them", 0},
    {"dir", KT_PATH, OFF(output, dir), 0, KF_DIR | KF_NO_RANGE, 0, 0, NULL, "\"out\"", "path",
     "folder for final files (image, events, coherence)", 0},
    {"pictures", KT_BOOL, OFF(output, pictures), 0, 0, 0, 0, NULL, "true", "",
     "rtm: also draw the final image's three slices as image_{x,y,z}.png in dir (axes in "
     "metres, title, colour bar), as seislive-sub does for every image", 0},
    {"picture_gain", KT_DOUBLE, OFF(output, picture_gain), 0, 0, 0, 8, NULL, "0.0", "",
     "PNG depth gain: each value times depth^k (k = this); deep reflectors, weakened by "
     "spreading and transmission, become visible; 0 = none", 0},
    {"picture_agc", KT_DOUBLE, OFF(output, picture_agc), 0, 0, 0, 1e6, NULL, "0.0", "m",
     "PNG automatic gain control: each value over the RMS of its column in a depth window "
     "this long; 0 = none", 0},
    {"picture_percentile", KT_DOUBLE, OFF(output, picture_percentile), 0, KF_MIN_EXCL, 0, 100, NULL,
     "99.0", "%", "PNG colour clip: this percentile of |value| after the gain (one strong "
     "artifact does not wash the picture out)", 0},
    {"picture_at", KT_INT_VEC, OFF(output, picture_at), 3, 0, -1, 1 << 16, NULL, "[-1, -1, -1]",
     "cells", "PNG slice positions ix, iy, iz (cells from the grid's origin); -1 = the middle", 0},
    {"picture_size", KT_INT, OFF(output, picture_size), 0, 0, 64, 8192, NULL, "640", "pixels",
     "PNG plot size along its longer side (axes, title and colour bar are added around it)", 0},
    {"state_dir", KT_PATH, OFF(output, state_dir), 0, KF_DIR | KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "folder for the crash-safe state; \"\" = no checkpoints", 0},
    {"checkpoint_every", KT_INT, OFF(output, checkpoint_every), 0, 0, 1, 1e9, NULL, "1", "units",
     "checkpoint the state every N units", 0},
    {"checkpoint_interval", KT_DOUBLE, OFF(output, checkpoint_interval), 0, 0, 0, 1e9, NULL, "0.0", "s",
     "also checkpoint when this long has passed; 0 = by count only", 0},
    {"curve_secret_key", KT_STRING, OFF(output, curve_secret_key), 0, KF_NO_RANGE, 0, 0, NULL, "\"\"", "",
     "CURVE server secret key (Z85, 40 characters); \"\" = no encryption", 0},
    {"curve_public_key", KT_STRING, OFF(output, curve_public_key), 0, KF_NO_RANGE, 0, 0, NULL, "\"\"", "",
     "CURVE server public key (Z85)", 0},
    {"curve_clients", KT_PATH, OFF(output, curve_clients), 0, KF_MUST_EXIST | KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "file of allowed client public keys (Z85, one per line); others are refused", 0},
    {"http", KT_STRING, OFF(output, http), 0, KF_NO_RANGE, 0, 0, NULL, "\"\"", "",
     "live status page (read-only) at HOST:PORT, e.g. \"127.0.0.1:8080\" (this machine only; "
     "\"0.0.0.0:8080\" for every interface); \"\" = none. docs/http.md", 0},
    {"http_token", KT_STRING, OFF(output, http_token), 0, KF_NO_RANGE, 0, 0, NULL, "\"\"", "",
     "token the status page asks for (?token=T or Authorization: Bearer T; else 401); "
     "\"\" = none", 0},
    {"http_keep", KT_DOUBLE, OFF(output, http_keep), 0, 0, 0, 86400, NULL, "0.0", "s",
     "how long the status page stays up after the run ends (the final image and status)", 0},
    END};

static const struct conf_key runtime_keys[] = {
    {"device", KT_STRING, OFF(runtime, device), 0, KF_NO_RANGE, 0, 0, NULL, "\"auto\"", "",
     "auto (a GPU when usable, else the CPU), cpu, or cuda:N", 0},
    {"threads", KT_INT, OFF(runtime, threads), 0, 0, 0, 4096, NULL, "0", "",
     "CPU threads for the reference kernels; 0 = all cores", 0},
    {"metrics_interval", KT_DOUBLE, OFF(runtime, metrics_interval), 0, 0, 0, 1e6, NULL, "5.0", "s",
     "seconds between status messages and metric log lines; 0 = never", 0},
    {"decompose", KT_ENUM, OFF(runtime, decompose), 0, 0, 0, 0, decompose_kinds, "\"none\"", "",
     "how MPI ranks (mpirun -np N) share the work: none (one rank does it all), domain (the grid of "
     "each shot cut into slabs, one per rank; the model and rtm jobs), shots (the rtm job's shots "
     "handed out to the ranks, one image); docs/mpi.md", 0},
    {"split", KT_INT_VEC, OFF(runtime, split), 3, 0, 0, 4096, NULL, "[0, 0, 0]", "",
     "decompose = domain: subdomains along x, y, z (x must be 1; product = ranks); [0, 0, 0] = "
     "chosen from the grid and the rank count (z first, y too when z runs short)", 0},
    {"ranks", KT_INT, OFF(runtime, ranks), 0, 0, 0, 65536, NULL, "0", "",
     "seislive check: plan the decomposition for this many ranks; 0 = the ranks of this run "
     "(1 without mpirun); `check --ranks N` overrides", 0},
    {"device_map", KT_STRING, OFF(runtime, device_map), 0, KF_NO_RANGE, 0, 0, NULL, "\"\"", "",
     "with several ranks and device = auto: \"\" = GPU number = local rank (mod GPUs); "
     "\"A,B,..\" = the GPU of local rank 0, 1, ..", 0},
    {"halo_transport", KT_ENUM, OFF(runtime, halo_transport), 0, 0, 0, 0, halo_transports, "\"auto\"", "",
     "decompose = domain on GPUs: how halo planes travel: auto (NCCL when every rank has its own GPU "
     "and libnccl.so.2 loads, else staged), nccl (refused when impossible), staged (MPI through "
     "pinned host buffers); the CPU always uses MPI; docs/mpi.md", 0},
    END};

static const struct conf_key log_keys[] = {
    {"level", KT_ENUM, OFF(log, level), 0, 0, 0, 0, log_levels, "\"info\"", "",
     "least severe level logged: debug, info, warn, error", 0},
    {"file", KT_PATH, OFF(log, file), 0, KF_NO_RANGE, 0, 0, NULL, "\"\"", "path",
     "also append log lines to this file; \"\" = stderr only", 0},
    END};

const struct conf_section conf_sections[] = {
    {"job", "what to run", job_keys},
    {"model", "the velocity (or permittivity) model", model_keys},
    {"propagator", "the finite-difference wave propagator", propagator_keys},
    {"acquisition", "sources and receivers for forward modeling", acquisition_keys},
    {"rtm", "reverse time migration", rtm_keys},
    {"locate", "microseismic detection and location by coherent stacking", locate_keys},
    {"input", "where units (shots, trace blocks) come from", input_keys},
    {"output", "publishing, files and crash-safe state", output_keys},
    {"runtime", "device, threads and MPI ranks", runtime_keys},
    {"log", "logging", log_keys},
    {NULL, NULL, NULL},
};

const struct conf_section *schema_section(const char *name)
{
    for (const struct conf_section *s = conf_sections; s->name; s++)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

const struct conf_key *schema_key(const struct conf_section *sec, const char *name)
{
    for (const struct conf_key *k = sec->keys; k->name; k++)
        if (strcmp(k->name, name) == 0)
            return k;
    return NULL;
}
