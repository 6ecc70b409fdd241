/* config — load a TOML file into struct sl_config, strictly.
 *
 * The document comes in as a plain tree (conf_tree.h) and is checked key by key
 * against the schema (schema.c).  Every error names FILE:LINE:COL, the section and
 * key, and the reason; a misspelt section, key or enum value gets a "did you mean".
 * Defaults are the schema's own default texts, parsed by the same code, so there is
 * one path for every value. */
#define LOG_COMPONENT "config"
#include "conf/config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf/conf_tree.h"
#include "conf/schema.h"
#include "conf/suggest.h"
#include "io/iso_time.h"
#include "io/seedlink.h"
#include "io/wire.h"
#include "stream/error.h"
#include "stream/log.h"

struct conf_where {
    char key[96];   /* "section.key" */
    int line, col;
};

struct load_ctx {
    struct sl_config *cfg;
    const char *name;     /* file name for messages */
    char basedir[PATH_MAX];
    bool check_paths;     /* false while applying defaults */
};

#define FIELD(cfg, key, T) ((T *)((char *)(cfg) + (key)->off))

static int key_error(const struct load_ctx *c, const struct conf_section *sec,
                     const struct conf_key *key, const struct conf_node *at, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int key_error(const struct load_ctx *c, const struct conf_section *sec,
                     const struct conf_key *key, const struct conf_node *at, const char *fmt, ...)
{
    char reason[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return err_set(-EINVAL, "%s:%d:%d: [%s] %s: %s", c->name, at->line, at->col, sec->name,
                   key->name, reason);
}

static const char *type_word(enum key_type t)
{
    switch (t) {
    case KT_BOOL: return "a boolean (true or false)";
    case KT_INT: case KT_I64: return "an integer";
    case KT_DOUBLE: return "a number";
    case KT_STRING: case KT_PATH: case KT_ENUM: return "a string";
    case KT_INT_VEC: return "an array of integers";
    case KT_DOUBLE_VEC: case KT_DOUBLE_LIST: return "an array of numbers";
    case KT_STRING_LIST: return "an array of strings";
    case KT_POINTS: return "an array of [x, y, z] points";
    }
    return "?";
}

/* type_word for KEY itself: a KF_AUTO number also takes "auto" */
static const char *key_type_word(const struct conf_key *key)
{
    return key->type == KT_DOUBLE && (key->flags & KF_AUTO) ? "a number or \"auto\"" : type_word(key->type);
}

static void range_text(const struct conf_key *key, char *buf, size_t len)
{
    const char *lo = (key->flags & KF_MIN_EXCL) ? "(" : "[";
    if (key->max >= 1e300)
        snprintf(buf, len, "must be %s %g", (key->flags & KF_MIN_EXCL) ? ">" : ">=", key->min);
    else
        snprintf(buf, len, "must be in %s%g, %g]", lo, key->min, key->max);
}

static bool in_range(const struct conf_key *key, double v)
{
    if (key->flags & KF_NO_RANGE)
        return true;
    if (key->flags & KF_MIN_EXCL ? !(v > key->min) : !(v >= key->min))
        return false;
    return v <= key->max;
}

/* One number (element ELEM of a vector, or -1 for a scalar) into OUT. */
static int get_number(const struct load_ctx *c, const struct conf_section *sec,
                      const struct conf_key *key, const struct conf_node *n, bool integer,
                      int elem, double *out)
{
    char where[32] = "";
    if (elem >= 0)
        snprintf(where, sizeof where, "element %d: ", elem + 1);
    if (integer && n->type != CN_INT)
        return key_error(c, sec, key, n, "%sexpected an integer, got %s%s", where,
                         conf_node_type_name(n->type),
                         n->type == CN_FLOAT ? " (write it without a decimal point)" : "");
    if (!integer && n->type != CN_INT && n->type != CN_FLOAT)
        return key_error(c, sec, key, n, "%sexpected a number, got %s", where,
                         conf_node_type_name(n->type));
    double v = n->type == CN_INT ? (double)n->i : n->f;
    if (!isfinite(v))
        return key_error(c, sec, key, n, "%s%g is not a finite number", where, v);
    if (!in_range(key, v)) {
        char r[96];
        range_text(key, r, sizeof r);
        return key_error(c, sec, key, n, "%s%g is out of range: %s", where, v, r);
    }
    if (integer && (key->flags & KF_EVEN) && ((int64_t)v % 2) != 0)
        return key_error(c, sec, key, n, "%s%g is odd: must be an even number from %g to %g",
                         where, v, key->min, key->max);
    *out = v;
    return 0;
}

static char *resolve_path(const struct load_ctx *c, const char *p)
{
    if (p[0] == '\0' || p[0] == '/' || c->basedir[0] == '\0')
        return strdup(p);
    size_t len = strlen(c->basedir) + strlen(p) + 2;
    char *r = malloc(len);
    if (!r)
        fatal("out of memory");
    if (strcmp(c->basedir, ".") == 0)
        snprintf(r, len, "%s", p);
    else
        snprintf(r, len, "%s/%s", c->basedir, p);
    return r;
}

static int set_string(const struct load_ctx *c, const struct conf_section *sec,
                      const struct conf_key *key, const struct conf_node *n)
{
    if (n->type != CN_STRING)
        return key_error(c, sec, key, n, "expected a string, got %s", conf_node_type_name(n->type));
    char **dst = FIELD(c->cfg, key, char *);
    char *val = key->type == KT_PATH ? resolve_path(c, n->str) : strdup(n->str);
    if (key->type == KT_PATH && (key->flags & KF_MUST_EXIST) && c->check_paths && val[0]) {
        struct stat st;
        if (stat(val, &st) != 0) {
            int e = errno;
            int rc = key_error(c, sec, key, n, "\"%s\": %s", val, strerror(e));
            free(val);
            return rc;
        }
        if (S_ISDIR(st.st_mode) && !(key->flags & KF_DIR)) {
            int rc = key_error(c, sec, key, n, "\"%s\" is a folder, expected a file", val);
            free(val);
            return rc;
        }
    }
    free(*dst);
    *dst = val;
    return 0;
}

static int set_enum(const struct load_ctx *c, const struct conf_section *sec,
                    const struct conf_key *key, const struct conf_node *n)
{
    if (n->type != CN_STRING)
        return key_error(c, sec, key, n, "expected a string, got %s", conf_node_type_name(n->type));
    for (int i = 0; key->names[i]; i++) {
        if (strcmp(key->names[i], n->str) == 0) {
            *FIELD(c->cfg, key, int) = i;
            return 0;
        }
    }
    char list[512] = "";
    size_t count = 0;
    for (int i = 0; key->names[i]; i++, count++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, key->names[i], sizeof list - strlen(list) - 1);
    }
    const char *near = suggest_closest(n->str, key->names, count, sizeof(char *));
    if (near)
        return key_error(c, sec, key, n, "\"%s\" is not one of: %s (did you mean \"%s\"?)", n->str,
                         list, near);
    return key_error(c, sec, key, n, "\"%s\" is not one of: %s", n->str, list);
}

static int set_vector(const struct load_ctx *c, const struct conf_section *sec,
                      const struct conf_key *key, const struct conf_node *n)
{
    bool integer = key->type == KT_INT_VEC;
    double vals[16];
    if (n->type != CN_ARRAY) {
        if (!(key->flags & KF_BROADCAST))
            return key_error(c, sec, key, n, "expected %s of %d, got %s", type_word(key->type),
                             key->count, conf_node_type_name(n->type));
        double v;
        int rc = get_number(c, sec, key, n, integer, -1, &v);
        if (rc < 0)
            return rc;
        for (int i = 0; i < key->count; i++)
            vals[i] = v;
    } else {
        if ((int)n->n != key->count)
            return key_error(c, sec, key, n, "expected %d elements, got %zu", key->count, n->n);
        for (int i = 0; i < key->count; i++) {
            int rc = get_number(c, sec, key, &n->items[i], integer, i, &vals[i]);
            if (rc < 0)
                return rc;
        }
    }
    for (int i = 0; i < key->count; i++) {
        if (integer)
            FIELD(c->cfg, key, int)[i] = (int)vals[i];
        else
            FIELD(c->cfg, key, double)[i] = vals[i];
    }
    return 0;
}

static int set_list(const struct load_ctx *c, const struct conf_section *sec,
                    const struct conf_key *key, const struct conf_node *n)
{
    if (n->type != CN_ARRAY)
        return key_error(c, sec, key, n, "expected %s, got %s", type_word(key->type),
                         conf_node_type_name(n->type));
    size_t *count = (size_t *)((char *)c->cfg + key->count_off);
    if (key->type == KT_DOUBLE_LIST) {
        double *v = calloc(n->n ? n->n : 1, sizeof *v);
        for (size_t i = 0; i < n->n; i++) {
            int rc = get_number(c, sec, key, &n->items[i], false, (int)i, &v[i]);
            if (rc < 0) {
                free(v);
                return rc;
            }
        }
        free(*FIELD(c->cfg, key, double *));
        *FIELD(c->cfg, key, double *) = v;
        *count = n->n;
        return 0;
    }
    /* KT_STRING_LIST */
    char **v = calloc(n->n + 1, sizeof *v);
    for (size_t i = 0; i < n->n; i++) {
        if (n->items[i].type != CN_STRING) {
            for (size_t j = 0; j < i; j++)
                free(v[j]);
            free(v);
            return key_error(c, sec, key, &n->items[i], "element %zu: expected a string, got %s",
                             i + 1, conf_node_type_name(n->items[i].type));
        }
        v[i] = (key->flags & KF_PLAIN) ? strdup(n->items[i].str) : resolve_path(c, n->items[i].str);
    }
    char **old = *FIELD(c->cfg, key, char **);
    for (size_t j = 0; old && j < *count; j++)
        free(old[j]);
    free(old);
    *FIELD(c->cfg, key, char **) = v;
    *count = n->n;
    return 0;
}

static int set_points(const struct load_ctx *c, const struct conf_section *sec,
                      const struct conf_key *key, const struct conf_node *n)
{
    if (n->type != CN_ARRAY)
        return key_error(c, sec, key, n, "expected %s, got %s", type_word(key->type),
                         conf_node_type_name(n->type));
    struct point_list *pl = FIELD(c->cfg, key, struct point_list);
    double (*p)[3] = calloc(n->n ? n->n : 1, sizeof *p);
    for (size_t i = 0; i < n->n; i++) {
        const struct conf_node *e = &n->items[i];
        if (e->type != CN_ARRAY || e->n != 3) {
            free(p);
            return key_error(c, sec, key, e, "point %zu: expected [x, y, z]", i + 1);
        }
        for (int k = 0; k < 3; k++) {
            int rc = get_number(c, sec, key, &e->items[k], false, -1, &p[i][k]);
            if (rc < 0) {
                free(p);
                return err_prefix(rc, "point %zu", i + 1);
            }
        }
    }
    free(pl->p);
    pl->p = p;
    pl->n = n->n;
    return 0;
}

static int set_value(const struct load_ctx *c, const struct conf_section *sec,
                     const struct conf_key *key, const struct conf_node *n)
{
    double v;
    int rc;
    switch (key->type) {
    case KT_BOOL:
        if (n->type != CN_BOOL)
            return key_error(c, sec, key, n, "expected a boolean (true or false), got %s",
                             conf_node_type_name(n->type));
        *FIELD(c->cfg, key, bool) = n->b;
        return 0;
    case KT_INT:
        if ((rc = get_number(c, sec, key, n, true, -1, &v)) < 0)
            return rc;
        *FIELD(c->cfg, key, int) = (int)v;
        return 0;
    case KT_I64:
        if ((rc = get_number(c, sec, key, n, true, -1, &v)) < 0)
            return rc;
        *FIELD(c->cfg, key, int64_t) = n->i;
        return 0;
    case KT_DOUBLE:
        if (key->flags & KF_AUTO) {
            if (n->type == CN_STRING) {
                if (strcmp(n->str, "auto") != 0)
                    return key_error(c, sec, key, n, "expected a number or \"auto\", got the string \"%s\"",
                                     n->str);
                *FIELD(c->cfg, key, double) = CONF_AUTO;
                return 0;
            }
            if (n->type != CN_INT && n->type != CN_FLOAT)
                return key_error(c, sec, key, n, "expected a number or \"auto\", got %s",
                                 conf_node_type_name(n->type));
        }
        if ((rc = get_number(c, sec, key, n, false, -1, &v)) < 0)
            return rc;
        *FIELD(c->cfg, key, double) = v;
        return 0;
    case KT_STRING:
    case KT_PATH:
        return set_string(c, sec, key, n);
    case KT_ENUM:
        return set_enum(c, sec, key, n);
    case KT_INT_VEC:
    case KT_DOUBLE_VEC:
        return set_vector(c, sec, key, n);
    case KT_DOUBLE_LIST:
    case KT_STRING_LIST:
        return set_list(c, sec, key, n);
    case KT_POINTS:
        return set_points(c, sec, key, n);
    }
    return err_set(-EINVAL, "internal: key type %d", key->type);
}

/* Remember where KEY was set, for config_where().  Out of memory is an error like any
 * other (the old pointer stays valid and owned by CFG, so config_free() still frees it). */
static int record_where(struct sl_config *cfg, const char *sec, const char *key,
                        const struct conf_node *n)
{
    struct conf_where *w = realloc(cfg->where, (cfg->n_where + 1) * sizeof *cfg->where);
    if (!w)
        return err_set(-ENOMEM, "%s:%d:%d: [%s] %s: out of memory", cfg->path ? cfg->path : "?",
                       n->line, n->col, sec, key);
    cfg->where = w;
    w = &cfg->where[cfg->n_where++];
    snprintf(w->key, sizeof w->key, "%s.%s", sec, key);
    w->line = n->line;
    w->col = n->col;
    return 0;
}

static int apply_tree(struct load_ctx *c, const struct conf_node *root, bool record)
{
    size_t nsec = 0;
    while (conf_sections[nsec].name)
        nsec++;
    for (size_t i = 0; i < root->n; i++) {
        const struct conf_node *s = &root->items[i];
        if (s->type != CN_TABLE)
            return err_set(-EINVAL, "%s:%d:%d: key \"%s\" is outside any section (put it under "
                           "[job], [model], ...)", c->name, s->line, s->col, s->key);
        const struct conf_section *sec = schema_section(s->key);
        if (!sec) {
            const char *near = suggest_closest(s->key, conf_sections, nsec, sizeof *conf_sections);
            if (near)
                return err_set(-EINVAL, "%s:%d:%d: unknown section [%s] (did you mean [%s]?)",
                               c->name, s->line, s->col, s->key, near);
            return err_set(-EINVAL, "%s:%d:%d: unknown section [%s]", c->name, s->line, s->col,
                           s->key);
        }
        for (size_t j = 0; j < s->n; j++) {
            const struct conf_node *k = &s->items[j];
            const struct conf_key *key = schema_key(sec, k->key);
            if (!key) {
                size_t nk = 0;
                while (sec->keys[nk].name)
                    nk++;
                const char *near = suggest_closest(k->key, sec->keys, nk, sizeof *sec->keys);
                if (k->type == CN_TABLE)
                    return err_set(-EINVAL, "%s:%d:%d: unknown section [%s.%s]", c->name,
                                   k->line, k->col, sec->name, k->key);
                if (near)
                    return err_set(-EINVAL, "%s:%d:%d: [%s] unknown key \"%s\" (did you mean "
                                   "\"%s\"?)", c->name, k->line, k->col, sec->name, k->key, near);
                return err_set(-EINVAL, "%s:%d:%d: [%s] unknown key \"%s\"", c->name, k->line,
                               k->col, sec->name, k->key);
            }
            int rc = set_value(c, sec, key, k);
            if (rc < 0)
                return rc;
            if (record && (rc = record_where(c->cfg, sec->name, key->name, k)) < 0)
                return rc;
        }
    }
    return 0;
}

/* ---- defaults ---------------------------------------------------------- */

static char *defaults_text(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    for (const struct conf_section *s = conf_sections; s->name; s++) {
        fprintf(f, "[%s]\n", s->name);
        for (const struct conf_key *k = s->keys; k->name; k++)
            fprintf(f, "%s = %s\n", k->name, k->def);
    }
    fclose(f);
    return buf;
}

static int apply_defaults(struct load_ctx *c)
{
    char *text = defaults_text();
    struct conf_node *root = NULL;
    int rc = conf_tree_parse_string(text, "<defaults>", &root);
    if (rc == 0) {
        const char *saved = c->name;
        c->name = "<defaults>";
        c->check_paths = false;
        rc = apply_tree(c, root, false);
        c->check_paths = true;
        c->name = saved;
    }
    conf_tree_free(root);
    free(text);
    if (rc < 0)
        fatal("schema defaults do not validate: %s", err_msg());
    return rc;
}

void config_defaults(struct sl_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    struct load_ctx c = {.cfg = cfg, .name = "<defaults>", .check_paths = false};
    apply_defaults(&c);
}

/* ---- checks that involve several keys ---------------------------------- */

const char *config_where(const struct sl_config *cfg, const char *key, char *buf, size_t len)
{
    for (size_t i = 0; i < cfg->n_where; i++) {
        if (strcmp(cfg->where[i].key, key) == 0) {
            snprintf(buf, len, "%s:%d:%d", cfg->path ? cfg->path : "?", cfg->where[i].line,
                     cfg->where[i].col);
            return buf;
        }
    }
    snprintf(buf, len, "%s", cfg->path ? cfg->path : "?");
    return buf;
}

static bool config_was_set(const struct sl_config *cfg, const char *key)
{
    for (size_t i = 0; i < cfg->n_where; i++)
        if (strcmp(cfg->where[i].key, key) == 0)
            return true;
    return false;
}

static int cross_error(const struct sl_config *cfg, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int cross_error(const struct sl_config *cfg, const char *key, const char *fmt, ...)
{
    char where[PATH_MAX + 32], reason[1024], sec[48];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    const char *dot = strchr(key, '.');
    snprintf(sec, sizeof sec, "%.*s", (int)(dot - key), key);
    return err_set(-EINVAL, "%s: [%s] %s: %s", config_where(cfg, key, where, sizeof where), sec,
                   dot + 1, reason);
}

/* [input] kind = "seedlink": the server, the selectors and the start time. */
static int seedlink_config_check(const struct sl_config *cfg)
{
    const struct input_conf *in = &cfg->input;
    if (cfg->job.kind != JOB_LOCATE)
        return cross_error(cfg, "input.kind", "kind \"seedlink\" feeds the locate job ([job] kind = \"locate\")");
    const char *colon = in->seedlink ? strrchr(in->seedlink, ':') : NULL;
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : 0;
    if (!in->seedlink || !in->seedlink[0])
        return cross_error(cfg, "input.kind", "kind \"seedlink\" needs [input] seedlink = \"HOST:PORT\"");
    if (!colon || colon == in->seedlink || !end || *end || port < 1 || port > 65535)
        return cross_error(cfg, "input.seedlink", "\"%s\" is not HOST:PORT (port 1-65535; SeedLink's is "
                           "usually 18000)", in->seedlink);
    if (in->n_streams == 0)
        return cross_error(cfg, "input.kind", "kind \"seedlink\" needs [input] streams (e.g. [\"XX_*:HH?\"])");
    for (size_t i = 0; i < in->n_streams; i++) {
        struct seedlink_selector sel;
        if (seedlink_selector_parse(in->streams[i], &sel))
            return cross_error(cfg, "input.streams", "element %zu: %s", i + 1, err_msg());
    }
    int64_t ns;
    if (in->seedlink_start[0] && seedlink_parse_time(in->seedlink_start, &ns))
        return cross_error(cfg, "input.seedlink_start", "\"%s\": not a UTC time like 2026-01-01T00:00:00Z",
                           in->seedlink_start);
    return 0;
}

/* "auto", "cpu" or "cuda:N" (N 0..1023, digits only): the syntax of [runtime] device.
 * Which device it resolves to is the backend's business (kernels/backend.h:
 * backend_parse, which accepts the same set; tests/test_config.c holds them together);
 * the config only refuses what can never name one. */
static bool device_spec_valid(const char *s)
{
    if (!strcmp(s, "auto") || !strcmp(s, "cpu"))
        return true;
    if (strncmp(s, "cuda:", 5) != 0)
        return false;
    const char *d = s + 5;
    long v = 0;
    if (!*d)
        return false;
    for (; *d; d++) {
        if (*d < '0' || *d > '9' || v >= 1024)
            return false;
        v = v * 10 + (*d - '0');
    }
    return v < 1024;
}

/* [runtime] decompose, split and device_map (docs/mpi.md): what can never run is refused
 * here; what depends on the rank count is checked when it is known (stream/decompose.c). */
static int check_ranks(const struct sl_config *cfg)
{
    const struct runtime_conf *r = &cfg->runtime;
    const int *sp = r->split;
    /* shots are the rtm job's units: the model job has one grid to cut ("domain"), the
     * locate job a stream of time blocks whose state runs from one block to the next */
    if (r->decompose == DECOMPOSE_SHOTS && cfg->job.kind != JOB_RTM)
        return cross_error(cfg, "runtime.decompose", "\"shots\" hands the shots of the rtm job out to the ranks; "
                           "the %s job has none (docs/mpi.md)%s", config_enum_name("job", "kind", cfg->job.kind),
                           cfg->job.kind == JOB_MODEL ? ": use \"domain\" to run it on several ranks" : "");
    if (r->decompose == DECOMPOSE_SHOTS && (sp[0] || sp[1] || sp[2]))
        return cross_error(cfg, "runtime.split", "[%d, %d, %d] cuts a grid (decompose = \"domain\"); with \"shots\" "
                           "each rank migrates whole shots: leave it [0, 0, 0]", sp[0], sp[1], sp[2]);
    if ((sp[0] || sp[1] || sp[2]) && (sp[0] != 1 || sp[1] < 1 || sp[2] < 1))
        return cross_error(cfg, "runtime.split", "[%d, %d, %d]: give [1, ny, nz] with ny, nz >= 1 (x is never "
                           "cut: the rows along x stay whole), or [0, 0, 0] to choose from the grid",
                           sp[0], sp[1], sp[2]);
    for (const char *c = r->device_map; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c == ',' && c[1] >= '0' && c[1] <= '9' && c != r->device_map)))
            return cross_error(cfg, "runtime.device_map", "\"%s\" is not a list of GPU numbers \"A,B,..\"",
                               r->device_map);
    return 0;
}

