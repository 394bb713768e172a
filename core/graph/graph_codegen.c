/* lieflow — C code generation from programs. The expressions below mirror lf_gop_value
 * (graph_ops_internal.h) operation by operation. */
#include "graph_codegen.h"

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

static void emit_instr(sbuf *b, const lf_gprog *p, const lf_ginstr *c)
{
    char A[48], B[48], C[48];
    const char *a = opnd(p, c->a, A, sizeof A), *x = opnd(p, c->b, B, sizeof B), *y = opnd(p, c->c, C, sizeof C);
    put(b, "    r%d = ", c->dst);
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
    put(b, ";\n");
}

/* The function's body as a static inline function (name with the prefix lf_ replaced by lf_i_),
 * the exported function calling it, and its pair loop (lf_p_...): the body inlined in a loop over
 * pairs (i, j) with segments x + m i, x + m j, r + 3 p, sub + nsub p, accumulating the outputs
 * [u (if with_u)] [k for i] [k for j] into accu and acc (lf_gmodule_eval_pairs). */
static void emit_function(sbuf *b, const lf_gprog *p, const char *name)
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
    if (stumpff) put(&b, "%s", lf_stumpff_source);
    for (int i = 0; i < n; i++) emit_function(&b, progs[i], names[i]);
    if (b.failed) {
        free(b.s);
        lf_error_set(err, LF_ENOMEM, "lf_gcodegen: out of memory");
        return NULL;
    }
    return b.s;
}
