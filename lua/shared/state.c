/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — states: the values of a system's fields in Lua (mat3, vec3, quaternion
 * tables, arrays) and the C state vector of its manifold. Reading Lua input converts everything
 * before any C state is touched by the caller (the caller passes a scratch copy). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shared/bind.h"

/* buf = a b c d (truncated to n - 1 characters): the names of what is read, made for every field
 * of every state read, so without printf (it cost ~15% of system:energy(state)). */
static const char *join4(char *buf, size_t n, const char *a, const char *b, const char *c, const char *d)
{
    const char *parts[4] = {a, b, c, d};
    size_t k = 0;
    for (int i = 0; i < 4 && parts[i]; i++)
        for (const char *q = parts[i]; *q && k + 1 < n; q++) buf[k++] = *q;
    buf[k] = 0;
    return buf;
}

/* buf = what[i] (i >= 0) */
static const char *indexed(char *buf, size_t n, const char *what, int i)
{
    char num[16], *q = num + sizeof num;
    *--q = 0;
    *--q = ']';
    do *--q = (char)('0' + i % 10); while ((i /= 10) > 0);
    *--q = '[';
    return join4(buf, n, what, q, NULL, NULL);
}

/* n numbers from the plain table (or vec3 when n == 3) at idx */
static void read_numbers(lua_State *L, int idx, int n, double *p, const char *what, const char *shape)
{
    idx = lua_absindex(L, idx);
    if (n == 3 && lfb_testvec3(L, idx)) {
        lfb_tovec3(L, idx, p, what);
        return;
    }
    if (lua_type(L, idx) != LUA_TTABLE)
        luaL_error(L, "%s: %s expected, got %s", what, shape, lfb_typename(L, idx));
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    if (len != n) luaL_error(L, "%s: %s expected, got a table of length %d", what, shape, (int)len);
    for (int k = 0; k < n; k++) {
        int ok;
        lua_rawgeti(L, idx, k + 1);
        p[k] = lua_tonumberx(L, -1, &ok);
        if (!ok) luaL_error(L, "%s: %s expected, element %d is %s", what, shape, k + 1, lfb_typename(L, -1));
        if (!isfinite(p[k])) luaL_error(L, "%s: element %d is not finite (%f)", what, k + 1, p[k]);
        lua_pop(L, 1);
    }
}

typedef void (*part_reader)(lua_State *, int, double *, const char *);

/* A pair value: {k1 = ..., k2 = ...} or {..., ...}; part 1 (n1 doubles at p) read by rd1, part 2
 * (after it) by rd2 (vec3 or mat3 readers). */
static void read_pair(lua_State *L, int idx, const char *k1, part_reader rd1, int n1, const char *k2, part_reader rd2,
                      double *p, const char *what)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TTABLE)
        luaL_error(L, "%s: {%s = ..., %s = ...} expected, got %s", what, k1, k2, lfb_typename(L, idx));
    const char *keys[2] = {k1, k2};
    const part_reader rd[2] = {rd1, rd2};
    for (int i = 0; i < 2; i++) {
        char w[200];
        join4(w, sizeof w, what, ".", keys[i], NULL);
        if (lua_getfield(L, idx, keys[i]) == LUA_TNIL) {
            lua_pop(L, 1);
            if (lua_rawgeti(L, idx, i + 1) == LUA_TNIL)
                luaL_error(L, "%s: {%s = ..., %s = ...} expected, field '%s' is missing", what, k1, k2, keys[i]);
        }
        rd[i](L, lua_gettop(L), p + i * n1, w);
        lua_pop(L, 1);
    }
}

/* ---------------------------------------------------------------- factors as Lua values */
/* One record per factor kind (manifold.h), indexed by the kind: how a point of the factor is shown
 * in Lua and read back (so3 values and the R of se3 checked as rotations within tol here, the other
 * factors with the whole state by the caller). */

static void push_numbers(lua_State *L, int n, const double *p)
{
    lua_createtable(L, n, 0);
    for (int k = 0; k < n; k++) {
        lua_pushnumber(L, p[k]);
        lua_rawseti(L, -2, k + 1);
    }
}

static void push_mat3(lua_State *L, const lf_factor *f, const double *p, int rm_as_vec3)
{
    (void)f, (void)rm_as_vec3;
    lfb_pushmat3(L, p);
}

static void push_vec3(lua_State *L, const lf_factor *f, const double *p, int rm_as_vec3)
{
    (void)f, (void)rm_as_vec3;
    lfb_pushvec3(L, p);
}