/* The TTI keys of [model]: a non-zero constant or a file only with physics = "tti" (an
 * anisotropy the run would silently ignore is a mistake; the zero defaults, as the
 * example file writes them, are harmless), a file and a non-zero constant not both; the
 * velocity of a permittivity model is not a v_pz.  Each value's range is the schema's;
 * the files are checked value by value when read (io/model.c). */
static int validate_tti(const struct sl_config *cfg)
{
    static const char *const names[4] = {"epsilon", "delta", "theta", "phi"};
    const struct model_conf *m = &cfg->model;
    const char *const files[4] = {m->epsilon_file, m->delta_file, m->theta_file, m->phi_file};
    const double consts[4] = {m->epsilon, m->delta, m->theta, m->phi};
    char key[48], fkey[48];
    for (int k = 0; k < 4; k++) {
        snprintf(key, sizeof key, "model.%s", names[k]);
        snprintf(fkey, sizeof fkey, "model.%s_file", names[k]);
        if (cfg->propagator.physics != PHYSICS_TTI) {
            if (consts[k] != 0 || files[k][0])
                return cross_error(cfg, files[k][0] ? fkey : key,
                                   "a TTI parameter, but [propagator] physics is \"acoustic\" (set physics = "
                                   "\"tti\", or remove it)");
            continue;
        }
        if (files[k][0] && consts[k] != 0)
            return cross_error(cfg, fkey, "give %s or %s_file, not both (%s = %g)", names[k], names[k], names[k],
                               consts[k]);
    }
    if (cfg->propagator.physics != PHYSICS_TTI)
        return 0;
    if (m->quantity == QTY_PERMITTIVITY)
        return cross_error(cfg, "propagator.physics", "\"tti\" needs a velocity model ([model] quantity = "
                           "\"permittivity\" is the electromagnetic mode)");
    /* Both constants: the only case the config can judge; a file's points are warned
     * about by the model reader. */
    if (!m->epsilon_file[0] && !m->delta_file[0] && m->epsilon < m->delta) {
        char where[PATH_MAX + 32];
        log_warn("%s: [model] epsilon %g < delta %g: the TTI propagator lowers delta to epsilon (no "
                 "pseudo-acoustic TTI system is stable with epsilon < delta where the tilt varies; docs/tti.md), so "
                 "the qP NMO velocity is v_pz sqrt(1 + 2 epsilon)", config_where(cfg, config_was_set(cfg, "model.epsilon") ? "model.epsilon" : "model.delta",
                                          where, sizeof where), m->epsilon, m->delta);
    }
    return 0;
}

