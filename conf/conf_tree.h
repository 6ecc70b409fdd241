/* conf_tree — a parsed TOML document as plain C: a tree of nodes, each with its
 * key and its source position.  Produced by the one C++ file (toml_bridge.cpp) so
 * that no TOML type reaches C code; config.c walks it against the schema. */
#ifndef SEISLIVE_CONF_TREE_H
#define SEISLIVE_CONF_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum conf_node_type {
    CN_TABLE, CN_ARRAY, CN_STRING, CN_INT, CN_FLOAT, CN_BOOL, CN_DATETIME
};

struct conf_node {
    enum conf_node_type type;
    char *key;             /* member name; NULL for array elements and the root */
    int line, col;         /* where the key (or the element) is written; 0 if unknown */
    char *str;             /* CN_STRING */
    int64_t i;             /* CN_INT */
    double f;              /* CN_FLOAT */
    bool b;                /* CN_BOOL */
    struct conf_node *items; /* CN_TABLE members in document order, CN_ARRAY elements */
    size_t n;
};

/* Parse PATH.  On a syntax error returns -EINVAL with err_msg() "PATH:LINE:COL: reason";
 * a missing or unreadable file gives -ENOENT / -EACCES naming PATH. */
int conf_tree_parse_file(const char *path, struct conf_node **root);
/* Parse TEXT; NAME stands for the file name in messages. */
int conf_tree_parse_string(const char *text, const char *name, struct conf_node **root);
void conf_tree_free(struct conf_node *root);

const char *conf_node_type_name(enum conf_node_type t);

#ifdef __cplusplus
}
#endif

#endif
