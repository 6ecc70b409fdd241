/* wave_tuning — see wave_tuning.h. */
#include "kernels/wave_tuning.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

static const char *const tile_names[WAVE_TILE_N] = {NULL, "16x1", "8x1", "8x2", "4x4", "8x4"};
static const char *const pipe_names[WAVE_PIPE_N] = {NULL, "ring", "regs"};
static const char *const cpml_names[WAVE_CPML_N] = {NULL, "split", "fused", "lines", "ring"};
static const char *const implicit_x_names[WAVE_IMPLICIT_X_N] = {NULL, "thread", "warp", "regs", "warpl"};
static const char *const implicit_yz_names[WAVE_IMPLICIT_YZ_N] = {NULL,      "march",  "chunks", "scan",  "overlap",
                                                                   "xyfused", "xypipe", "scanl",  "scanl1",
                                                                   "scanl256", "tile",   "tile3",  "tilea",
                                                                   "tileb",    "tilem",  "tilez",  "xyc",    "tileq",  "tileqn",
                                                                   "xycn",     "xyco",   "xycf",   "xycs",   "tileqw",
                                                                   "xycp",     "xyct"};

const char *wave_tile_name(int tile) { return tile > 0 && tile < WAVE_TILE_N ? tile_names[tile] : NULL; }
const char *wave_pipe_name(int pipe) { return pipe > 0 && pipe < WAVE_PIPE_N ? pipe_names[pipe] : NULL; }
const char *wave_cpml_name(int cpml) { return cpml > 0 && cpml < WAVE_CPML_N ? cpml_names[cpml] : NULL; }
const char *wave_implicit_x_name(int x)
{
    return x > 0 && x < WAVE_IMPLICIT_X_N ? implicit_x_names[x] : NULL;
}
const char *wave_implicit_yz_name(int yz)
{
    return yz > 0 && yz < WAVE_IMPLICIT_YZ_N ? implicit_yz_names[yz] : NULL;
}

/* "0, 1 (NAMES[1]), ... or N-1 (NAMES[N-1])" into BUF: the values a refusal lists, from
 * the table that names them. */