/* The characteristic-function keys of [locate] (conf/locate_cf.c resolves them): each
 * band is two corners >= 0 or [-1, -1] (not set), high above low; a per-phase key for a
 * phase that is not stacked, or a shared key that every stacked phase overrides, is a
 * mistake (its value would be silently unused); per phase, lta longer than sta. */
static int validate_locate_cf(const struct sl_config *cfg)
{
    const struct locate_conf *l = &cfg->locate;
    const double *bands[3] = {l->band, l->band_p, l->band_s};
    static const char *const bkeys[3] = {"locate.band", "locate.band_p", "locate.band_s"};
    for (int i = 0; i < 3; i++) {
        const double *b = bands[i];
        int unset = b[0] < 0 && b[1] < 0;
        if (!unset && (b[0] < 0 || b[1] < 0))
            return cross_error(cfg, bkeys[i], "[%g, %g]: give two corners >= 0 (0 = that side open), or [-1, -1] "
                               "for not set", b[0], b[1]);
        if (!unset && (b[0] > 0 || b[1] > 0) && b[1] > 0 && !(b[1] > b[0]))
            return cross_error(cfg, bkeys[i], "[%g, %g]: the high corner must be above the low one", b[0], b[1]);
    }
    int stacked[2] = {l->phases != PHASES_S, l->phases != PHASES_P};
    const double own[2][4] = {{l->sta_p, l->lta_p, l->kurtosis_window_p, l->band_p[0] < 0 && l->band_p[1] < 0 ? 0 : 1},
                              {l->sta_s, l->lta_s, l->kurtosis_window_s, l->band_s[0] < 0 && l->band_s[1] < 0 ? 0 : 1}};
    const double shared[4] = {l->sta, l->lta, l->kurtosis_window, l->band[0] < 0 && l->band[1] < 0 ? 0 : 1};
    static const char *const names[4] = {"sta", "lta", "kurtosis_window", "band"};
    char key[64];
    for (int k = 0; k < 4; k++) {
        for (int p = 0; p < 2; p++)
            if (own[p][k] > 0 && !stacked[p]) {
                snprintf(key, sizeof key, "locate.%s_%c", names[k], "ps"[p]);
                return cross_error(cfg, key, "a setting of the %c phase, but phases = \"%s\" does not stack it",
                                   "PS"[p], l->phases == PHASES_P ? "P" : "S");
            }
        if (shared[k] > 0 && (!stacked[0] || own[0][k] > 0) && (!stacked[1] || own[1][k] > 0)) {
            snprintf(key, sizeof key, "locate.%s", names[k]);
            return cross_error(cfg, key, "%s_p / %s_s override it for every phase stacked, so it would be unused; "
                               "remove it or one of them", names[k], names[k]);
        }
    }
    for (int p = 0; p < 2; p++) {
        if (!stacked[p])
            continue;
        struct locate_cf_phase r;
        locate_cf_resolve(l, p, &r);
        if (!r.derived && !(r.lta > r.sta)) {
            const char *where = r.key_lta[0] ? r.key_lta : r.key_sta[0] ? r.key_sta : "locate.lta";
            return cross_error(cfg, where, "%s (%g s%s) must be longer than %s (%g s%s)",
                               r.key_lta[0] ? r.key_lta + 7 : "lta", r.lta, r.key_lta[0] ? "" : ", the default",
                               r.key_sta[0] ? r.key_sta + 7 : "sta", r.sta, r.key_sta[0] ? "" : ", the default");
        }
    }
    return 0;
}

