/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — compiled functions: programs, code generation, the code cache, the tape fallback. */
#include "graph/graph_module.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_codegen_internal.h"
#include "graph/graph_prog_internal.h"
#include "native/jit_internal.h"

typedef void (*native_fn)(const double *const *in, const double *par, double *out);
typedef void (*pairs_fn)(int np, const int *pr, int m, const double *x, const double *r, int nsub, const double *sub,
                         const double *par, int with_u, int k, double *acc, double *accu);

struct lf_gmodule {
    int nf;
    lf_gprog **prog;
    native_fn *fn;       /* NULL entries: the tape */
    pairs_fn *pfn;       /* their pair loops */
    lf_jit_lib *lib;
    int backend;
    size_t work;
    int ops, total_ops;
    double compile_s, load_s;
    char *source;
    char report[640];
};

void lf_gmodule_free(lf_gmodule *m)
{
    if (!m) return;
    for (int i = 0; i < m->nf; i++) lf_gprog_free(m->prog[i]);
    free(m->prog);
    free(m->fn);
    free(m->pfn);
    lf_jit_close(m->lib);
    free(m->source);
    free(m);
}

int lf_gmodule_backend(const lf_gmodule *m) { return m->backend; }
const char *lf_gmodule_report(const lf_gmodule *m) { return m->report; }
int lf_gmodule_ops(const lf_gmodule *m) { return m->ops; }
double lf_gmodule_compile_seconds(const lf_gmodule *m) { return m->compile_s; }
double lf_gmodule_load_seconds(const lf_gmodule *m) { return m->load_s; }
size_t lf_gmodule_work_size(const lf_gmodule *m) { return m->work; }

/* the functions' names lf_f<i>, then (native loading) their pair loops lf_p_f<i> */
static void names_of(int nf, char (*buf)[24], const char **names)
{
    for (int i = 0; i < nf; i++) {
        snprintf(buf[i], sizeof buf[i], "lf_f%d", i);
        names[i] = buf[i];
        snprintf(buf[nf + i], sizeof buf[nf + i], "lf_p_f%d", i);
        names[nf + i] = buf[nf + i];
    }
}

static char *make_source(const lf_gmodule *m, lf_error *err)
{
    char(*buf)[24] = malloc(2 * (size_t)m->nf * sizeof *buf);
    const char **names = malloc(2 * (size_t)m->nf * sizeof *names);
    char *src = NULL;
    if (buf && names) {
        names_of(m->nf, buf, names);
        src = lf_gcodegen(m->nf, (const lf_gprog *const *)m->prog, names, err);
    } else
        lf_error_set(err, LF_ENOMEM, "compiled model: out of memory");
    free(buf);
    free(names);
    return src;
}

const char *lf_gmodule_source(lf_gmodule *m)
{
    if (!m->source) m->source = make_source(m, NULL);
    return m->source;
}

/* Try the native backend; on failure the report says why and the tape stays. */
static void go_native(lf_gmodule *m, const lf_jit_opts *jit)
{
    if (m->total_ops > LF_GMODULE_NATIVE_MAX) {
        snprintf(m->report, sizeof m->report, "tape: %d operations, more than the %d compiled natively (compile time)",
                 m->total_ops, LF_GMODULE_NATIVE_MAX);
        return;
    }
    lf_error e = {0};
    m->source = make_source(m, &e);
    char(*buf)[24] = malloc(2 * (size_t)m->nf * sizeof *buf);
    const char **names = malloc(2 * (size_t)m->nf * sizeof *names);
    void **fns = calloc(2 * (size_t)m->nf, sizeof *fns);
    lf_jit_info info;
    memset(&info, 0, sizeof info);
    int rc = m->source && buf && names && fns ? LF_OK : LF_ENOMEM;
    if (rc == LF_OK) {
        names_of(m->nf, buf, names);
        rc = lf_jit_load(m->source, 2 * m->nf, names, fns, jit, &m->lib, &info, &e);
    } else if (!e.msg[0])
        lf_error_set(&e, LF_ENOMEM, "out of memory");
    if (rc == LF_OK) {
        for (int i = 0; i < m->nf; i++) {
            m->fn[i] = (native_fn)fns[i];
            m->pfn[i] = (pairs_fn)fns[m->nf + i];
        }
        m->backend = LF_BACKEND_NATIVE;
        m->compile_s = info.compile_seconds;
        m->load_s = info.load_seconds;
        if (info.cached)
            snprintf(m->report, sizeof m->report, "native (cached, %d operations)", m->ops);
        else
            snprintf(m->report, sizeof m->report, "native (compiled in %.2f s, %d operations)", info.compile_seconds, m->ops);
    } else {
        snprintf(m->report, sizeof m->report, "tape: %s", e.msg);
        for (char *c = m->report; *c; c++) /* one line (a compiler's output has several) */
            if (*c == '\n') *c = c[1] ? ' ' : '\0';
    }
    free(buf);
    free(names);
    free(fns);
}

