/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — programs: dead-node elimination, slot allocation and the tape interpreter. */
#include "graph/graph_prog_internal.h"

#include <stdlib.h>
#include <string.h>

#include "graph/graph_ops_internal.h"

struct lf_gprog {
    int nops, nslots, nout, nparams, nloads, nconsts;
    lf_ginstr *ins;
    lf_gload *loads;
    double *consts;
    int32_t *out;   /* slot of each output */
};

int lf_gprog_nops(const lf_gprog *p) { return p->nops; }
int lf_gprog_nslots(const lf_gprog *p) { return p->nslots; }
int lf_gprog_nout(const lf_gprog *p) { return p->nout; }
int lf_gprog_nloads(const lf_gprog *p) { return p->nloads; }
const lf_gload *lf_gprog_loads(const lf_gprog *p) { return p->loads; }
int lf_gprog_nconsts(const lf_gprog *p) { return p->nconsts; }
const double *lf_gprog_consts(const lf_gprog *p) { return p->consts; }
const lf_ginstr *lf_gprog_instrs(const lf_gprog *p) { return p->ins; }
const int32_t *lf_gprog_out_slots(const lf_gprog *p) { return p->out; }

void lf_gprog_free(lf_gprog *p)
{
    if (!p) return;
    free(p->ins);
    free(p->loads);
    free(p->consts);
    free(p->out);
    free(p);
}

static int operand(const lf_gnode *n, int w) { return w == 0 ? n->a : w == 1 ? n->b : n->c; }

/* Build state: per graph node its slot (-1 none), the index of its last use, whether it is live,
 * and subk: for a substituted node (read from segment subseg) its offset + 1, 0 for others. */
typedef struct {
    int *slot, *last, *subk;
    char *live;
    int *free_slots, nfree, nslots;
} build;

static int take_slot(build *b) { return b->nfree > 0 ? b->free_slots[--b->nfree] : b->nslots++; }

static void build_free(build *b)
{
    free(b->slot);
    free(b->last);
    free(b->subk);
    free(b->live);
    free(b->free_slots);
}

static lf_gprog *fail(lf_gprog *p, build *b, lf_error *err, int code, const char *msg)
{
    lf_gprog_free(p);
    build_free(b);
    if (msg) lf_error_set(err, code, "%s", msg);
    return NULL;
}

/* Liveness: what the outputs need (not what substituted nodes are made of). */
static void mark_live(build *b, const lf_graph *g, int top, int nout, const int *out)
{
    for (int i = 0; i < nout; i++) b->live[out[i]] = 1;
    for (int i = top; i >= 0; i--) {
        if (!b->live[i] || b->subk[i]) continue;
        const lf_gnode *nd = lf_graph_node(g, i);
        for (int w = 0, ar = lf_gop_arity(nd->op); w < ar; w++) b->live[operand(nd, w)] = 1;
    }
}

/* The counts of live constants, loads and instructions into *nconsts, *nloads, *nops; the last use
 * of every live node (an output is never released); every slot -1. */
static void count_uses(build *b, const lf_graph *g, int top, int nout, const int *out, int *nops, int *nloads,
                       int *nconsts)
{
    *nops = *nloads = *nconsts = 0;
    for (int i = 0; i <= top; i++) {
        b->slot[i] = -1;
        b->last[i] = -1;
        if (!b->live[i]) continue;
        int op = lf_graph_node(g, i)->op;
        if (op == LF_G_CONST) (*nconsts)++;
        else if (op == LF_G_INPUT || op == LF_G_PARAM || b->subk[i]) (*nloads)++;
        else (*nops)++;
    }
    for (int i = 0; i <= top; i++) {
        if (!b->live[i] || b->subk[i]) continue;
        const lf_gnode *nd = lf_graph_node(g, i);
        for (int w = 0, ar = lf_gop_arity(nd->op); w < ar; w++) b->last[operand(nd, w)] = i;
    }
    for (int i = 0; i < nout; i++) b->last[out[i]] = top + 1;
}