static void push_quat(lua_State *L, const lf_factor *f, const double *p, int rm_as_vec3)
{
    (void)f, (void)rm_as_vec3;
    push_numbers(L, 4, p);
}

static void push_rm(lua_State *L, const lf_factor *f, const double *p, int rm_as_vec3)
{
    if (rm_as_vec3 && f->nd == 3) lfb_pushvec3(L, p);
    else push_numbers(L, f->nd, p);
}

/* {k1 = part 1, k2 = part 2} */
static void push_pair(lua_State *L, const char *k1, const char *k2, double *(*push)(lua_State *, const double *),
                      const double *p, int n)
{
    lua_createtable(L, 0, 2);
    push(L, p);
    lua_setfield(L, -2, k1);
    push(L, p + n);
    lua_setfield(L, -2, k2);
}

static void push_ts2(lua_State *L, const lf_factor *f, const double *p, int rm_as_vec3)
{
    (void)f, (void)rm_as_vec3;
    push_pair(L, "q", "omega", lfb_pushvec3, p, 3);
}

static void push_tgl3(lua_State *L, const lf_factor *f, const double *p, int rm_as_vec3)
{
    (void)f, (void)rm_as_vec3;
    push_pair(L, "F", "P", lfb_pushmat3, p, 9);
}

static void push_se3(lua_State *L, const lf_factor *f, const double *p, int rm_as_vec3)
{
    (void)f, (void)rm_as_vec3;
    lua_createtable(L, 0, 2);
    lfb_pushmat3(L, p);
    lua_setfield(L, -2, "R");
    lfb_pushvec3(L, p + 9);
    lua_setfield(L, -2, "p");
}

static void read_so3(lua_State *L, int idx, const lf_factor *f, double *p, const char *what, double tol)
{
    (void)f;
    lf_error e;
    lfb_tomat3(L, idx, p, what);
    if (lf_so3_check(p, tol, what, &e) != LF_OK) lfb_error(L, &e);
}

static void read_mat3(lua_State *L, int idx, const lf_factor *f, double *p, const char *what, double tol)
{
    (void)f, (void)tol;
    lfb_tomat3(L, idx, p, what);
}

static void read_vec3(lua_State *L, int idx, const lf_factor *f, double *p, const char *what, double tol)
{
    (void)f, (void)tol;
    lfb_tovec3(L, idx, p, what);
}

static void read_quat(lua_State *L, int idx, const lf_factor *f, double *p, const char *what, double tol)
{
    (void)f, (void)tol;
    read_numbers(L, idx, 4, p, what, "quaternion {w, x, y, z}");
}

static void read_rm(lua_State *L, int idx, const lf_factor *f, double *p, const char *what, double tol)
{
    (void)tol;
    char shape[48];
    snprintf(shape, sizeof shape, "array of %d numbers", f->nd);
    read_numbers(L, idx, f->nd, p, what, shape);
}

static void read_ts2(lua_State *L, int idx, const lf_factor *f, double *p, const char *what, double tol)
{
    (void)f, (void)tol;
    read_pair(L, idx, "q", lfb_tovec3, 3, "omega", lfb_tovec3, p, what);
}

static void read_tgl3(lua_State *L, int idx, const lf_factor *f, double *p, const char *what, double tol)
{
    (void)f, (void)tol;
    read_pair(L, idx, "F", lfb_tomat3, 9, "P", lfb_tomat3, p, what);
}

/* {R = mat3, p = vec3} (or {R, p}), or the 12 numbers of the point; R checked as a rotation within tol */
static void read_se3(lua_State *L, int idx, const lf_factor *f, double *p, const char *what, double tol)
{
    (void)f;
    lf_error e;
    idx = lua_absindex(L, idx);
    int numbers = lua_type(L, idx) == LUA_TTABLE && lua_rawgeti(L, idx, 1) == LUA_TNUMBER; /* 12 numbers */
    if (lua_type(L, idx) == LUA_TTABLE) lua_pop(L, 1);
    if (numbers) read_numbers(L, idx, 12, p, what, "{R = mat3, p = vec3} or 12 numbers");
    else read_pair(L, idx, "R", lfb_tomat3, 9, "p", lfb_tovec3, p, what);
    if (lf_se3_check(p, tol, what, &e) != LF_OK) lfb_error(L, &e);
}

