/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — expression graphs: the builder (hash-consing, folding, eager values and tangents). */
#include "graph/graph.h"

#include <stdlib.h>
#include <string.h>

#include "graph/graph_ops_internal.h"

struct lf_graph {
    lf_gnode *node;
    double *val;        /* value of each node at the trace point */
    double *tan;        /* nt tangents per node (NULL when nt = 0) */
    int nt;
    int n, cap;
    int32_t *slot;      /* hash table of node ids (-1: empty), size hcap (a power of two) */
    int hcap;
    int *inputs, nin, incap;   /* node of each input */
    int *params, npar, parcap; /* node of each parameter */
    int has_select;
    lf_error err;       /* err.code != LF_OK once failed */
};

int lf_gop_arity(int op)
{
    switch (op) {
    case LF_G_CONST: case LF_G_INPUT: case LF_G_PARAM: return 0;
    case LF_G_NEG: case LF_G_SQRT: case LF_G_EXP: case LF_G_LOG: case LF_G_SIN: case LF_G_COS: case LF_G_TAN:
    case LF_G_ASIN: case LF_G_ACOS: case LF_G_ATAN: case LF_G_ABS: case LF_G_SIGN: case LF_G_NOT:
    case LF_G_STUMPFF: return 1;
    case LF_G_SELECT: return 3;
    default: return op > 0 && op < LF_G_NOPS ? 2 : -1;
    }
}

lf_graph *lf_graph_new(int nt, lf_error *err)
{
    if (nt < 0 || nt > LF_GRAPH_MAXT) {
        lf_error_set(err, LF_EINVAL, "lf_graph_new: %d tangent directions (0 to %d)", nt, LF_GRAPH_MAXT);
        return NULL;
    }
    lf_graph *g = calloc(1, sizeof *g);
    if (!g) {
        lf_error_set(err, LF_ENOMEM, "lf_graph_new: out of memory");
        return NULL;
    }
    g->nt = nt;
    g->hcap = 256;
    g->slot = malloc((size_t)g->hcap * sizeof *g->slot);
    if (!g->slot) {
        free(g);
        lf_error_set(err, LF_ENOMEM, "lf_graph_new: out of memory");
        return NULL;
    }
    memset(g->slot, 0xff, (size_t)g->hcap * sizeof *g->slot);
    return g;
}

void lf_graph_free(lf_graph *g)
{
    if (!g) return;
    free(g->node);
    free(g->val);
    free(g->tan);
    free(g->slot);
    free(g->inputs);
    free(g->params);
    free(g);
}

int lf_graph_status(const lf_graph *g) { return g ? g->err.code : LF_EINVAL; }
const lf_error *lf_graph_error(const lf_graph *g) { return &g->err; }

int lf_graph_fail(lf_graph *g, int code, const char *msg)
{
    if (g->err.code == LF_OK) lf_error_set(&g->err, code, "%s", msg);
    return -1;
}

int lf_graph_size(const lf_graph *g) { return g->n; }
int lf_graph_ntangents(const lf_graph *g) { return g->nt; }
int lf_graph_ninputs(const lf_graph *g) { return g->nin; }
int lf_graph_nparams(const lf_graph *g) { return g->npar; }
int lf_graph_input_node(const lf_graph *g, int i) { return i >= 0 && i < g->nin ? g->inputs[i] : -1; }
const lf_gnode *lf_graph_node(const lf_graph *g, int i) { return i >= 0 && i < g->n ? &g->node[i] : NULL; }
double lf_graph_value(const lf_graph *g, int i) { return i >= 0 && i < g->n ? g->val[i] : NAN; }
const double *lf_graph_tangent(const lf_graph *g, int i)
{
    return g->nt && i >= 0 && i < g->n ? g->tan + (size_t)i * g->nt : NULL;
}
int lf_graph_has_select(const lf_graph *g) { return g->has_select; }

int lf_graph_is_const(const lf_graph *g, int i, double *v)
{
    if (i < 0 || i >= g->n || g->node[i].op != LF_G_CONST) return 0;
    if (v) *v = g->val[i];
    return 1;
}

/* ---------------------------------------------------------------- storage */
static int grow_nodes(lf_graph *g)
{
    if (g->n < g->cap) return 1;
    if (g->cap >= LF_GRAPH_MAX_NODES) {
        lf_error_set(&g->err, LF_EINVAL, "expression graph: more than %d nodes (a runaway trace?)", LF_GRAPH_MAX_NODES);
        return 0;
    }
    int cap = g->cap ? 2 * g->cap : 256;
    if (cap > LF_GRAPH_MAX_NODES) cap = LF_GRAPH_MAX_NODES;
    lf_gnode *node = realloc(g->node, (size_t)cap * sizeof *node);
    if (node) g->node = node;
    double *val = node ? realloc(g->val, (size_t)cap * sizeof *val) : NULL;
    if (val) g->val = val;
    double *tan = NULL;
    if (val && g->nt) {
        tan = realloc(g->tan, (size_t)cap * g->nt * sizeof *tan);
        if (tan) g->tan = tan;
    }
    if (!node || !val || (g->nt && !tan)) {
        lf_error_set(&g->err, LF_ENOMEM, "expression graph: out of memory at %d nodes", g->n);
        return 0;
    }
    g->cap = cap;
    return 1;
}

static uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t node_hash(const lf_gnode *n, double v)
{
    uint64_t h = mix((uint64_t)n->op, (uint64_t)(uint32_t)n->k);
    if (n->op == LF_G_CONST) {
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        return mix(h, bits);
    }
    h = mix(h, (uint64_t)(uint32_t)n->a);
    h = mix(h, (uint64_t)(uint32_t)n->b);
    return mix(h, (uint64_t)(uint32_t)n->c);
}

static int same(const lf_graph *g, int id, const lf_gnode *n, double v)
{
    const lf_gnode *m = &g->node[id];
    if (m->op != n->op || m->k != n->k || m->a != n->a || m->b != n->b || m->c != n->c) return 0;
    return n->op != LF_G_CONST || memcmp(&g->val[id], &v, sizeof v) == 0;
}

static int rehash(lf_graph *g)
{
    int cap = 2 * g->hcap;
    int32_t *slot = malloc((size_t)cap * sizeof *slot);
    if (!slot) {
        lf_error_set(&g->err, LF_ENOMEM, "expression graph: out of memory at %d nodes", g->n);
        return 0;
    }
    memset(slot, 0xff, (size_t)cap * sizeof *slot);
    for (int i = 0; i < g->n; i++) {
        int op = g->node[i].op;
        if (op == LF_G_INPUT || op == LF_G_PARAM) continue;
        uint64_t h = node_hash(&g->node[i], g->val[i]);
        size_t j = (size_t)h & (size_t)(cap - 1);
        while (slot[j] >= 0) j = (j + 1) & (size_t)(cap - 1);
        slot[j] = i;
    }
    free(g->slot);
    g->slot = slot;
    g->hcap = cap;
    return 1;
}

/* Append node n with value v and tangents t (NULL: 0); hashed unless it is a leaf. */
static int append(lf_graph *g, const lf_gnode *n, double v, const double *t, size_t hslot)
{
    if (!grow_nodes(g)) return -1;
    int id = g->n++;
    g->node[id] = *n;
    g->val[id] = v;
    if (g->nt) {
        double *dst = g->tan + (size_t)id * g->nt;
        for (int i = 0; i < g->nt; i++) dst[i] = t ? t[i] : 0;
    }
    if (n->op != LF_G_INPUT && n->op != LF_G_PARAM) {
        g->slot[hslot] = id;
        if (2 * g->n > g->hcap && !rehash(g)) return -1;
    }
    return id;
}

/* The node equal to n (value v), made if new. */
static int intern(lf_graph *g, const lf_gnode *n, double v, const double *t)
{
    if (g->err.code != LF_OK) return -1;
    uint64_t h = node_hash(n, v);
    size_t j = (size_t)h & (size_t)(g->hcap - 1);
    while (g->slot[j] >= 0) {
        if (same(g, g->slot[j], n, v)) return g->slot[j];
        j = (j + 1) & (size_t)(g->hcap - 1);
    }
    return append(g, n, v, t, j);
}

/* ---------------------------------------------------------------- leaves */
static int add_leaf(lf_graph *g, int op, int **list, int *count, int *cap, double value, const double *tangent)
{
    if (g->err.code != LF_OK) return -1;
    if (*count == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        int *l = realloc(*list, (size_t)nc * sizeof *l);
        if (!l) {
            lf_error_set(&g->err, LF_ENOMEM, "expression graph: out of memory");
            return -1;
        }
        *list = l;
        *cap = nc;
    }
    lf_gnode n = {op, *count, -1, -1, -1};
    int id = append(g, &n, value, tangent, 0);
    if (id >= 0) (*list)[(*count)++] = id;
    return id;
}

int lf_graph_input(lf_graph *g, double value, const double *tangent)
{
    return add_leaf(g, LF_G_INPUT, &g->inputs, &g->nin, &g->incap, value, tangent);
}

int lf_graph_param(lf_graph *g, double value)
{
    return add_leaf(g, LF_G_PARAM, &g->params, &g->npar, &g->parcap, value, NULL);
}

int lf_graph_const(lf_graph *g, double v)
{
    lf_gnode n = {LF_G_CONST, 0, -1, -1, -1};
    return intern(g, &n, v, NULL);
}

/* ---------------------------------------------------------------- operations */
static int is_k(const lf_graph *g, int id, double k) { double v; return lf_graph_is_const(g, id, &v) && v == k; }

