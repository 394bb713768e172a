/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — lf.potential: the constructors of the built-in rigid-body potentials, one
 * per class of the C registry (core/model/potential.h), all made by one generic constructor that
 * reads the class's parameter schema (lf.potential.stress{alpha = 0.3}); lf.potential.free; and the
 * registry itself for the tests, core.potential_classes() and core.potential_create(name, par). The
 * potential objects (pot:energy, pot:torque, their lifetime) belong to the object layer (shared/object.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "shared/bind.h"
#include "shared/model.h"
#include "lib/open.h"

/* Reading a parameter into v (untouched when absent): numbers finite, rotations checked, errors
 * naming "fn: field 'key'" as every constructor of the binding does; returns 0 if it is absent
 * (for a number, only a required one is looked for first). */
static int read_param(lua_State *L, const lf_potential_param *q, double *v, const char *fn)
{
    switch (q->type) {
    case LF_PARAM_NUMBER: {
        int present = 1;
        if (q->required) { /* else the default stands for an absent one */
            present = lua_getfield(L, 1, q->name) != LUA_TNIL;
            lua_pop(L, 1);
        }
        v[0] = lfb_optfield_number(L, 1, q->name, v[0], fn);
        return present;
    }
    case LF_PARAM_VEC3: return lfb_optfield_vec3(L, 1, q->name, v, fn);
    case LF_PARAM_ROTATION: return lfb_optfield_rotation(L, 1, q->name, v, fn);
    case LF_PARAM_MAT3: {
        int present = lua_getfield(L, 1, q->name) != LUA_TNIL;
        if (present) {
            char w[96];
            snprintf(w, sizeof w, "%s: field '%s'", fn, q->name);
            lfb_tomat3(L, -1, v, w);
        }
        lua_pop(L, 1);
        return present;
    }
    }
    return 0;
}

/* "fn: fields B (spatial field) and m (body vector) are required" */
static int required_error(lua_State *L, const lf_potential_class *c, const char *fn)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    int n = 0, k = 0;
    for (int i = 0; i < c->nparams; i++) n += c->params[i].required;
    for (int i = 0; i < c->nparams; i++) {
        if (!c->params[i].required) continue;
        luaL_addstring(&b, k == 0 ? "" : k == n - 1 ? " and " : ", ");
        lua_pushfstring(L, "%s (%s)", c->params[i].name, c->params[i].doc);
        luaL_addvalue(&b);
        k++;
    }
    luaL_pushresult(&b);
    return luaL_error(L, "%s: field%s %s %s required", fn, n > 1 ? "s" : "", lua_tostring(L, -1), n > 1 ? "are" : "is");
}

/* A parameter with alternatives (the top's mgl, or m, g, l): the parameter if given, else, if one
 * of the alternatives is, the class's from_alt of them (the others at their defaults). */
static void read_with_alternatives(lua_State *L, const lf_potential_class *c, const lf_potential_param *q, double *v,
                                   const char *fn)
{
    int given = lua_getfield(L, 1, q->name) != LUA_TNIL, alt_given = 0;
    for (int a = 0; a < c->nalt; a++) alt_given |= lua_getfield(L, 1, c->alt[a].name) != LUA_TNIL;
    lua_settop(L, 1);
    if (given) read_param(L, q, v, fn);
    else if (alt_given) {
        double alt[LF_POTENTIAL_MAXALT];
        for (int a = 0; a < c->nalt; a++) alt[a] = lfb_optfield_number(L, 1, c->alt[a].name, c->alt[a].def[0], fn);
        v[0] = c->from_alt(alt);
    }
}

/* lf.potential.<name>{...} (upvalue: the class): the parameters by name, unknown ones refused, the
 * defaults of the schema, required ones demanded; then lf_potential_create checks the values. */