static const struct factor_io {
    void (*push)(lua_State *L, const lf_factor *f, const double *p, int rm_as_vec3);
    void (*read)(lua_State *L, int idx, const lf_factor *f, double *p, const char *what, double tol);
} factor_io[] = {
    [LF_SO3] = {push_mat3, read_so3},   /* a rotation (mat3) */
    [LF_S2] = {push_vec3, read_vec3},   /* a unit vec3 */
    [LF_S3] = {push_quat, read_quat},   /* {w, x, y, z} */
    [LF_GL3] = {push_mat3, read_mat3},  /* a mat3 */
    [LF_RM] = {push_rm, read_rm},       /* m numbers (a vec3 for r3 when the field says so) */
    [LF_TS2] = {push_ts2, read_ts2},    /* {q = vec3, omega = vec3} */
    [LF_TGL3] = {push_tgl3, read_tgl3}, /* {F = mat3, P = mat3} */
    [LF_SE3] = {push_se3, read_se3},    /* {R = mat3, p = vec3} (or 12 numbers) */
};

void lfb_push_factor(lua_State *L, const lf_factor *f, const double *p, int rm_as_vec3)
{
    factor_io[f->kind].push(L, f, p, rm_as_vec3);
}

void lfb_read_factor(lua_State *L, int idx, const lf_factor *f, double *p, const char *what)
{
    lfb_read_factor_tol(L, idx, f, p, what, 1e-9);
}

/* so3 values and the R of se3 are checked with tolerance tol (the other factors with the whole state) */
void lfb_read_factor_tol(lua_State *L, int idx, const lf_factor *f, double *p, const char *what, double tol)
{
    factor_io[f->kind].read(L, idx, f, p, what, tol);
}

void lfb_push_field(lua_State *L, const lf_system *sys, const lf_field *field, const double *y)
{
    const lf_manifold *M = lf_system_manifold(sys);
    if (field->count == 1 && field->scalar_if_one) {
        const lf_factor *f = lf_manifold_factor(M, field->first);
        lfb_push_factor(L, f, y + f->op, field->rm_as_vec3);
        return;
    }
    luaL_checkstack(L, 4, "push_field");
    lua_createtable(L, field->count, 0);
    for (int i = 0; i < field->count; i++) {
        const lf_factor *f = lf_manifold_factor(M, field->first + i);
        lfb_push_factor(L, f, y + f->op, field->rm_as_vec3);
        lua_rawseti(L, -2, i + 1);
    }
}

void lfb_read_field(lua_State *L, int idx, const lf_system *sys, const lf_field *field, double *y, const char *what)
{
    lfb_read_field_tol(L, idx, sys, field, y, what, 1e-9);
}

void lfb_read_field_tol(lua_State *L, int idx, const lf_system *sys, const lf_field *field, double *y,
                        const char *what, double tol)
{
    const lf_manifold *M = lf_system_manifold(sys);
    idx = lua_absindex(L, idx);
    if (field->count == 1 && field->scalar_if_one) {
        const lf_factor *f = lf_manifold_factor(M, field->first);
        lfb_read_factor_tol(L, idx, f, y + f->op, what, tol);
        return;
    }
    if (lua_type(L, idx) != LUA_TTABLE || (lua_Integer)lua_rawlen(L, idx) != field->count)
        luaL_error(L, "%s: array of %d values expected, got %s%s", what, field->count, lfb_typename(L, idx),
                   lua_type(L, idx) == LUA_TTABLE ? " of another length" : "");
    for (int i = 0; i < field->count; i++) {
        const lf_factor *f = lf_manifold_factor(M, field->first + i);
        char w[160];
        indexed(w, sizeof w, what, i + 1);
        lua_rawgeti(L, idx, i + 1);
        lfb_read_factor_tol(L, -1, f, y + f->op, w, tol);
        lua_pop(L, 1);
    }
}

void lfb_push_state(lua_State *L, const lf_system *sys, double t, const double *y)
{
    lua_createtable(L, 0, 1 + lf_system_nfields(sys));
    lua_pushnumber(L, t);
    lua_setfield(L, -2, "t");
    for (int i = 0; i < lf_system_nfields(sys); i++) {
        const lf_field *f = lf_system_field(sys, i);
        lfb_push_field(L, sys, f, y);
        lua_setfield(L, -2, f->name);
    }
}

static int listed(const char *k, const char *const *list)
{
    for (int i = 0; list && list[i]; i++)
        if (strcmp(k, list[i]) == 0) return 1;
    return 0;
}