static int validate_cross(const struct sl_config *cfg)
{
    const struct model_conf *m = &cfg->model;
    if ((m->type == MODEL_RAW || m->type == MODEL_SEGY) && m->file[0] == '\0')
        return cross_error(cfg, "model.type", "type \"%s\" needs [model] file",
                           m->type == MODEL_RAW ? "raw" : "segy");
    if (m->type == MODEL_LAYERED) {
        if (m->n_layer_velocities != m->n_layer_depths + 1)
            return cross_error(cfg, "model.layer_velocities",
                               "a layered model needs one velocity more than layer_depths "
                               "(%zu depths, %zu velocities)", m->n_layer_depths,
                               m->n_layer_velocities);
        for (size_t i = 1; i < m->n_layer_depths; i++)
            if (!(m->layer_depths[i] > m->layer_depths[i - 1]))
                return cross_error(cfg, "model.layer_depths",
                                   "depths must increase (element %zu: %g after %g)", i + 1,
                                   m->layer_depths[i], m->layer_depths[i - 1]);
        /* In the electromagnetic mode each layer holds a relative permittivity, >= 1 as in a
         * permittivity file (io/model.c): below it v = c0 / sqrt(eps_r mu_r) exceeds c0, and
         * a tiny one (1e-300) gave an infinite velocity. */
        for (size_t i = 0; m->quantity == QTY_PERMITTIVITY && i < m->n_layer_velocities; i++)
            if (!(m->layer_velocities[i] >= 1))
                return cross_error(cfg, "model.layer_velocities",
                                   "element %zu: relative permittivity %g is below 1 (quantity = "
                                   "\"permittivity\": the layers hold eps_r)", i + 1, m->layer_velocities[i]);
    }
    const struct propagator_conf *p = &cfg->propagator;
    int rc = validate_tti(cfg);
    if (rc < 0)
        return rc;
    if (p->wavelet == WAVELET_FILE && p->wavelet_file[0] == '\0')
        return cross_error(cfg, "propagator.wavelet", "wavelet \"file\" needs wavelet_file");
    const struct acquisition_conf *a = &cfg->acquisition;
    if ((a->rx_count[0] > 0) != (a->rx_count[1] > 0))
        return cross_error(cfg, "acquisition.rx_count",
                           "set both counts (a line is [n, 1]) or neither");
    const struct locate_conf *l = &cfg->locate;
    if ((rc = validate_locate_cf(cfg)) < 0)
        return rc;
    if (cfg->job.kind == JOB_LOCATE && l->stations[0] == '\0')
        return cross_error(cfg, "job.kind", "the locate job needs [locate] stations");
    if (l->traveltime == TT_LAYERED && l->layers[0] == '\0')
        return cross_error(cfg, "locate.traveltime", "traveltime \"layered\" needs [locate] layers");
    if (l->traveltime == TT_NONLINLOC && l->nll_p[0] == '\0' && l->nll_s[0] == '\0')
        return cross_error(cfg, "locate.traveltime", "traveltime \"nonlinloc\" needs nll_p or nll_s");
    const struct input_conf *in = &cfg->input;
    int64_t win[2] = {INT64_MIN, INT64_MAX};
    const char *win_s[2] = {in->start_time, in->end_time}, *win_k[2] = {"input.start_time", "input.end_time"};
    for (int k = 0; k < 2; k++)
        if (win_s[k] && win_s[k][0] && iso_time_parse(win_s[k], &win[k]) != 0)
            return cross_error(cfg, win_k[k], "\"%s\" is not an ISO 8601 UTC time (e.g. \"2024-05-01T12:00:00Z\")",
                               win_s[k]);
    if (!(win[0] < win[1]))
        return cross_error(cfg, "input.end_time", "end_time %s is not after start_time %s", in->end_time,
                           in->start_time);
    if ((win[0] != INT64_MIN || win[1] != INT64_MAX) &&
        !(cfg->job.kind == JOB_LOCATE && in->kind == INPUT_FILES && !in->watch))
        return cross_error(cfg, win[0] != INT64_MIN ? "input.start_time" : "input.end_time",
                           "the time window applies to the locate job's file input (kind = \"files\", not "
                           "watched) only: it would be ignored here");
    if (in->kind == INPUT_FILES && in->n_paths == 0)
        return cross_error(cfg, "input.kind", "kind \"files\" needs [input] paths");
    if (in->kind == INPUT_ZMQ && in->endpoint[0] == '\0')
        return cross_error(cfg, "input.endpoint", "kind \"zmq\" needs an endpoint");
    if (in->kind == INPUT_SEEDLINK) {
        int rc = seedlink_config_check(cfg);
        if (rc)
            return rc;
    }
    if (cfg->job.kind != JOB_MODEL && in->kind == INPUT_NONE)
        return cross_error(cfg, config_was_set(cfg, "input.kind") ? "input.kind" : "job.kind",
                           "job \"%s\" needs an input: kind = \"zmq\" or \"files\"",
                           cfg->job.kind == JOB_RTM ? "rtm" : "locate");
    const struct output_conf *o = &cfg->output;
    if ((o->curve_secret_key[0] != '\0') != (o->curve_public_key[0] != '\0'))
        return cross_error(cfg, "output.curve_secret_key",
                           "set both curve_secret_key and curve_public_key, or neither");
    if (o->curve_secret_key[0] && (strlen(o->curve_secret_key) != 40 || strlen(o->curve_public_key) != 40))
        return cross_error(cfg, "output.curve_secret_key", "CURVE keys are 40 Z85 characters");
    if (o->curve_secret_key[0] && !wire_has_curve()) /* else it would publish in plain text */
        return cross_error(cfg, "output.curve_secret_key", "this libzmq has no CURVE support");
    if (!device_spec_valid(cfg->runtime.device))
        return cross_error(cfg, "runtime.device", "\"%s\" is not \"auto\", \"cpu\" or \"cuda:N\"",
                           cfg->runtime.device);
    const struct propagator_conf *pc = &cfg->propagator;
    if (pc->cpml_memory == CPML_MEMORY_BF16 && pc->physics == PHYSICS_TTI)
        return cross_error(cfg, "propagator.cpml_memory", "\"bf16\" is for the acoustic propagator; physics "
                           "\"tti\" keeps fp32 memory");
    if (pc->cpml_memory == CPML_MEMORY_BF16 && pc->op == OPERATOR_IMPLICIT)
        return cross_error(cfg, "propagator.cpml_memory", "\"bf16\" is for the explicit operators (taylor, "
                           "optimized); the implicit operator keeps fp32 memory");
    if (pc->cpml_memory == CPML_MEMORY_BF16 && pc->kernel == KERNEL_NAIVE)
        return cross_error(cfg, "propagator.cpml_memory", "\"bf16\" runs in the tiled CUDA kernel's CPML "
                           "arrangement; kernel \"naive\" keeps fp32 memory");
    return check_ranks(cfg);
}