static int pot_new(lua_State *L)
{
    const lf_potential_class *c = lua_touserdata(L, lua_upvalueindex(1));
    char fn[64], lfn[80];
    snprintf(fn, sizeof fn, "potential.%s", c->name);
    snprintf(lfn, sizeof lfn, "lf.%s", fn);
    if (lua_isnoneornil(L, 1)) {
        lua_settop(L, 0);
        lua_newtable(L);
    }
    if (lua_type(L, 1) != LUA_TTABLE) luaL_error(L, "%s: table of parameters expected, got %s", fn, lfb_typename(L, 1));
    const char *keys[LF_POTENTIAL_MAXPARAMS + LF_POTENTIAL_MAXALT + 1];
    int nk = 0;
    for (int i = 0; i < c->nparams; i++) {
        keys[nk++] = c->params[i].name;
        for (int a = 0; i == c->alt_for && a < c->nalt; a++) keys[nk++] = c->alt[a].name;
    }
    keys[nk] = NULL;
    lfb_check_keys(L, 1, keys, lfn, "parameter");
    double par[LF_POTENTIAL_MAXPAR];
    lf_potential_class_defaults(c, par);
    double *v = par;
    for (int i = 0; i < c->nparams; i++) {
        const lf_potential_param *q = &c->params[i];
        if (i == c->alt_for && c->nalt > 0) read_with_alternatives(L, c, q, v, fn);
        else if (!read_param(L, q, v, fn) && q->required) required_error(L, c, fn);
        v += lf_param_size(q->type);
    }
    lf_error e;
    lfb_newpotential(L, lf_potential_create(c, par, &e), 0, &e);
    return 1;
}

/* The free body: a potential object standing for no potential (U = 0). */
static int pot_free(lua_State *L)
{
    lfb_newpotential(L, NULL, 1, NULL);
    return 1;
}

/* ---------------------------------------------------------------- the registry, for the tests */
static const char *const type_names[] = {"number", "vec3", "mat3", "rotation"};

static void push_param(lua_State *L, const lf_potential_param *q)
{
    lua_createtable(L, 0, 6);
    lua_pushstring(L, q->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, type_names[q->type]);
    lua_setfield(L, -2, "type");
    lua_pushinteger(L, lf_param_size(q->type));
    lua_setfield(L, -2, "size");
    lua_pushboolean(L, q->required);
    lua_setfield(L, -2, "required");
    lua_pushstring(L, q->doc);
    lua_setfield(L, -2, "doc");
}

/* core.potential_classes() -> {{name=, formula=, positions = (U of the positions x too), npar=, params = {{name=, type=, size=, required=,
 * doc=}, ...}, alternatives = {names}, defaults = {the parameter vector of the defaults}}, ...} */