void lfb_read_state(lua_State *L, int idx, const lf_system *sys, double *y, double *t, const char *const *extra,
                    const char *what)
{
    lfb_read_state_tol(L, idx, sys, y, t, extra, what, 1e-9);
}

void lfb_read_state_tol(lua_State *L, int idx, const lf_system *sys, double *y, double *t, const char *const *extra,
                    const char *what, double tol)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TTABLE) {
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (int i = 0; i < lf_system_nfields(sys); i++) {
            luaL_addstring(&b, i ? ", " : "");
            luaL_addstring(&b, lf_system_field(sys, i)->name);
            luaL_addstring(&b, "=");
        }
        luaL_pushresult(&b);
        luaL_error(L, "%s: state {%s} expected, got %s", what, lua_tostring(L, -1), lfb_typename(L, idx));
    }
    /* unknown keys first: a misspelled field must not be silently ignored */
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!k || !(strcmp(k, "t") == 0 || lf_system_find_field(sys, k) || listed(k, extra))) {
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            luaL_addstring(&b, "t");
            for (int i = 0; i < lf_system_nfields(sys); i++) {
                luaL_addstring(&b, ", ");
                luaL_addstring(&b, lf_system_field(sys, i)->name);
            }
            for (int i = 0; extra && extra[i]; i++) {
                luaL_addstring(&b, ", ");
                luaL_addstring(&b, extra[i]);
            }
            luaL_pushresult(&b);
            luaL_error(L, "%s: unknown field %s%s%s (fields: %s)", what, k ? "'" : "(a ", k ? k : lfb_typename(L, -2),
                       k ? "'" : " key)", lua_tostring(L, -1));
        }
    }
    if (t && lua_getfield(L, idx, "t") != LUA_TNIL) {
        char w[96];
        join4(w, sizeof w, what, ": field 't'", NULL, NULL);
        *t = lfb_checkfinite(L, -1, w);
    }
    if (t) lua_pop(L, 1);
    for (int i = 0; i < lf_system_nfields(sys); i++) {
        const lf_field *f = lf_system_field(sys, i);
        if (lua_getfield(L, idx, f->name) != LUA_TNIL) {
            char w[96];
            join4(w, sizeof w, what, ": field '", f->name, "'");
            lfb_read_field_tol(L, -1, sys, f, y, w, tol);
        }
        lua_pop(L, 1);
    }
}

void lfb_push_algebra(lua_State *L, const lf_manifold *M, const double *xi)
{
    const int n = lf_manifold_nfactors(M);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        const lf_factor *f = lf_manifold_factor(M, i);
        const double *x = xi + f->od;
        if (f->kind == LF_TS2 || f->kind == LF_TGL3 || f->kind == LF_SE3) { /* {a, b} / {A, B} / {w, v} */
            lua_createtable(L, 2, 0);
            for (int k = 0; k < 2; k++) {
                if (f->kind != LF_TGL3) lfb_pushvec3(L, x + 3 * k);
                else lfb_pushmat3(L, x + 9 * k);
                lua_rawseti(L, -2, k + 1);
            }
        } else if (f->kind == LF_GL3) lfb_pushmat3(L, x);
        else if (f->kind == LF_RM) lfb_push_factor(L, f, x, 0);
        else lfb_pushvec3(L, x);
        lua_rawseti(L, -2, i + 1);
    }
}

/* n numbers from the value at idx: a vec3 / mat3 userdata or a plain table of numbers (gl3 also
 * 3 rows of 3), read raw (no metamethods). */
static int read_raw_numbers(lua_State *L, int idx, int n, double *x)
{
    const double *u = n == 3 ? lfb_testvec3(L, idx) : n == 9 ? lfb_testmat3(L, idx) : NULL;
    if (u) {
        memcpy(x, u, (size_t)n * sizeof(double));
        return 1;
    }
    if (lua_type(L, idx) != LUA_TTABLE) return 0;
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    if ((n == 6 || n == 18) && len == 2) { /* two halves: {a, b} (ts2), {w, v} (se3) or {A, B} (tgl3) */
        for (int r = 0; r < 2; r++) {
            lua_rawgeti(L, idx, r + 1);
            int ok = read_raw_numbers(L, lua_gettop(L), n / 2, x + r * (n / 2));
            lua_pop(L, 1);
            if (!ok) return 0;
        }
        return 1;
    }
    if (n == 9 && len == 3) { /* rows */
        for (int r = 0; r < 3; r++) {
            lua_rawgeti(L, idx, r + 1);
            int ok = read_raw_numbers(L, lua_gettop(L), 3, x + 3 * r);
            lua_pop(L, 1);
            if (!ok) return 0;
        }
        return 1;
    }
    if (len != n) return 0;
    for (int k = 0; k < n; k++) {
        int ok;
        lua_rawgeti(L, idx, k + 1);
        x[k] = lua_tonumberx(L, -1, &ok);
        lua_pop(L, 1);
        if (!ok) return 0;
    }
    return 1;
}