/* ---- defaults that depend on another key --------------------------------- */

/* The CPML defaults of the schema (12 layers, degree 4, pml_reflection 1e-3) are the
 * acoustic propagator's.  The TTI propagator's layers reflect mostly by their width and
 * the eps-delta taper inside them, less by the profile (tests/test_tti.c, 45 degree
 * tilt, the taper over the layers' outer 40 %, kernels/tti.h: 10 layers of degree 2
 * -37.9 dB at grazing incidence in 2D, degree 3 -37.8, degree 4 -34.2; 12 layers -40.9,
 * 8 -33.3), so with physics = "tti" the keys that the file does not set are 10 layers of
 * degree 2 and 1e-4 (docs/model.md). */
static void physics_defaults(struct sl_config *cfg)
{
    struct propagator_conf *p = &cfg->propagator;
    if (p->physics != PHYSICS_TTI)
        return;
    if (!config_was_set(cfg, "propagator.pml_width"))
        for (int f = 0; f < 6; f++)
            p->pml_width[f] = CONFIG_TTI_PML_WIDTH;
    if (!config_was_set(cfg, "propagator.pml_degree"))
        p->pml_degree = CONFIG_TTI_PML_DEGREE;
    if (!config_was_set(cfg, "propagator.pml_reflection"))
        p->pml_reflection = CONFIG_TTI_PML_REFLECTION;
    /* set thinner (a copy of the example file sets every key): allowed, but said */
    int thin = CONFIG_TTI_PML_WIDTH;
    for (int f = 0; f < 6; f++)
        if (p->pml_width[f] > 0 && p->pml_width[f] < thin)
            thin = p->pml_width[f];
    if (thin < CONFIG_TTI_PML_WIDTH) {
        char where[PATH_MAX + 32];
        log_warn("%s: [propagator] pml_width %d with physics = \"tti\": TTI layers absorb by their width, "
                 "whatever pml_degree (45 degree tilt, grazing incidence, 2D: 6 cells reflect about -26 dB, "
                 "8 about -33 dB, %d about -38 dB; docs/model.md); %d is the TTI default",
                 config_where(cfg, "propagator.pml_width", where, sizeof where), thin, CONFIG_TTI_PML_WIDTH,
                 CONFIG_TTI_PML_WIDTH);
    }
}