static int l_potential_classes(lua_State *L)
{
    lua_createtable(L, lf_potential_class_count(), 0);
    for (int i = 0; i < lf_potential_class_count(); i++) {
        const lf_potential_class *c = lf_potential_class_at(i);
        lua_createtable(L, 0, 7);
        lua_pushstring(L, c->name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, c->formula);
        lua_setfield(L, -2, "formula");
        lua_pushboolean(L, c->eval_x != NULL);
        lua_setfield(L, -2, "positions");
        const int npar = lf_potential_class_npar(c);
        lua_pushinteger(L, npar);
        lua_setfield(L, -2, "npar");
        lua_createtable(L, c->nparams, 0);
        for (int k = 0; k < c->nparams; k++) {
            push_param(L, &c->params[k]);
            lua_rawseti(L, -2, k + 1);
        }
        lua_setfield(L, -2, "params");
        lua_createtable(L, c->nalt, 0);
        for (int a = 0; a < c->nalt; a++) {
            lua_pushstring(L, c->alt[a].name);
            lua_rawseti(L, -2, a + 1);
        }
        lua_setfield(L, -2, "alternatives");
        double par[LF_POTENTIAL_MAXPAR];
        lf_potential_class_defaults(c, par);
        lua_createtable(L, npar, 0);
        for (int k = 0; k < npar; k++) {
            lua_pushnumber(L, par[k]);
            lua_rawseti(L, -2, k + 1);
        }
        lua_setfield(L, -2, "defaults");
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* core.potential_create(name, {par...}) -> pot: the C record made from its parameter vector
 * directly (lf_potential_create), without the constructor's reading of named parameters. */
static int l_potential_create(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    const lf_potential_class *c = lf_potential_class_find(name);
    if (!c) return luaL_error(L, "potential_create: unknown potential class '%s'", name);
    luaL_checktype(L, 2, LUA_TTABLE);
    const int npar = lf_potential_class_npar(c);
    if ((lua_Integer)lua_rawlen(L, 2) != npar)
        return luaL_error(L, "potential_create: %s takes %d parameters, got a table of length %d", name, npar,
                          (int)lua_rawlen(L, 2));
    double par[LF_POTENTIAL_MAXPAR];
    for (int k = 0; k < npar; k++) {
        lua_rawgeti(L, 2, k + 1);
        par[k] = lfb_checkfinite(L, -1, "potential_create: parameter");
        lua_pop(L, 1);
    }
    lf_error e;
    lfb_newpotential(L, lf_potential_create(c, par, &e), 0, &e);
    return 1;
}

/* lf.potential.point_masses{G =, bodies = {{masses = {m...}, points = {{x, y, z}...}}, ...}}: bodies made
 * of point masses attracting each other (lf_potential_point_masses, the full body problem) */
static int pot_point_masses(lua_State *L)
{
    static const char *const keys[] = {"G", "bodies", NULL}, *const body_keys[] = {"masses", "points", NULL};
    const char *fn = "lf.potential.point_masses";
    luaL_checktype(L, 1, LUA_TTABLE);
    lfb_check_keys(L, 1, keys, fn, "field");
    double G = 1;
    if (lua_getfield(L, 1, "G") != LUA_TNIL) G = lfb_checkfinite(L, -1, "lf.potential.point_masses: field 'G'");
    lua_pop(L, 1);
    if (lua_getfield(L, 1, "bodies") != LUA_TTABLE || lua_rawlen(L, -1) < 2)
        return luaL_error(L, "%s: field 'bodies' must be an array of 2 or more bodies {masses = {...}, points = {...}}",
                          fn);
    const int bt = lua_gettop(L), nb = (int)lua_rawlen(L, bt);
    if (nb > 100000) return luaL_error(L, "%s: %d bodies is too many", fn, nb);
    int *np = lua_newuserdatauv(L, (size_t)nb * sizeof *np, 0), total = 0;
    for (int b = 0; b < nb; b++) { /* first the counts, then the points */
        if (lua_rawgeti(L, bt, b + 1) != LUA_TTABLE) return luaL_error(L, "%s: bodies[%d] must be a table", fn, b + 1);
        lfb_check_keys(L, -1, body_keys, fn, "field");
        lua_getfield(L, -1, "masses");
        lua_getfield(L, -2, "points");
        if (!lua_istable(L, -2) || !lua_istable(L, -1) || lua_rawlen(L, -2) != lua_rawlen(L, -1) ||
            lua_rawlen(L, -1) < 1)
            return luaL_error(L, "%s: bodies[%d] needs 'masses' and 'points', arrays of the same length (>= 1)", fn,
                              b + 1);
        np[b] = (int)lua_rawlen(L, -1);
        if (np[b] > 1000000 - total) return luaL_error(L, "%s: too many points", fn);
        total += np[b];
        lua_pop(L, 3);
    }
    double *s = lua_newuserdatauv(L, 4 * (size_t)total * sizeof *s, 0), *pm = s + 3 * (size_t)total;
    for (int b = 0, k = 0; b < nb; b++) {
        lua_rawgeti(L, bt, b + 1);
        lua_getfield(L, -1, "masses");
        lua_getfield(L, -2, "points");
        for (int i = 0; i < np[b]; i++, k++) {
            char w[96];
            snprintf(w, sizeof w, "%s: bodies[%d].points[%d]", fn, b + 1, i + 1);
            lua_rawgeti(L, -1, i + 1);
            lfb_tovec3(L, -1, s + 3 * k, w);
            snprintf(w, sizeof w, "%s: bodies[%d].masses[%d]", fn, b + 1, i + 1);
            lua_rawgeti(L, -3, i + 1);
            pm[k] = lfb_checkfinite(L, -1, w);
            lua_pop(L, 2);
        }
        lua_pop(L, 3);
    }
    lf_error e;
    lfb_newpotential(L, lf_potential_point_masses(nb, np, s, pm, G, &e), 0, &e);
    return 1;
}

/* The field `key` of the table at t: an array of numbers (integers when `integer`), into a new userdata
 * on the stack; its length in *n (nil: NULL, *n = 0 unless required). */
static double *numbers_field(lua_State *L, int t, const char *key, int required, int integer, int *n, const char *fn)
{
    const int ty = lua_getfield(L, t, key);
    *n = 0;
    if (ty == LUA_TNIL) {
        lua_pop(L, 1);
        if (required) luaL_error(L, "%s: field '%s' (an array of numbers) is required", fn, key);
        return NULL;
    }
    if (ty != LUA_TTABLE)
        luaL_error(L, "%s: field '%s' must be an array of numbers, got %s", fn, key, lfb_typename(L, -1));
    const lua_Unsigned len = lua_rawlen(L, -1);
    if (len > 100000000) luaL_error(L, "%s: field '%s' has %d entries: too many", fn, key, (int)len);
    double *v = lua_newuserdatauv(L, (len ? len : 1) * sizeof *v, 0);
    for (lua_Unsigned i = 1; i <= len; i++) {
        lua_rawgeti(L, -2, (lua_Integer)i);
        int ok = 0;
        v[i - 1] = integer ? (double)lua_tointegerx(L, -1, &ok) : lua_tonumberx(L, -1, &ok);
        if (!ok)
            luaL_error(L, "%s: field '%s': entry %d is %s, expected %s", fn, key, (int)i, lfb_typename(L, -1),
                       integer ? "an integer" : "a number");
        lua_pop(L, 1);
    }
    lua_remove(L, -2); /* the table; the userdata stays */
    *n = (int)len;
    return v;
}

/* The compiled site_pair functions of a site potential (lf.potential.sites{pair_functions =}): f[ta nt + tb]
 * for ta <= tb (NULL: the pair has none), each of (r, qa, qb) compiled with its gradient (lf.compile). The
 * potential's user value keeps them and this context alive. */
typedef struct {
    int nt, base; /* types; the first type's number in messages (0, or 1 for LAMMPS's types) */
    const lfb_compiled *f[];
} site_pairs;
#define LFB_SITE_PAIR_MAXTYPES 32

static int site_pair_eval(void *ctx, int ta, int tb, double r, double qa, double qb, double *u, double *du,
                          lf_error *err)
{
    const site_pairs *c = ctx;
    const lfb_compiled *f = c->f[ta * c->nt + tb];
    if (!f) {
        *u = *du = 0;
        return LF_OK;
    }
    if (!f->m) /* (finalized by hand: the potential holds it otherwise) */
        return lf_error_set(err, LF_EINVAL, "site_pair of types %d and %d: its compiled function has been finalized",
                            ta + c->base, tb + c->base);
    const double in[3] = {r, qa, qb}, *seg[3] = {in, in + 1, in + 2};
    double out[4];
    lf_gmodule_eval(f->m, 1, seg, f->par, out, NULL);
    if (!isfinite(out[0]) || !isfinite(out[1]))
        return lf_error_set(err, LF_EDOMAIN,
                            "site_pair(r = %g) of sites of types %d and %d (charges %g, %g) is not finite: u = %g, "
                            "du/dr = %g",
                            r, ta + c->base, tb + c->base, qa, qb, out[0], out[1]);
    *u = out[0], *du = out[1];
    return LF_OK;
}

/* Field pair_functions of the spec at 1 ({[ta nt + tb + 1] = compiled function of (r, qa, qb)}, ta <= tb
 * 0-based; type_base: the number of the first type in messages): a context pushed, or nothing (0) */
static site_pairs *site_pairs_of(lua_State *L, int nt, const char *fn)
{
    if (lua_getfield(L, 1, "pair_functions") == LUA_TNIL) {
        lua_pop(L, 1);
        return NULL;
    }
    const int t = lua_gettop(L);
    if (lua_type(L, t) != LUA_TTABLE) return luaL_error(L, "%s: field 'pair_functions' must be a table", fn), NULL;
    if (nt > LFB_SITE_PAIR_MAXTYPES)
        return luaL_error(L, "%s: site pair functions take at most %d site types, got ntypes = %d", fn,
                          LFB_SITE_PAIR_MAXTYPES, nt),
               NULL;
    lua_getfield(L, 1, "type_base");
    const lua_Integer base = lua_isnil(L, -1) ? 0 : luaL_checkinteger(L, -1);
    lua_pop(L, 1);
    site_pairs *c = lua_newuserdatauv(L, sizeof *c + (size_t)nt * (size_t)nt * sizeof c->f[0], 1);
    c->nt = nt;
    c->base = base == 1;
    lua_pushvalue(L, t);
    lua_setiuservalue(L, -2, 1); /* the context keeps the functions */
    for (int k = 0; k < nt * nt; k++) c->f[k] = NULL;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        const lua_Integer k = lua_isinteger(L, -2) ? lua_tointeger(L, -2) : 0;
        const int ta = (int)((k - 1) / nt), tb = (int)((k - 1) % nt);
        if (k < 1 || k > (lua_Integer)nt * nt || ta > tb)
            return luaL_error(L, "%s: pair_functions: key %s, expected ta ntypes + tb + 1 with 0 <= ta <= tb < %d", fn,
                              luaL_tolstring(L, -2, NULL), nt),
                   NULL;
        const lfb_compiled *f = lfb_testcompiled(L, -1);
        if (!f || f->nargs != 3 || f->argkind[0] != 1 || f->argkind[1] != 1 || f->argkind[2] != 1)
            return luaL_error(L,
                              "%s: pair_functions[%d] must be a compiled function of three numbers (r, qa, qb), got %s",
                              fn, (int)k, lfb_typename(L, -1)),
                   NULL;
        if (!f->scalar)
            return luaL_error(L, "%s: site_pair of the site types %d and %d must return a number, got %d numbers", fn,
                              ta + c->base, tb + c->base, f->nout),
                   NULL;
        c->f[k - 1] = f;
        lua_pop(L, 1);
    }
    lua_remove(L, t);
    return c;
}

/* lf.potential.sites{nsites =, s =, type =, charge =, ntypes =, lj_epsilon =, lj_sigma =, cutoff =, lj_shift =,
 * coulomb_alpha =, coulomb_k =, box =, skin =}: the site–site potential of bodies made of sites, in the
 * flat layout of lf_sites_spec (md/sites.h; lf.molecule builds it from molecules) */
static int pot_sites(lua_State *L)
{
    static const char *const keys[] = {"nsites",     "s",        "type",   "charge",         "ntypes",
                                       "lj_epsilon", "lj_sigma", "cutoff", "lj_shift",       "coulomb_alpha",
                                       "coulomb_k",  "box",      "skin",   "pair_functions", "type_base",
                                       NULL};
    const char *fn = "lf.potential.sites";
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lfb_check_keys(L, 1, keys, fn, "field");
    int nb, ns3, nty, nq, ne, nsg, nbox;
    const double *nsd = numbers_field(L, 1, "nsites", 1, 1, &nb, fn);
    const double *s = numbers_field(L, 1, "s", 1, 0, &ns3, fn);
    const double *tyd = numbers_field(L, 1, "type", 0, 1, &nty, fn);
    const double *q = numbers_field(L, 1, "charge", 0, 0, &nq, fn);
    const double *eps = numbers_field(L, 1, "lj_epsilon", 0, 0, &ne, fn);
    const double *sig = numbers_field(L, 1, "lj_sigma", 0, 0, &nsg, fn);
    const double *box = numbers_field(L, 1, "box", 0, 0, &nbox, fn);
    int *nsites = lua_newuserdatauv(L, (size_t)(nb ? nb : 1) * sizeof *nsites, 0), total = 0;
    for (int b = 0; b < nb; b++) {
        if (!(nsd[b] >= 1 && nsd[b] <= 1e6))
            return luaL_error(L, "%s: nsites[%d] = %f, expected 1 .. 1e6", fn, b + 1, nsd[b]);
        nsites[b] = (int)nsd[b];
        total += nsites[b];
        if (total > 100000000) return luaL_error(L, "%s: too many sites", fn);
    }
    if (ns3 != 3 * total)
        return luaL_error(L, "%s: field 's' has %d numbers, expected 3 per site (%d sites)", fn, ns3, total);
    if (tyd && nty != total)
        return luaL_error(L, "%s: field 'type' has %d entries, expected one per site (%d)", fn, nty, total);
    if (q && nq != total)
        return luaL_error(L, "%s: field 'charge' has %d entries, expected one per site (%d)", fn, nq, total);
    if (box && nbox != 3) return luaL_error(L, "%s: field 'box' must be {Lx, Ly, Lz}, got %d numbers", fn, nbox);
    int *type = tyd ? lua_newuserdatauv(L, (size_t)(total ? total : 1) * sizeof *type, 0) : NULL;
    for (int i = 0; type && i < total; i++) {
        if (!(tyd[i] >= 0 && tyd[i] <= 4095))
            return luaL_error(L, "%s: type[%d] = %f, expected an integer 0 .. 4095", fn, i + 1, tyd[i]);
        type[i] = (int)tyd[i];
    }
    lf_sites_spec spec = {.nb = nb, .nsites = nsites, .s = s, .type = type, .charge = q, .box = box};
    lua_getfield(L, 1, "ntypes");
    const lua_Integer nt = lua_isnil(L, -1) ? 1 : luaL_checkinteger(L, -1);
    if (nt < 1 || nt > 4096) return luaL_error(L, "%s: ntypes = %I, expected 1 .. 4096", fn, nt);
    spec.ntypes = (int)nt;
    lua_pop(L, 1);
    if ((eps && ne != spec.ntypes * spec.ntypes) || (sig && nsg != spec.ntypes * spec.ntypes))
        return luaL_error(L, "%s: lj_epsilon and lj_sigma must have ntypes^2 = %d entries (row-major)", fn,
                          spec.ntypes * spec.ntypes);
    spec.lj_epsilon = eps, spec.lj_sigma = sig;
    static const char *const nums[] = {"cutoff", "coulomb_alpha", "coulomb_k", "skin"};
    double val[4] = {NAN, 0, 0, 0};
    for (int k = 0; k < 4; k++) {
        if (lua_getfield(L, 1, nums[k]) != LUA_TNIL) {
            char w[64];
            snprintf(w, sizeof w, "%s: field '%s'", fn, nums[k]);
            val[k] = lfb_checkfinite(L, -1, w);
        }
        lua_pop(L, 1);
    }
    if (isnan(val[0])) return luaL_error(L, "%s: field 'cutoff' (the pair cutoff) is required", fn);
    spec.cutoff = val[0], spec.coulomb_alpha = val[1], spec.coulomb_k = val[2], spec.skin = val[3];
    lua_getfield(L, 1, "lj_shift");
    spec.lj_shift = lua_toboolean(L, -1) && !(lua_isinteger(L, -1) && lua_tointeger(L, -1) == 0);
    lua_pop(L, 1);
    site_pairs *sp = site_pairs_of(L, spec.ntypes, fn); /* (pushed: a context, if any) */
    if (sp) spec.pair_fn = site_pair_eval, spec.pair_ctx = sp;
    /* charges without a Coulomb constant: for the pair functions only, or nothing */
    if (q && !(spec.coulomb_k > 0)) {
        if (sp) spec.charges_only = 1;
        else spec.charge = NULL;
    }
    lf_error e;
    lfb_newpotential(L, lf_potential_sites(&spec, &e), 0, &e);
    if (sp) { /* the potential keeps the context (and through it the functions) */
        lua_pushvalue(L, -2);
        lua_setiuservalue(L, -2, 1);
    }
    return 1;
}

/* lf.potential.sites_stats(pot) -> {energy, pair_energy, lj_energy, self_energy, virial, atomic_virial,
 * pairs_in_range, list_pairs, rebuilds, evaluations, skin, bytes} of its last evaluation */
static int pot_sites_stats(lua_State *L)
{
    lfb_potential *u = lfb_checkpotential(L, 1);
    lf_sites_stats st;
    lf_error e;
    if (lf_potential_sites_stats(u->p, &st, &e) != LF_OK) return lfb_error(L, &e);
    lua_createtable(L, 0, 12);
    const struct {
        const char *k;
        double v;
    } f[] = {{"energy", st.energy},
             {"pair_energy", st.pair_energy},
             {"lj_energy", st.lj_energy},
             {"user_energy", st.user_energy},
             {"self_energy", st.self_energy},
             {"virial", st.virial},
             {"atomic_virial", st.atomic_virial},
             {"skin", st.skin}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        lua_pushnumber(L, f[i].v);
        lua_setfield(L, -2, f[i].k);
    }
    lua_pushinteger(L, st.pairs_in_range);
    lua_setfield(L, -2, "pairs_in_range");
    lua_pushinteger(L, st.list_pairs);
    lua_setfield(L, -2, "list_pairs");
    lua_pushinteger(L, st.rebuilds);
    lua_setfield(L, -2, "rebuilds");
    lua_pushinteger(L, st.evaluations);
    lua_setfield(L, -2, "evaluations");
    lua_pushinteger(L, (lua_Integer)st.bytes);
    lua_setfield(L, -2, "bytes");
    return 1;
}

void lfb_open_potentials(lua_State *L)
{
    lua_createtable(L, 0, lf_potential_class_count() + 1);
    for (int i = 0; i < lf_potential_class_count(); i++) {
        const lf_potential_class *c = lf_potential_class_at(i);
        lua_pushlightuserdata(L, (void *)c);
        lua_pushcclosure(L, pot_new, 1);
        lua_setfield(L, -2, c->name);
    }
    lua_pushcfunction(L, pot_point_masses);
    lua_setfield(L, -2, "point_masses");
    lua_pushcfunction(L, pot_sites);
    lua_setfield(L, -2, "sites");
    lua_pushcfunction(L, pot_sites_stats);
    lua_setfield(L, -2, "sites_stats");
    lua_pushcfunction(L, pot_free);
    lua_setfield(L, -2, "free");
    lua_setfield(L, -2, "potential");
    const luaL_Reg fns[] = {{"potential_classes", l_potential_classes}, {"potential_create", l_potential_create},
                            {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
}