lf_gmodule *lf_gmodule_new(const lf_graph *g, const lf_glayout *layout, int nf, const lf_gfunc_spec *f, int backend,
                           const lf_jit_opts *jit, lf_error *err)
{
    if (nf < 1 || !f || backend < LF_BACKEND_AUTO || backend > LF_BACKEND_TAPE) {
        lf_error_set(err, LF_EINVAL, "lf_gmodule_new: functions and a backend (auto, native, tape) are required");
        return NULL;
    }
    lf_gmodule *m = calloc(1, sizeof *m);
    if (!m || !(m->prog = calloc((size_t)nf, sizeof *m->prog)) || !(m->fn = calloc((size_t)nf, sizeof *m->fn)) ||
        !(m->pfn = calloc((size_t)nf, sizeof *m->pfn))) {
        lf_gmodule_free(m);
        lf_error_set(err, LF_ENOMEM, "lf_gmodule_new: out of memory");
        return NULL;
    }
    m->nf = nf;
    for (int i = 0; i < nf; i++) {
        m->prog[i] = lf_gprog_new(g, layout, f[i].nout, f[i].out, err);
        if (!m->prog[i]) {
            lf_gmodule_free(m);
            return NULL;
        }
        int ops = lf_gprog_nops(m->prog[i]);
        if (ops > m->ops) m->ops = ops;
        m->total_ops += ops;
        size_t w = (size_t)lf_gprog_nslots(m->prog[i]);
        if (w > m->work) m->work = w;
    }
    m->backend = LF_BACKEND_TAPE;
    snprintf(m->report, sizeof m->report, "tape (%d operations)", m->ops);
    if (backend != LF_BACKEND_TAPE) go_native(m, jit);
    if (backend == LF_BACKEND_NATIVE && m->backend != LF_BACKEND_NATIVE) { /* asked for, impossible: say why */
        lf_error_set(err, LF_EINVAL, "no native code: %s", m->report + (strncmp(m->report, "tape: ", 6) ? 0 : 6));
        lf_gmodule_free(m);
        return NULL;
    }
    return m;
}

/* The calling thread's work buffer for tape evaluations without one (grown, never shrunk). */
static _Thread_local double *tls_work;
static _Thread_local size_t tls_size;

void lf_gmodule_eval(const lf_gmodule *m, int f, const double *const *in, const double *par, double *out,
                     double *work)
{
    if (m->fn[f]) {
        m->fn[f](in, par, out);
        return;
    }
    if (!work) {
        if (tls_size < m->work) {
            double *w = realloc(tls_work, m->work * sizeof *w);
            if (!w) { /* no memory for the interpreter: every output is NaN, which callers report */
                for (int i = 0; i < lf_gprog_nout(m->prog[f]); i++) out[i] = NAN;
                return;
            }
            tls_work = w;
            tls_size = m->work;
        }
        work = tls_work;
    }
    lf_gprog_eval(m->prog[f], in, par, out, work);
}

void lf_gmodule_eval_pairs(const lf_gmodule *m, int f, int np, const int *pairs, int mstate, const double *x,
                           const double *r, int nsub, const double *sub, const double *par, int with_u, int k,
                           double *acc, double *accu)
{
    if (m->pfn[f]) {
        m->pfn[f](np, pairs, mstate, x, r, nsub, sub, par, with_u, k, acc, accu);
        return;
    }
    double out[lf_gprog_nout(m->prog[f])]; /* [u] + k + k outputs: sized by the program, any k */
    for (int p = 0; p < np; p++) {
        const int i = pairs[2 * p], j = pairs[2 * p + 1];
        const double *in[4] = {x + mstate * i, x + mstate * j, r + 3 * p, sub + (size_t)nsub * p};
        lf_gmodule_eval(m, f, in, par, out, NULL);
        int o = 0;
        if (with_u) accu[0] += out[o++];
        for (int c = 0; c < k; c++) acc[k * i + c] += out[o + c];
        for (int c = 0; c < k; c++) acc[k * j + c] += out[o + k + c];
    }
}