/* ---- load --------------------------------------------------------------- */

static int load_tree(struct conf_node *root, const char *name, struct sl_config *cfg)
{
    config_defaults(cfg);
    cfg->path = strdup(name);
    struct load_ctx c = {.cfg = cfg, .name = name, .check_paths = true};
    const char *slash = strrchr(name, '/');
    if (slash)
        snprintf(c.basedir, sizeof c.basedir, "%.*s", (int)(slash - name), name);
    else
        snprintf(c.basedir, sizeof c.basedir, ".");
    if (slash == name)
        snprintf(c.basedir, sizeof c.basedir, "/");
    int rc = apply_tree(&c, root, true);
    if (rc == 0) {
        physics_defaults(cfg);
        rc = validate_cross(cfg);
    }
    return rc;
}

int config_load(const char *path, struct sl_config *cfg)
{
    struct conf_node *root = NULL;
    int rc = conf_tree_parse_file(path, &root);
    if (rc < 0) {
        config_defaults(cfg);
        return rc;
    }
    rc = load_tree(root, path, cfg);
    conf_tree_free(root);
    return rc;
}

int config_load_string(const char *text, const char *name, struct sl_config *cfg)
{
    struct conf_node *root = NULL;
    int rc = conf_tree_parse_string(text, name, &root);
    if (rc < 0) {
        config_defaults(cfg);
        return rc;
    }
    rc = load_tree(root, name, cfg);
    conf_tree_free(root);
    return rc;
}