/* The load of node i (an input, a parameter or a substituted node) into a new slot; segstart[s]:
 * the index of segment s's first input. -1: an input outside the layout. */
static int emit_load(build *b, lf_gprog *p, const lf_gnode *nd, int i, const lf_glayout *layout,
                     const int *segstart)
{
    lf_gload *l = &p->loads[p->nloads++];
    if (b->subk[i]) {
        l->seg = layout->subseg;
        l->off = b->subk[i] - 1;
    } else if (nd->op == LF_G_PARAM) {
        l->seg = -1;
        l->off = nd->k;
        if (nd->k + 1 > p->nparams) p->nparams = nd->k + 1;
    } else {
        int s = 0;
        while (s < layout->nseg && nd->k >= segstart[s + 1]) s++;
        if (s == layout->nseg) return -1;
        l->seg = s;
        l->off = nd->k - segstart[s];
    }
    l->dst = b->slot[i] = take_slot(b);
    return 0;
}

/* The instruction of node i, releasing each operand's slot at its last use. */
static void emit_instr(build *b, lf_gprog *p, const lf_graph *g, const lf_gnode *nd, int i)
{
    lf_ginstr *in = &p->ins[p->nops++];
    in->op = nd->op;
    in->k = nd->k;
    int ar = lf_gop_arity(nd->op);
    int32_t *opd[3] = {&in->a, &in->b, &in->c};
    for (int w = 0; w < 3; w++) *opd[w] = w < ar ? b->slot[operand(nd, w)] : 0;
    /* release operands whose last use this is (before taking dst: dst may reuse one, the
     * interpreter reads all operands before it writes) */
    for (int w = 0; w < ar; w++) {
        int o = operand(nd, w);
        int dup = 0;
        for (int u = 0; u < w; u++) dup |= operand(nd, u) == o;
        if (!dup && b->last[o] == i && lf_graph_node(g, o)->op != LF_G_CONST) b->free_slots[b->nfree++] = b->slot[o];
    }
    in->dst = b->slot[i] = take_slot(b);
    if (b->last[i] < 0) b->free_slots[b->nfree++] = in->dst; /* unused result (cannot happen for live nodes) */
}

/* The program's body: constants first (slots 0 .. nconsts-1, never released), then the loads
 * (they run before every instruction), then the instructions in graph order. -1: an input the
 * outputs need is outside the layout. */
static int emit_all(build *b, lf_gprog *p, const lf_graph *g, const lf_glayout *layout, int top)
{
    for (int i = 0; i <= top; i++)
        if (b->live[i] && lf_graph_node(g, i)->op == LF_G_CONST) {
            b->slot[i] = b->nslots++;
            p->consts[p->nconsts++] = lf_graph_value(g, i);
        }
    int segstart[LF_GPROG_MAXSEG + 1];
    segstart[0] = 0;
    for (int s = 0; s < layout->nseg; s++) segstart[s + 1] = segstart[s] + layout->seglen[s];
    for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i <= top; i++) {
        if (!b->live[i]) continue;
        const lf_gnode *nd = lf_graph_node(g, i);
        if (nd->op == LF_G_CONST) continue;
        const int load = nd->op == LF_G_INPUT || nd->op == LF_G_PARAM || b->subk[i];
        if (load != (pass == 0)) continue;
        if (!load) emit_instr(b, p, g, nd, i);
        else if (emit_load(b, p, nd, i, layout, segstart) != 0) return -1;
    }
    return 0;
}

