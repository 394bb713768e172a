/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — C code generation from programs. The expressions below mirror lf_gop_value
 * (graph_ops_internal.h) operation by operation. */
#include "graph/graph_codegen_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text of core/graph/stumpff.h, embedded by the Makefile (build/gen/stumpff_source.c). */
extern const char lf_stumpff_source[];

typedef struct {
    char *s;
    size_t n, cap;
    int failed;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->failed = 1;
            return;
        }
        if (b->s && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? 2 * b->cap : 4096;
        while (cap < b->n + (size_t)k + 1) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

/* An exact C literal for v. */
static void literal(char *buf, size_t size, double v)
{
    if (isnan(v)) snprintf(buf, size, "NAN");
    else if (isinf(v)) snprintf(buf, size, v > 0 ? "HUGE_VAL" : "(-HUGE_VAL)");
    else snprintf(buf, size, "(%a)", v);
}

static int valid_name(const char *s)
{
    if (!s || strncmp(s, "lf_", 3) != 0 || strlen(s) > 64) return 0;
    for (const char *c = s + 3; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) return 0;
    return 1;
}

/* The operand text of slot i: a constant's literal (constants fill slots 0..nconsts-1) or r<i>. */
static const char *opnd(const lf_gprog *p, int i, char *buf, size_t size)
{
    if (i < lf_gprog_nconsts(p)) literal(buf, size, lf_gprog_consts(p)[i]);
    else snprintf(buf, size, "r%d", i);
    return buf;
}

/* The expression of instruction c with operand texts a, x, y. */
static void emit_expr(sbuf *b, const lf_ginstr *c, const char *a, const char *x, const char *y)
{
    switch (c->op) {
    case LF_G_NEG: put(b, "-%s", a); break;
    case LF_G_ADD: put(b, "%s + %s", a, x); break;
    case LF_G_SUB: put(b, "%s - %s", a, x); break;
    case LF_G_MUL: put(b, "%s * %s", a, x); break;
    case LF_G_DIV: put(b, "%s / %s", a, x); break;
    case LF_G_SQRT: put(b, "sqrt(%s)", a); break;
    case LF_G_EXP: put(b, "exp(%s)", a); break;
    case LF_G_LOG: put(b, "log(%s)", a); break;
    case LF_G_SIN: put(b, "sin(%s)", a); break;
    case LF_G_COS: put(b, "cos(%s)", a); break;
    case LF_G_TAN: put(b, "tan(%s)", a); break;
    case LF_G_ASIN: put(b, "asin(%s)", a); break;
    case LF_G_ACOS: put(b, "acos(%s)", a); break;
    case LF_G_ATAN: put(b, "atan(%s)", a); break;
    case LF_G_ATAN2: put(b, "atan2(%s, %s)", a, x); break;
    case LF_G_POW: put(b, "pow(%s, %s)", a, x); break;
    case LF_G_ABS: put(b, "fabs(%s)", a); break;
    case LF_G_SIGN: put(b, "(double)((%s > 0) - (%s < 0))", a, a); break;
    case LF_G_LT: put(b, "%s < %s ? 1.0 : 0.0", a, x); break;
    case LF_G_LE: put(b, "%s <= %s ? 1.0 : 0.0", a, x); break;
    case LF_G_EQ: put(b, "%s == %s ? 1.0 : 0.0", a, x); break;
    case LF_G_NE: put(b, "%s != %s ? 1.0 : 0.0", a, x); break;
    case LF_G_AND: put(b, "%s != 0 && %s != 0 ? 1.0 : 0.0", a, x); break;
    case LF_G_OR: put(b, "%s != 0 || %s != 0 ? 1.0 : 0.0", a, x); break;
    case LF_G_NOT: put(b, "%s == 0 ? 1.0 : 0.0", a); break;
    case LF_G_SELECT: put(b, "%s != 0 ? %s : %s", a, x, y); break;
    case LF_G_STUMPFF:
        if (c->k <= 4) put(b, "lf_stumpff%d(%s)", c->k, a);
        else put(b, "lf_stumpff(%d, %s)", c->k, a);
        break;
    case LF_G_MULZ: put(b, "%s == 0 ? 0.0 : %s * %s", a, a, x); break;
    default: put(b, "NAN"); break;
    }
}

static void emit_instr(sbuf *b, const lf_gprog *p, const lf_ginstr *c)
{
    char A[48], B[48], C[48];
    put(b, "    r%d = ", c->dst);
    emit_expr(b, c, opnd(p, c->a, A, sizeof A), opnd(p, c->b, B, sizeof B), opnd(p, c->c, C, sizeof C));
    put(b, ";\n");
}

/* ---------------------------------------------------------------- large functions in chunks
 * A C compiler's time grows faster than linearly in the size of one function (register allocation
 * and instruction combination over one huge basic block: 1.3 s for 2,700 operations, over 30 s for
 * 27,000 with gcc -O2). A program of more than CHUNK_MIN operations is therefore emitted as chunks
 * of CHUNK operations, each a function of its own: a value used only in its chunk is a local, a
 * value used in a later chunk goes through an array w (entries reused once a value is dead), inputs
 * and parameters are read where they are used. The operations and their order are unchanged. Chunks
 * are compiled at -O1 by gcc (its -O2 takes 1.7 times as long on them and ran them no faster:
 * 22,687 operations of the n = 100 dipole torques, 8.9 s and 5.3 s, 1.9 and 1.9 us). */
#define CHUNK_MIN 1500
#define CHUNK 400

typedef struct {
    int8_t kind;  /* 0: a constant, 1: a load, 2: an instruction */
    int32_t idx;  /* load or instruction index (constants: the slot) */
} entity;

typedef struct {
    const lf_gprog *p;
    entity *cur;   /* what each slot holds at this point of the program */
    int *last;     /* instruction i: the last chunk that reads it */
    int *widx;     /* instruction i: its entry of w, or -1 (a local of its chunk) */
} chunker;

static void operand_text(const chunker *k, entity e, int chunk, char *buf, size_t size)
{
    const lf_gprog *p = k->p;
    if (e.kind == 0) literal(buf, size, lf_gprog_consts(p)[e.idx]);
    else if (e.kind == 1) {
        const lf_gload *l = &lf_gprog_loads(p)[e.idx];
        if (l->seg < 0) snprintf(buf, size, "par[%d]", l->off);
        else snprintf(buf, size, "in[%d][%d]", l->seg, l->off);
    } else if (e.idx / CHUNK == chunk) snprintf(buf, size, "t%d", e.idx);
    else snprintf(buf, size, "w[%d]", k->widx[e.idx]);
}

static int operand_slot(const lf_ginstr *c, int w) { return w == 0 ? c->a : w == 1 ? c->b : c->c; }

static entity slot_entity(const chunker *k, int slot)
{
    if (slot < lf_gprog_nconsts(k->p)) return (entity){0, slot};
    return k->cur[slot];
}

/* The program's loads, as entities of their slots. */
static void load_entities(chunker *k)
{
    const lf_gload *l = lf_gprog_loads(k->p);
    for (int i = 0; i < lf_gprog_nloads(k->p); i++) k->cur[l[i].dst] = (entity){1, i};
}

/* last[] and widx[] (w entries reused after their values' last chunk); the size of w. */
static int plan_chunks(chunker *k, int nchunks)
{
    const lf_gprog *p = k->p;
    const lf_ginstr *ins = lf_gprog_instrs(p);
    const int n = lf_gprog_nops(p);
    load_entities(k);
    for (int i = 0; i < n; i++) {
        k->last[i] = i / CHUNK;
        for (int w = 0; w < lf_gop_arity(ins[i].op); w++) {
            entity e = slot_entity(k, operand_slot(&ins[i], w));
            if (e.kind == 2 && k->last[e.idx] < i / CHUNK) k->last[e.idx] = i / CHUNK;
        }
        k->cur[ins[i].dst] = (entity){2, i};
    }
    for (int o = 0; o < lf_gprog_nout(p); o++) { /* outputs are written by the last chunk */
        entity e = slot_entity(k, lf_gprog_out_slots(p)[o]);
        if (e.kind == 2) k->last[e.idx] = nchunks - 1;
    }
    /* w entries: taken by a value that outlives its chunk, free after its last chunk */
    int nw = 0, nfree = 0, nlive = 0;
    int *free_w = malloc(((size_t)n + 1) * sizeof *free_w), *live = malloc(((size_t)n + 1) * sizeof *live);
    if (!free_w || !live) {
        free(free_w);
        free(live);
        return -1;
    }
    for (int c = 0; c < nchunks; c++) {
        for (int j = 0; j < nlive;) /* values dead before chunk c give back their entries */
            if (k->last[live[j]] < c) {
                free_w[nfree++] = k->widx[live[j]];
                live[j] = live[--nlive];
            } else
                j++;
        for (int i = c * CHUNK; i < n && i < (c + 1) * CHUNK; i++) {
            k->widx[i] = -1;
            if (k->last[i] > c) {
                k->widx[i] = nfree ? free_w[--nfree] : nw++;
                live[nlive++] = i;
            }
        }
    }
    free(free_w);
    free(live);
    return nw;
}

static int emit_chunked(sbuf *b, const lf_gprog *p, const char *name)
{
    const int n = lf_gprog_nops(p), nchunks = (n + CHUNK - 1) / CHUNK;
    chunker k = {p, malloc((size_t)lf_gprog_nslots(p) * sizeof *k.cur), malloc((size_t)n * sizeof *k.last),
                 malloc((size_t)n * sizeof *k.widx)};
    int nw = k.cur && k.last && k.widx ? plan_chunks(&k, nchunks) : -1;
    if (nw < 0) {
        free(k.cur);
        free(k.last);
        free(k.widx);
        return -1;
    }
    const lf_ginstr *ins = lf_gprog_instrs(p);
    load_entities(&k);
    for (int c = 0; c < nchunks; c++) {
        put(b, "\nLF_CHUNK static void lf_c_%s_%d(const double *const *restrict in, "
               "const double *restrict par, double *restrict w, double *restrict out)\n{\n", name + 3, c);
        put(b, "    (void)in; (void)par; (void)w; (void)out;\n");
        for (int i = c * CHUNK; i < n && i < (c + 1) * CHUNK; i++) {
            char T[3][48];
            for (int o = 0; o < 3; o++) {
                T[o][0] = '0', T[o][1] = '\0';
                if (o < lf_gop_arity(ins[i].op)) operand_text(&k, slot_entity(&k, operand_slot(&ins[i], o)), c, T[o], sizeof T[o]);
            }
            put(b, "    const double t%d = ", i);
            emit_expr(b, &ins[i], T[0], T[1], T[2]);
            put(b, ";\n");
            if (k.widx[i] >= 0) put(b, "    w[%d] = t%d;\n", k.widx[i], i);
            k.cur[ins[i].dst] = (entity){2, i};
        }
        if (c == nchunks - 1)
            for (int o = 0; o < lf_gprog_nout(p); o++) {
                char A[48];
                operand_text(&k, slot_entity(&k, lf_gprog_out_slots(p)[o]), c, A, sizeof A);
                put(b, "    out[%d] = %s;\n", o, A);
            }
        put(b, "}\n");
    }
    put(b, "\nstatic void lf_i_%s(const double *const *in, const double *par, double *out)\n{\n", name + 3);
    put(b, "    static _Thread_local double w[%d];\n", nw > 0 ? nw : 1);
    for (int c = 0; c < nchunks; c++) put(b, "    lf_c_%s_%d(in, par, w, out);\n", name + 3, c);
    put(b, "}\n");
    free(k.cur);
    free(k.last);
    free(k.widx);
    return 0;
}

/* The body of the function of a small program: slots as locals, in the program's order. */
static void emit_body(sbuf *b, const lf_gprog *p, const char *name)
{
    put(b, "\nstatic inline void lf_i_%s(const double *const *in, const double *par, double *out)\n{\n", name + 3);
    put(b, "    (void)in; (void)par;\n");
    const int nc = lf_gprog_nconsts(p), ns = lf_gprog_nslots(p);
    if (ns > nc) {
        put(b, "    double");
        for (int i = nc; i < ns; i++) put(b, "%s r%d", i > nc ? "," : "", i);
        put(b, ";\n");
    }
    const lf_gload *l = lf_gprog_loads(p);
    for (int i = 0; i < lf_gprog_nloads(p); i++) {
        if (l[i].seg < 0) put(b, "    r%d = par[%d];\n", l[i].dst, l[i].off);
        else put(b, "    r%d = in[%d][%d];\n", l[i].dst, l[i].seg, l[i].off);
    }
    const lf_ginstr *ins = lf_gprog_instrs(p);
    for (int i = 0; i < lf_gprog_nops(p); i++) emit_instr(b, p, &ins[i]);
    const int32_t *o = lf_gprog_out_slots(p);
    for (int i = 0; i < lf_gprog_nout(p); i++) {
        char A[48];
        put(b, "    out[%d] = %s;\n", i, opnd(p, o[i], A, sizeof A));
    }
    put(b, "}\n");
}

/* The function's body (lf_i_<name without lf_>: emit_body, or emit_chunked for a large program),
 * the exported function calling it, and its pair loop (lf_p_...): the body in a loop over pairs
 * (i, j) with segments x + m i, x + m j, r + 3 p, sub + nsub p, accumulating the outputs
 * [u (if with_u)] [k for i] [k for j] into accu and acc (lf_gmodule_eval_pairs). */
static int emit_function(sbuf *b, const lf_gprog *p, const char *name)
{
    if (lf_gprog_nops(p) <= CHUNK_MIN) emit_body(b, p, name);
    else if (emit_chunked(b, p, name) != 0) return -1;
    put(b, "void %s(const double *const *in, const double *par, double *out) { lf_i_%s(in, par, out); }\n", name,
        name + 3);
    put(b, "void lf_p_%s(int np, const int *pr, int m, const double *x, const double *r, int nsub, const double *sub,\n"
           "    const double *par, int with_u, int k, double *acc, double *accu)\n{\n", name + 3);
    put(b, "    double out[%d];\n", lf_gprog_nout(p) > 0 ? lf_gprog_nout(p) : 1);
    put(b, "    for (int p = 0; p < np; p++) {\n"
           "        const int i = pr[2 * p], j = pr[2 * p + 1];\n"
           "        const double *in[4] = {x + m * i, x + m * j, r + 3 * p, sub + nsub * p};\n"
           "        lf_i_%s(in, par, out);\n"
           "        int o = 0;\n"
           "        if (with_u) accu[0] += out[o++];\n"
           "        for (int c = 0; c < k; c++) acc[k * i + c] += out[o + c];\n"
           "        for (int c = 0; c < k; c++) acc[k * j + c] += out[o + k + c];\n"
           "    }\n}\n", name + 3);
    return 0;
}

static int uses_stumpff(const lf_gprog *p)
{
    const lf_ginstr *ins = lf_gprog_instrs(p);
    for (int i = 0; i < lf_gprog_nops(p); i++)
        if (ins[i].op == LF_G_STUMPFF) return 1;
    return 0;
}

char *lf_gcodegen(int n, const lf_gprog *const *progs, const char *const *names, lf_error *err)
{
    if (n < 1 || !progs || !names) {
        lf_error_set(err, LF_EINVAL, "lf_gcodegen: no program");
        return NULL;
    }
    int stumpff = 0;
    for (int i = 0; i < n; i++) {
        if (!progs[i] || !valid_name(names[i])) {
            lf_error_set(err, LF_EINVAL, "lf_gcodegen: program %d has no program or an invalid name", i);
            return NULL;
        }
        stumpff |= uses_stumpff(progs[i]);
    }
    sbuf b = {0};
    put(&b, "/* Generated by lieflow from expression graphs (core/graph/graph_codegen.c): do not edit. */\n");
    put(&b, "#include <math.h>\n");
    put(&b, "#if defined(__GNUC__) && !defined(__clang__)\n#define LF_CHUNK __attribute__((noinline, optimize(\"O1\")))\n"
             "#else\n#define LF_CHUNK __attribute__((noinline))\n#endif\n");
    if (stumpff) put(&b, "%s", lf_stumpff_source);
    for (int i = 0; i < n; i++)
        if (emit_function(&b, progs[i], names[i]) != 0) b.failed = 1;
    if (b.failed) {
        free(b.s);
        lf_error_set(err, LF_ENOMEM, "lf_gcodegen: out of memory");
        return NULL;
    }
    return b.s;
}