void config_free(struct sl_config *cfg)
{
    for (const struct conf_section *s = conf_sections; s->name; s++) {
        for (const struct conf_key *k = s->keys; k->name; k++) {
            switch (k->type) {
            case KT_STRING:
            case KT_PATH:
                free(*FIELD(cfg, k, char *));
                break;
            case KT_DOUBLE_LIST:
                free(*FIELD(cfg, k, double *));
                break;
            case KT_STRING_LIST: {
                char **v = *FIELD(cfg, k, char **);
                size_t n = *(size_t *)((char *)cfg + k->count_off);
                for (size_t i = 0; v && i < n; i++)
                    free(v[i]);
                free(v);
                break;
            }
            case KT_POINTS:
                free(FIELD(cfg, k, struct point_list)->p);
                break;
            default:
                break;
            }
        }
    }
    free(cfg->where);
    free(cfg->path);
    memset(cfg, 0, sizeof *cfg);
}

/* ---- printing ------------------------------------------------------------ */

static void print_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void print_value(FILE *out, const struct sl_config *cfg, const struct conf_key *k)
{
    switch (k->type) {
    case KT_BOOL: fputs(*FIELD(cfg, k, bool) ? "true" : "false", out); break;
    case KT_INT: fprintf(out, "%d", *FIELD(cfg, k, int)); break;
    case KT_I64: fprintf(out, "%lld", (long long)*FIELD(cfg, k, int64_t)); break;
    case KT_DOUBLE:
        if ((k->flags & KF_AUTO) && *FIELD(cfg, k, double) == CONF_AUTO)
            fputs("\"auto\"", out);
        else
            fprintf(out, "%.9g", *FIELD(cfg, k, double));
        break;
    case KT_STRING:
    case KT_PATH: print_string(out, *FIELD(cfg, k, char *) ? *FIELD(cfg, k, char *) : ""); break;
    case KT_ENUM: print_string(out, k->names[*FIELD(cfg, k, int)]); break;
    case KT_INT_VEC:
    case KT_DOUBLE_VEC:
        fputc('[', out);
        for (int i = 0; i < k->count; i++) {
            if (k->type == KT_INT_VEC)
                fprintf(out, "%s%d", i ? ", " : "", FIELD(cfg, k, int)[i]);
            else
                fprintf(out, "%s%.9g", i ? ", " : "", FIELD(cfg, k, double)[i]);
        }
        fputc(']', out);
        break;
    case KT_DOUBLE_LIST: {
        size_t n = *(size_t *)((char *)cfg + k->count_off);
        fputc('[', out);
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s%.9g", i ? ", " : "", (*FIELD(cfg, k, double *))[i]);
        fputc(']', out);
        break;
    }
    case KT_STRING_LIST: {
        size_t n = *(size_t *)((char *)cfg + k->count_off);
        fputc('[', out);
        for (size_t i = 0; i < n; i++) {
            fputs(i ? ", " : "", out);
            print_string(out, (*FIELD(cfg, k, char **))[i]);
        }
        fputc(']', out);
        break;
    }
    case KT_POINTS: {
        const struct point_list *pl = FIELD(cfg, k, struct point_list);
        fputc('[', out);
        for (size_t i = 0; i < pl->n; i++)
            fprintf(out, "%s[%.9g, %.9g, %.9g]", i ? ", " : "", pl->p[i][0], pl->p[i][1],
                    pl->p[i][2]);
        fputc(']', out);
        break;
    }
    }
}