int lfb_read_algebra(lua_State *L, int idx, const lf_manifold *M, double *xi, const char *what, lf_error *err)
{
    idx = lua_absindex(L, idx);
    const int n = lf_manifold_nfactors(M);
    if (lua_type(L, idx) != LUA_TTABLE)
        return lf_error_set(err, LF_ECALLBACK, "%s returned %s, expected an array of %d algebra element%s", what,
                            lfb_typename(L, idx), n, n > 1 ? "s" : "");
    if (lua_rawlen(L, idx) > (size_t)n) /* (one element per factor, no more: a model bug otherwise) */
        return lf_error_set(err, LF_ECALLBACK, "%s returned %d elements, expected %d (one algebra element per factor)",
                            what, (int)lua_rawlen(L, idx), n);
    for (int i = 0; i < n; i++) {
        const lf_factor *f = lf_manifold_factor(M, i);
        lua_rawgeti(L, idx, i + 1);
        int ok = read_raw_numbers(L, lua_gettop(L), f->nd, xi + f->od);
        const char *tn = lfb_typename(L, -1);
        lua_pop(L, 1);
        if (!ok) {
            const char *shape = f->kind == LF_GL3    ? "a 3x3 matrix"
                                : f->kind == LF_RM   ? "an array of numbers"
                                : f->kind == LF_TS2  ? "{a, b} (two vec3) or 6 numbers"
                                : f->kind == LF_SE3  ? "a twist {w, v} (two vec3) or 6 numbers"
                                : f->kind == LF_TGL3 ? "{A, B} (two 3x3 matrices) or 18 numbers"
                                                     : "a vec3";
            return lf_error_set(err, LF_ECALLBACK, "%s: element %d of the result is %s, expected %s (%d numbers) for "
                                                   "factor %d", what, i + 1, tn, shape, f->nd, i + 1);
        }
    }
    return LF_OK;
}

/* Edit distance (insertions, deletions, substitutions, transpositions) of two short strings,
 * capped at 9: what "did you mean" needs. */
static int edit_distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 40 || lb > 40) return 9;
    int d[41][41];
    for (int i = 0; i <= la; i++) d[i][0] = i;
    for (int j = 0; j <= lb; j++) d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int c = a[i - 1] != b[j - 1];
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + c < v) v = d[i - 1][j - 1] + c;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb] < 9 ? d[la][lb] : 9;
}

/* The valid key closest to k (edit distance <= 2, and less than half of k's length), or NULL. */
static const char *closest(const char *k, const char *const *keys)
{
    const char *best = NULL;
    int bd = 3;
    for (int i = 0; keys[i]; i++) {
        int d = edit_distance(k, keys[i]);
        if (d < bd && 2 * d < (int)strlen(k) + 1) {
            bd = d;
            best = keys[i];
        }
    }
    return best;
}

void lfb_check_keys(lua_State *L, int idx, const char *const *keys, const char *fn, const char *noun)
{
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (k && listed(k, keys)) continue;
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (int i = 0; keys[i]; i++) {
            luaL_addstring(&b, i ? ", " : "");
            luaL_addstring(&b, keys[i]);
        }
        luaL_pushresult(&b);
        const char *near = k ? closest(k, keys) : NULL;
        if (!keys[0]) luaL_error(L, "%s: unknown %s '%s' (it takes no %ss)", fn, noun, k ? k : luaL_typename(L, -2), noun);
        if (near) luaL_error(L, "%s: unknown %s '%s' (did you mean '%s'?) (%ss: %s)", fn, noun, k, near, noun, lua_tostring(L, -1));
        if (k) luaL_error(L, "%s: unknown %s '%s' (%ss: %s)", fn, noun, k, noun, lua_tostring(L, -1));
        luaL_error(L, "%s: unknown %s (a %s key) (%ss: %s)", fn, noun, luaL_typename(L, -2), noun, lua_tostring(L, -1));
    }
}