lf_gprog *lf_gprog_new(const lf_graph *g, const lf_glayout *layout, int nout, const int *out, lf_error *err)
{
    build b = {0};
    if (!g || lf_graph_status(g) != LF_OK) {
        if (err && g) *err = *lf_graph_error(g);
        else lf_error_set(err, LF_EINVAL, "lf_gprog_new: no graph");
        return NULL;
    }
    const int n = lf_graph_size(g);
    if (nout < 1 || !out || !layout || layout->nseg < 0 || layout->nseg > LF_GPROG_MAXSEG)
        return fail(NULL, &b, err, LF_EINVAL, "lf_gprog_new: outputs and a layout of 0..8 segments are required");
    int top = -1;
    for (int i = 0; i < nout; i++) {
        if (out[i] < 0 || out[i] >= n) return fail(NULL, &b, err, LF_EINVAL, "lf_gprog_new: an output is not a node");
        if (out[i] > top) top = out[i];
    }
    lf_gprog *p = calloc(1, sizeof *p);
    b.slot = malloc(((size_t)top + 1) * sizeof *b.slot);
    b.last = malloc(((size_t)top + 1) * sizeof *b.last);
    b.live = calloc((size_t)top + 1, 1);
    b.free_slots = malloc(((size_t)top + 1) * sizeof *b.free_slots);
    if (!p || !b.slot || !b.last || !b.live || !b.free_slots)
        return fail(p, &b, err, LF_ENOMEM, "lf_gprog_new: out of memory");
    b.subk = calloc((size_t)top + 1, sizeof *b.subk);
    if (!b.subk) return fail(p, &b, err, LF_ENOMEM, "lf_gprog_new: out of memory");
    if (layout->nsub > 0 && (!layout->sub || layout->subseg < 0 || layout->subseg >= layout->nseg ||
                             layout->seglen[layout->subseg] < layout->nsub))
        return fail(p, &b, err, LF_EINVAL, "lf_gprog_new: substituted nodes need a segment of their size");
    for (int k = 0; k < layout->nsub; k++)
        if (layout->sub[k] >= 0 && layout->sub[k] <= top) b.subk[layout->sub[k]] = k + 1;
    mark_live(&b, g, top, nout, out);
    int nops, nloads, nconsts;
    count_uses(&b, g, top, nout, out, &nops, &nloads, &nconsts);
    p->ins = malloc(((size_t)nops + 1) * sizeof *p->ins);
    p->loads = malloc(((size_t)nloads + 1) * sizeof *p->loads);
    p->consts = malloc(((size_t)nconsts + 1) * sizeof *p->consts);
    p->out = malloc((size_t)nout * sizeof *p->out);
    if (!p->ins || !p->loads || !p->consts || !p->out)
        return fail(p, &b, err, LF_ENOMEM, "lf_gprog_new: out of memory");
    if (emit_all(&b, p, g, layout, top) != 0)
        return fail(p, &b, err, LF_EINVAL, "lf_gprog_new: an input the outputs need is outside the layout");
    for (int i = 0; i < nout; i++) p->out[i] = b.slot[out[i]];
    p->nout = nout;
    p->nslots = b.nslots > 0 ? b.nslots : 1;
    build_free(&b);
    return p;
}

void lf_gprog_eval(const lf_gprog *p, const double *const *in, const double *par, double *y, double *work)
{
    double *restrict v = work;
    memcpy(v, p->consts, (size_t)p->nconsts * sizeof *v);
    for (int i = 0; i < p->nloads; i++) {
        const lf_gload *l = &p->loads[i];
        v[l->dst] = l->seg < 0 ? par[l->off] : in[l->seg][l->off];
    }
    const lf_ginstr *ins = p->ins;
    for (int i = 0, n = p->nops; i < n; i++) {
        const lf_ginstr *c = &ins[i];
        const double a = v[c->a];
        double r;
        /* the common arithmetic inline; everything else through lf_gop_value */
        switch (c->op) {
        case LF_G_ADD: r = a + v[c->b]; break;
        case LF_G_SUB: r = a - v[c->b]; break;
        case LF_G_MUL: r = a * v[c->b]; break;
        case LF_G_DIV: r = a / v[c->b]; break;
        case LF_G_NEG: r = -a; break;
        case LF_G_SQRT: r = sqrt(a); break;
        case LF_G_MULZ: r = a == 0 ? 0.0 : a * v[c->b]; break;
        case LF_G_SELECT: r = a != 0 ? v[c->b] : v[c->c]; break;
        default: r = lf_gop_value(c->op, c->k, a, v[c->b], v[c->c]); break;
        }
        v[c->dst] = r;
    }
    for (int i = 0; i < p->nout; i++) y[i] = v[p->out[i]];
}