static void print_section(FILE *out, const struct sl_config *cfg, const struct conf_section *s)
{
    fprintf(out, "[%s]\n", s->name);
    for (const struct conf_key *k = s->keys; k->name; k++) {
        fprintf(out, "%s = ", k->name);
        print_value(out, cfg, k);
        fputc('\n', out);
    }
}

void config_print(const struct sl_config *cfg, FILE *out)
{
    for (const struct conf_section *s = conf_sections; s->name; s++) {
        if (s != conf_sections)
            fputc('\n', out);
        print_section(out, cfg, s);
    }
}

void config_print_reference(FILE *out)
{
    for (const struct conf_section *s = conf_sections; s->name; s++) {
        fprintf(out, "## [%s] — %s\n\n| key | type | default | unit | meaning |\n"
                     "| --- | --- | --- | --- | --- |\n", s->name, s->doc);
        for (const struct conf_key *k = s->keys; k->name; k++) {
            fprintf(out, "| `%s` | %s | `%s` | %s | %s", k->name, key_type_word(k), k->def,
                    k->unit[0] ? k->unit : "—", k->doc);
            if (k->type == KT_ENUM) {
                fputs(" (one of:", out);
                for (int i = 0; k->names[i]; i++)
                    fprintf(out, " `%s`", k->names[i]);
                fputc(')', out);
            }
            fputs(" |\n", out);
        }
        fputc('\n', out);
    }
}

void config_print_example(FILE *out)
{
    fputs("# seislive configuration: every key, with its unit and default.\n"
          "# Relative paths are relative to this file's folder.\n"
          "# Validate with: seislive check -c FILE\n", out);
    for (const struct conf_section *s = conf_sections; s->name; s++) {
        fprintf(out, "\n# ---- %s\n[%s]\n", s->doc, s->name);
        for (const struct conf_key *k = s->keys; k->name; k++) {
            fprintf(out, "# %s.", k->doc);
            if (k->type == KT_ENUM) {
                fputs(" One of:", out);
                for (int i = 0; k->names[i]; i++)
                    fprintf(out, " %s", k->names[i]);
                fputc('.', out);
            }
            fprintf(out, "\n# unit: %s; default: %s\n%s = %s\n", k->unit[0] ? k->unit : "none",
                    k->def, k->name, k->def);
        }
    }
}

/* FNV-1a-style hash of the resolved values of SECTIONS (NULL: all, as config_print).
 * The offset constant is one digit short of FNV's: state files keep the fingerprints it
 * gave, so it stays. */
static uint64_t hash_sections(const struct sl_config *cfg, const char *const *sections)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return 0;
    if (sections)
        for (int i = 0; sections[i]; i++)
            print_section(f, cfg, schema_section(sections[i]));
    else
        config_print(cfg, f);
    fclose(f);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)buf[i];
        h *= 1099511628211ull;
    }
    free(buf);
    return h;
}

uint64_t config_fingerprint(const struct sl_config *cfg)
{
    /* the sections that change the numbers */
    static const char *const numeric[] = {"job", "model", "propagator", "rtm", "locate", NULL};
    return hash_sections(cfg, numeric);
}

uint64_t config_fingerprint_all(const struct sl_config *cfg) { return hash_sections(cfg, NULL); }

const char *config_enum_name(const char *section, const char *key, int value)
{
    const struct conf_section *s = schema_section(section);
    const struct conf_key *k = s ? schema_key(s, key) : NULL;
    if (!k || k->type != KT_ENUM || value < 0)
        return "?";
    for (int i = 0; k->names[i]; i++)
        if (i == value)
            return k->names[i];
    return "?";
}
