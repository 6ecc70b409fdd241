// toml_bridge — the only C++ in seislive: toml++ parses the file, and this file copies
// the document into the plain C tree of conf_tree.h.  Nothing else sees toml++.
#include <toml++/toml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

extern "C" {
#include "conf/conf_tree.h"
#include "stream/error.h"
}

static char *dup_str(std::string_view s)
{
    char *p = static_cast<char *>(std::malloc(s.size() + 1));
    if (!p)
        std::abort();
    std::memcpy(p, s.data(), s.size());
    p[s.size()] = '\0';
    return p;
}

static void fill(struct conf_node *out, const toml::node &in, const toml::source_region &where)
{
    std::memset(out, 0, sizeof *out);
    out->line = static_cast<int>(where.begin.line);
    out->col = static_cast<int>(where.begin.column);
    if (auto *t = in.as_table()) {
        out->type = CN_TABLE;
        out->n = t->size();
        out->items = static_cast<struct conf_node *>(std::calloc(out->n ? out->n : 1, sizeof *out));
        // toml++ tables are ordered by key; sort members back into document order so
        // that the first error reported is the first one in the file.
        size_t k = 0;
        for (auto &&[key, val] : *t) {
            struct conf_node *m = &out->items[k++];
            fill(m, val, key.source().begin.line ? key.source() : val.source());
            m->key = dup_str(key.str());
        }
        std::qsort(out->items, out->n, sizeof *out->items, [](const void *a, const void *b) {
            auto *x = static_cast<const struct conf_node *>(a);
            auto *y = static_cast<const struct conf_node *>(b);
            return x->line != y->line ? x->line - y->line : x->col - y->col;
        });
    } else if (auto *a = in.as_array()) {
        out->type = CN_ARRAY;
        out->n = a->size();
        out->items = static_cast<struct conf_node *>(std::calloc(out->n ? out->n : 1, sizeof *out));
        for (size_t k = 0; k < a->size(); k++)
            fill(&out->items[k], (*a)[k], (*a)[k].source());
    } else if (auto *s = in.as_string()) {
        out->type = CN_STRING;
        out->str = dup_str(s->get());
    } else if (auto *i = in.as_integer()) {
        out->type = CN_INT;
        out->i = i->get();
    } else if (auto *f = in.as_floating_point()) {
        out->type = CN_FLOAT;
        out->f = f->get();
    } else if (auto *b = in.as_boolean()) {
        out->type = CN_BOOL;
        out->b = b->get();
    } else {
        out->type = CN_DATETIME;
    }
}

static int parse(std::string_view text, const char *name, struct conf_node **root)
{
    toml::table t;
    try {
        t = toml::parse(text, std::string_view(name));
    } catch (const toml::parse_error &e) {
        return err_set(-EINVAL, "%s:%u:%u: TOML syntax error: %.*s", name,
                       static_cast<unsigned>(e.source().begin.line),
                       static_cast<unsigned>(e.source().begin.column),
                       static_cast<int>(e.description().size()), e.description().data());
    }
    auto *r = static_cast<struct conf_node *>(std::calloc(1, sizeof **root));
    fill(r, t, toml::source_region{{1, 1}, {1, 1}, nullptr});
    *root = r;
    return 0;
}

extern "C" int conf_tree_parse_string(const char *text, const char *name, struct conf_node **root)
{
    return parse(std::string_view(text), name, root);
}

extern "C" int conf_tree_parse_file(const char *path, struct conf_node **root)
{
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        int e = errno ? errno : ENOENT;
        return err_set(-e, "%s: cannot open config file: %s", path, std::strerror(e));
    }
    std::stringstream ss;
    ss << f.rdbuf();
    std::string text = ss.str();
    return parse(text, path, root);
}

static void free_node(struct conf_node *n)
{
    for (size_t k = 0; k < n->n; k++)
        free_node(&n->items[k]);
    std::free(n->items);
    std::free(n->key);
    std::free(n->str);
}

extern "C" void conf_tree_free(struct conf_node *root)
{
    if (!root)
        return;
    free_node(root);
    std::free(root);
}

extern "C" const char *conf_node_type_name(enum conf_node_type t)
{
    switch (t) {
    case CN_TABLE: return "table";
    case CN_ARRAY: return "array";
    case CN_STRING: return "string";
    case CN_INT: return "integer";
    case CN_FLOAT: return "float";
    case CN_BOOL: return "boolean";
    case CN_DATETIME: return "date-time";
    }
    return "?";
}