/* Exact simplifications; -2 when none applies. */
static int simplify(lf_graph *g, int op, int a, int b, int c)
{
    switch (op) {
    case LF_G_ADD:
        if (is_k(g, a, 0) && !lf_graph_is_const(g, b, NULL)) return b;
        if (is_k(g, b, 0) && !lf_graph_is_const(g, a, NULL)) return a;
        break;
    case LF_G_SUB:
        if (is_k(g, b, 0)) return a;
        if (is_k(g, a, 0)) return lf_g1(g, LF_G_NEG, b);
        break;
    case LF_G_MUL:
        if (is_k(g, a, 1)) return b;
        if (is_k(g, b, 1)) return a;
        if (is_k(g, a, -1)) return lf_g1(g, LF_G_NEG, b);
        if (is_k(g, b, -1)) return lf_g1(g, LF_G_NEG, a);
        break;
    case LF_G_MULZ:
        if (is_k(g, a, 0) || is_k(g, b, 0)) return lf_graph_const(g, 0);
        if (is_k(g, a, 1)) return b;
        break;
    case LF_G_DIV:
        if (is_k(g, b, 1)) return a;
        break;
    case LF_G_NEG:
        if (g->node[a].op == LF_G_NEG) return g->node[a].a;
        break;
    case LF_G_POW: { /* small integer powers as products (within an ulp or two of pow) */
        double e;
        if (lf_graph_is_const(g, b, &e) && e == 0) return lf_graph_const(g, 1); /* pow(x, 0) = 1 for every x */
        if (!lf_graph_is_const(g, b, &e) || !(e >= -4 && e <= 4) || e != (int)e) break; /* (NaN, huge: no cast) */
        int n = (int)fabs(e), sq = n >= 2 ? lf_g2(g, LF_G_MUL, a, a) : a;
        int r = n == 1 ? a : n == 2 ? sq : n == 3 ? lf_g2(g, LF_G_MUL, sq, a) : lf_g2(g, LF_G_MUL, sq, sq);
        return e > 0 ? r : lf_g2(g, LF_G_DIV, lf_graph_const(g, 1), r);
    }
    case LF_G_SELECT: {
        double cv;
        if (lf_graph_is_const(g, a, &cv)) return cv != 0 ? b : c;
        if (b == c) return b;
        break;
    }
    default: break;
    }
    return -2;
}

static int commutative(int op)
{
    return op == LF_G_ADD || op == LF_G_MUL || op == LF_G_EQ || op == LF_G_NE || op == LF_G_AND || op == LF_G_OR;
}

int lf_graph_op(lf_graph *g, int op, int a, int b, int c, int k)
{
    if (!g || g->err.code != LF_OK) return -1;
    int ar = lf_gop_arity(op);
    if (ar < 1) return lf_graph_fail(g, LF_EINVAL, "expression graph: op is not an operation");
    int opd[3] = {a, ar >= 2 ? b : -1, ar == 3 ? c : -1};
    for (int i = 0; i < ar; i++)
        if (opd[i] < 0 || opd[i] >= g->n) return lf_graph_fail(g, LF_EINVAL, "expression graph: an operand is not a node");
    if (op == LF_G_STUMPFF && (k < 0 || k > LF_STUMPFF_KMAX))
        return lf_graph_fail(g, LF_EINVAL, "expression graph: Stumpff index out of range");
    if (op != LF_G_STUMPFF) k = 0;
    if (commutative(op) && opd[0] > opd[1]) {
        int t = opd[0];
        opd[0] = opd[1];
        opd[1] = t;
    }
    int s = simplify(g, op, opd[0], opd[1], opd[2]);
    if (s != -2) return s;
    double v[3] = {0, 0, 0};
    int all_const = 1;
    for (int i = 0; i < ar; i++) {
        v[i] = g->val[opd[i]];
        all_const &= g->node[opd[i]].op == LF_G_CONST;
    }
    double y = lf_gop_value(op, k, v[0], v[1], v[2]);
    if (all_const) return lf_graph_const(g, y);
    lf_gnode n = {op, k, opd[0], opd[1], opd[2]};
    double t[LF_GRAPH_MAXT] = {0, 0, 0};
    if (g->nt) { /* eager forward mode; a zero tangent contributes 0 even through an infinite partial */
        double d[3];
        lf_gop_partials(op, k, v[0], v[1], v[2], y, d);
        for (int i = 0; i < ar; i++) {
            const double *ti = g->tan + (size_t)opd[i] * g->nt;
            for (int j = 0; j < g->nt; j++)
                if (ti[j] != 0 && d[i] != 0) t[j] += d[i] * ti[j];
        }
    }
    int id = intern(g, &n, y, t);
    if (id >= 0 && op == LF_G_SELECT) g->has_select = 1;
    return id;
}

int lf_graph_min(lf_graph *g, int a, int b) { return lf_gselect(g, lf_g2(g, LF_G_LT, b, a), b, a); }
int lf_graph_max(lf_graph *g, int a, int b) { return lf_gselect(g, lf_g2(g, LF_G_LT, a, b), b, a); }