static const char *choice_list(const char *const *names, int n, char *buf, size_t len)
{
    size_t at = (size_t)snprintf(buf, len, "0");
    for (int k = 1; k < n && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%s%d (%s)", k == n - 1 ? " or " : ", ", k, names[k]);
    return buf;
}

/* The index of VAL in NAMES[1..N-1], or -1. */
static int lookup(const char *const *names, int n, const char *val)
{
    for (int k = 1; k < n; k++)
        if (!strcmp(names[k], val))
            return k;
    return -1;
}

/* A whole number in [LO, HI] (all of VAL), or -1. */
static int whole(const char *val, int lo, int hi)
{
    char *end;
    long v = strtol(val, &end, 10);
    return end != val && !*end && v >= lo && v <= hi ? (int)v : -1;
}

static bool naive_block_ok(int w, int h) { return w >= 32 && w <= 1024 && w % 32 == 0 && h >= 1 && h <= 1024 / w; }

int wave_tuning_set(struct wave_tuning *t, const char *key, const char *val)
{
    const bool def = !strcmp(val, "default");
    int v = -1;
    if (!strcmp(key, "tile")) {
        if ((v = def ? 0 : lookup(tile_names, WAVE_TILE_N, val)) >= 0)
            t->tile = v;
    } else if (!strcmp(key, "pipe")) {
        if ((v = def ? 0 : lookup(pipe_names, WAVE_PIPE_N, val)) >= 0)
            t->pipe = v;
    } else if (!strcmp(key, "prefetch")) {
        if ((v = def ? 0 : whole(val, 1, WAVE_PREFETCH_MAX)) >= 0)
            t->prefetch = v;
    } else if (!strcmp(key, "cpml")) {
        if ((v = def ? 0 : lookup(cpml_names, WAVE_CPML_N, val)) >= 0)
            t->cpml = v;
    } else if (!strcmp(key, "cpml-overlap")) {
        const bool on = !strcmp(val, "on"), off = !strcmp(val, "off");
        if (def || on || off) {
            t->cpml_overlap = def ? WAVE_OVERLAP_DEFAULT : on ? WAVE_OVERLAP_ON : WAVE_OVERLAP_OFF;
            v = 0;
        }
    } else if (!strcmp(key, "naive-block")) {
        int w, h, n = 0;
        if (def) {
            t->naive_block[0] = t->naive_block[1] = 0;
            v = 0;
        } else if (sscanf(val, "%dx%d%n", &w, &h, &n) == 2 && !val[n] && naive_block_ok(w, h)) {
            t->naive_block[0] = w;
            t->naive_block[1] = h;
            v = 0;
        }
    } else if (!strcmp(key, "layer-zchunk")) {
        if ((v = def ? 0 : whole(val, 1, 1 << 20)) >= 0)
            t->layer_zchunk = v;
    } else if (!strcmp(key, "ring-waves")) {
        if ((v = def ? 0 : whole(val, 1, WAVE_RING_WAVES_MAX)) >= 0)
            t->ring_waves = v;
    } else if (!strcmp(key, "implicit-x")) {
        if ((v = def ? 0 : lookup(implicit_x_names, WAVE_IMPLICIT_X_N, val)) >= 0)
            t->implicit_x = v;
    } else if (!strcmp(key, "implicit-yz")) {
        if ((v = def ? 0 : lookup(implicit_yz_names, WAVE_IMPLICIT_YZ_N, val)) >= 0)
            t->implicit_yz = v;
    } else
        return err_set(-EINVAL, "wave tuning: unknown choice '%s' (tile, pipe, prefetch, cpml, cpml-overlap, "
                                "naive-block, layer-zchunk, ring-waves, implicit-x, implicit-yz)", key);
    if (v < 0)
        return err_set(-EINVAL, "wave tuning: %s '%s' is not one of its values (kernels/wave_tuning.h)", key, val);
    return 0;
}

int wave_tuning_check(const struct wave_tuning *t, int kernel)
{
    if (t->tile < 0 || t->tile >= WAVE_TILE_N)
        return err_set(-EINVAL, "wave tuning: tile %d: 0 or 1..%d", t->tile, WAVE_TILE_N - 1);
    if (t->pipe < 0 || t->pipe >= WAVE_PIPE_N)
        return err_set(-EINVAL, "wave tuning: pipe %d: 0, 1 (ring) or 2 (regs)", t->pipe);
    if (t->prefetch < 0 || t->prefetch > WAVE_PREFETCH_MAX)
        return err_set(-EINVAL, "wave tuning: prefetch %d: 0 or 1..%d", t->prefetch, WAVE_PREFETCH_MAX);
    if (t->cpml < 0 || t->cpml >= WAVE_CPML_N)
        return err_set(-EINVAL, "wave tuning: cpml %d: 0 or 1..%d", t->cpml, WAVE_CPML_N - 1);
    if (t->cpml_overlap < -1 || t->cpml_overlap > 1)
        return err_set(-EINVAL, "wave tuning: cpml_overlap %d: 0, 1 (on) or -1 (off)", t->cpml_overlap);
    if (t->layer_zchunk < 0)
        return err_set(-EINVAL, "wave tuning: layer_zchunk %d: 0 or > 0", t->layer_zchunk);
    if (t->ring_waves < 0 || t->ring_waves > WAVE_RING_WAVES_MAX)
        return err_set(-EINVAL, "wave tuning: ring_waves %d: 0 or 1..%d", t->ring_waves, WAVE_RING_WAVES_MAX);
    char choices[512];
    if (t->implicit_x < 0 || t->implicit_x >= WAVE_IMPLICIT_X_N)
        return err_set(-EINVAL, "wave tuning: implicit_x %d: %s", t->implicit_x,
                       choice_list(implicit_x_names, WAVE_IMPLICIT_X_N, choices, sizeof choices));
    if (t->implicit_yz < 0 || t->implicit_yz >= WAVE_IMPLICIT_YZ_N)
        return err_set(-EINVAL, "wave tuning: implicit_yz %d: %s", t->implicit_yz,
                       choice_list(implicit_yz_names, WAVE_IMPLICIT_YZ_N, choices, sizeof choices));
    const int w = t->naive_block[0], h = t->naive_block[1];
    if ((w || h) && !naive_block_ok(w, h))
        return err_set(-EINVAL, "wave tuning: naive_block %dx%d: W a multiple of 32, W x H <= 1024 (or 0x0)", w, h);
    if (kernel == WAVE_KERNEL_NAIVE)
        return 0;
    const bool regs = t->pipe == WAVE_PIPE_REGS;
    if (regs ? t->tile == WAVE_TILE_8x4 : t->tile == WAVE_TILE_16x1 || t->tile == WAVE_TILE_8x1)
        return err_set(-EINVAL, "wave tuning: tile %s does not exist for the %s pipeline", tile_names[t->tile],
                       regs ? "regs" : "ring");
    if (regs && t->prefetch > 2)
        return err_set(-EINVAL, "wave tuning: prefetch %d: the regs pipeline takes 1 or 2", t->prefetch);
    return 0;
}
