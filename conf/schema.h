/* schema — the table of every configuration key: section, name, type, where it goes
 * in struct sl_config, default (as TOML text), unit, range and documentation.
 * config.c validates against it, `seislive check` prints from it, docs are checked
 * against it.  To add a key: add the field to config.h and one line to schema.c. */
#ifndef SEISLIVE_SCHEMA_H
#define SEISLIVE_SCHEMA_H

#include <stddef.h>

enum key_type {
    KT_BOOL,        /* bool */
    KT_INT,         /* int */
    KT_I64,         /* int64_t */
    KT_DOUBLE,      /* double; integers accepted */
    KT_STRING,      /* char * */
    KT_PATH,        /* char *, resolved against the config file's folder */
    KT_ENUM,        /* int, index into names */
    KT_INT_VEC,     /* int[count] */
    KT_DOUBLE_VEC,  /* double[count] */
    KT_DOUBLE_LIST, /* double *, count at count_off (size_t) */
    KT_STRING_LIST, /* char **, count at count_off */
    KT_POINTS,      /* struct point_list: [[x, y, z], ...] */
};

enum key_flags {
    KF_BROADCAST = 1 << 0, /* a vector key also accepts one scalar for all elements */
    KF_MUST_EXIST = 1 << 1, /* a path that, when given, must exist */
    KF_EVEN = 1 << 2,       /* integer must be even */
    KF_MIN_EXCL = 1 << 3,   /* value must be > min, not >= min */
    KF_NO_RANGE = 1 << 4,   /* min/max unused */
    KF_DIR = 1 << 5,        /* a path that is a folder (created when missing, by its user) */
    KF_PLAIN = 1 << 6,      /* a string list of plain strings, not paths (not resolved) */
    KF_AUTO = 1 << 7,       /* a number that also takes the string "auto", stored as CONF_AUTO */
};

/* The value a KF_AUTO number holds when the config says "auto": outside every such key's
 * range, so no number a user writes can mean it.  Its user resolves it (e.g.
 * [propagator] operator_band, kernels/operator.h operator_band_resolve). */
#define CONF_AUTO (-1.0)

struct conf_key {
    const char *name;
    enum key_type type;
    size_t off;             /* offset in struct sl_config */
    int count;              /* vector length */
    unsigned flags;
    double min, max;        /* inclusive range (numbers, list elements, list length for paths) */
    const char *const *names; /* enum names, NULL-terminated */
    const char *def;        /* default as TOML text */
    const char *unit;
    const char *doc;
    size_t count_off;       /* lists: offset of the size_t element count */
};

struct conf_section {
    const char *name;
    const char *doc;
    const struct conf_key *keys;
};

/* NULL-terminated list of sections. */
extern const struct conf_section conf_sections[];

const struct conf_section *schema_section(const char *name);
const struct conf_key *schema_key(const struct conf_section *sec, const char *name);

#endif
