/* lieflow Lua binding — the method registry (lf.methods), C integrators (lf.integrator for built-in
 * methods) and the reference solver (lf.reference). */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "lbind.h"

#define LFB_INTEGRATOR "lf.integrator"

void lfb_system_initial(lua_State *L, int idx, const double **R0, const double **w0);

typedef struct {
    lf_stepper *st;
    double h;
    int busy; /* inside lf_stepper_step: a Lua potential must not step or reset this integrator */
} lfb_integrator;

static lfb_integrator *checkit(lua_State *L, int idx)
{
    lfb_integrator *it = luaL_checkudata(L, idx, LFB_INTEGRATOR);
    if (!it->st) luaL_error(L, "integrator has been closed");
    return it;
}

static void check_not_busy(lua_State *L, const lfb_integrator *it)
{
    if (it->busy) luaL_error(L, "integrator is in the middle of a step (called from its own potential or torque)");
}

/* Set the Lua thread on the integrator's system (stored as uservalue 1) before stepping. */
static void bind(lua_State *L, int idx)
{
    lua_getiuservalue(L, idx, 1);
    lfb_system_bind(L, -1);
    lua_pop(L, 1);
}

static void push_method(lua_State *L, const lf_method *m)
{
    lua_createtable(L, 0, 9);
    lua_pushstring(L, m->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, m->title);
    lua_setfield(L, -2, "title");
    lua_pushstring(L, m->reference);
    lua_setfield(L, -2, "reference");
    lua_pushinteger(L, m->order);
    lua_setfield(L, -2, "order");
    lua_pushboolean(L, m->symmetric);
    lua_setfield(L, -2, "symmetric");
    lua_pushstring(L, m->symplectic);
    lua_setfield(L, -2, "symplectic");
    lua_pushboolean(L, m->explicit_in_torque);
    lua_setfield(L, -2, "explicit_in_torque");
    lua_pushboolean(L, m->momentum_conserving);
    lua_setfield(L, -2, "momentum_conserving");
    lua_pushboolean(L, m->free_body_only);
    lua_setfield(L, -2, "free_body_only");
    lua_pushstring(L, "C");
    lua_setfield(L, -2, "implementation");
}

/* core.methods() -> array of metadata tables, in registry order. */
static int l_methods(lua_State *L)
{
    int n = lf_method_count();
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        push_method(L, lf_method_at(i));
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static double opt_field(lua_State *L, int t, const char *k, double def)
{
    double x = def;
    if (lua_getfield(L, t, k) != LUA_TNIL) {
        char w[64];
        snprintf(w, sizeof w, "option '%s'", k);
        x = lfb_checkfinite(L, -1, w);
    }
    lua_pop(L, 1);
    return x;
}

/* core.integrator(name, system, {h=, newton_tol=, max_iter=, t0=}) */
static int l_integrator(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    const lf_method *m = lf_method_find(name);
    if (!m) {
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (int i = 0; i < lf_method_count(); i++) {
            luaL_addstring(&b, i ? ", " : "");
            luaL_addstring(&b, lf_method_at(i)->name);
        }
        luaL_pushresult(&b);
        return luaL_error(L, "unknown method '%s' (known: %s)", name, lua_tostring(L, -1));
    }
    lf_system *sys = lfb_checksystem(L, 2);
    if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    else {
        lua_settop(L, 2);
        lua_newtable(L);
    }
    double h = opt_field(L, 3, "h", NAN);
    if (isnan(h)) return luaL_error(L, "lf.integrator: option 'h' (step size) is required");
    if (h == 0) return luaL_error(L, "lf.integrator: step size h must be nonzero");
    double mi = opt_field(L, 3, "max_iter", 50); /* checked before the conversion to int */
    if (!(mi >= 1 && mi <= INT_MAX && mi == floor(mi)))
        return luaL_error(L, "lf.integrator: max_iter must be an integer >= 1, got %f", mi);
    lf_stepper_opts o = {opt_field(L, 3, "newton_tol", 1e-14), (int)mi};
    if (!(o.newton_tol > 0)) return luaL_error(L, "lf.integrator: newton_tol must be positive, got %f", o.newton_tol);
    double t0 = opt_field(L, 3, "t0", 0);

    const double *R0, *w0;
    lfb_system_initial(L, 2, &R0, &w0);
    lfb_integrator *it = lua_newuserdatauv(L, sizeof *it, 1);
    it->st = NULL;
    it->h = h;
    it->busy = 0;
    luaL_setmetatable(L, LFB_INTEGRATOR);
    lua_pushvalue(L, 2);
    lua_setiuservalue(L, -2, 1);
    lf_error e;
    it->st = lf_stepper_new(m, sys, R0, w0, t0, &o, &e);
    if (!it->st) return lfb_error(L, &e);
    /* a host that handles SIGINT (the lieflow executable) registers its flag here */
    if (lua_getfield(L, LUA_REGISTRYINDEX, "lieflow.cancel") == LUA_TLIGHTUSERDATA)
        it->st->cancel = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return 1;
}

static int it_gc(lua_State *L)
{
    lfb_integrator *it = luaL_checkudata(L, 1, LFB_INTEGRATOR);
    check_not_busy(L, it); /* __close from a callback; __gc cannot run while a step holds it */
    lf_stepper_free(it->st);
    it->st = NULL;
    return 0;
}

static void stepn(lua_State *L, lfb_integrator *it, double h, lua_Integer n)
{
    check_not_busy(L, it);
    bind(L, 1);
    it->busy = 1; /* no Lua error can cross lf_stepper_step: the callbacks run under lua_pcall */
    int rc = lf_stepper_step(it->st, h, (long)n);
    it->busy = 0;
    if (rc != LF_OK) lfb_error(L, &it->st->err);
}

/* it:step([n]) : n steps of size h. */
static int it_step(lua_State *L)
{
    lfb_integrator *it = checkit(L, 1);
    lua_Integer n = luaL_optinteger(L, 2, 1);
    luaL_argcheck(L, n >= 0, 2, "number of steps must be >= 0");
    stepn(L, it, it->h, n);
    lua_settop(L, 1);
    return 1;
}

/* it:advance_to(T): steps of h while they fit, then one shorter step landing on T exactly. */
static int it_advance_to(lua_State *L)
{
    lfb_integrator *it = checkit(L, 1);
    check_not_busy(L, it);
    double T = lfb_checkfinite(L, 2, "argument #1 to 'advance_to'");
    double h = it->h, t = it->st->t;
    if ((T - t) * h < 0)
        return luaL_error(L, "advance_to(%f): target lies behind t=%f for step size h=%f", T, t, h);
    double nf = floor((T - t) / h * (1 + 1e-12));
    if (!(nf < 0x1p62)) /* also catches inf: the conversion to an integer below would be undefined */
        return luaL_error(L, "advance_to(%f): %f steps of h=%f from t=%f are too many", T, nf, h, t);
    stepn(L, it, h, (lua_Integer)nf);
    double rest = T - it->st->t;
    if (fabs(rest) > 1e-12 * fabs(h) * (1 + nf)) stepn(L, it, rest, 1);
    it->st->t = T;
    it->st->t_comp = 0;
    lua_settop(L, 1);
    return 1;
}

static void push_spatial_momentum(lua_State *L, const lf_stepper *st)
{
    double pi[3];
    lf_system_spatial_momentum(st->sys, st->R, st->w, pi);
    lfb_pushvec3(L, pi);
}

static double orthogonality(const lf_stepper *st)
{
    double worst = 0;
    for (int i = 0; i < st->nb; i++) {
        double d = lf_so3_orth_error(st->R + 9 * i);
        if (d > worst) worst = d;
    }
    return worst;
}

static int it_energy(lua_State *L)
{
    lfb_integrator *it = checkit(L, 1);
    bind(L, 1);
    double E;
    lf_error e;
    if (lf_system_energy(it->st->sys, it->st->R, it->st->w, &E, &e) != LF_OK) return lfb_error(L, &e);
    lua_pushnumber(L, E);
    return 1;
}

/* it:state() -> {t=, R=, omega=} (copies). */
static int it_state(lua_State *L)
{
    lfb_integrator *it = checkit(L, 1);
    lua_createtable(L, 0, 3);
    lua_pushnumber(L, it->st->t);
    lua_setfield(L, -2, "t");
    lfb_push_rotations(L, it->st->nb, it->st->R);
    lua_setfield(L, -2, "R");
    lfb_push_vectors(L, it->st->nb, it->st->w);
    lua_setfield(L, -2, "omega");
    return 1;
}

/* it:set_state{t=, R=, omega= | momentum=} (fields omitted keep their values). */
static int it_set_state(lua_State *L)
{
    lfb_integrator *it = checkit(L, 1);
    check_not_busy(L, it);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    lf_stepper *st = it->st;
    int nb = st->nb;
    double *R = lua_newuserdatauv(L, 12 * (size_t)nb * sizeof(double), 0), *w = R + 9 * nb;
    memcpy(R, st->R, 9 * (size_t)nb * sizeof(double));
    memcpy(w, st->w, 3 * (size_t)nb * sizeof(double));
    double t = st->t;
    if (lua_getfield(L, 2, "t") != LUA_TNIL) t = lfb_checkfinite(L, -1, "set_state: field 't'");
    if (lua_getfield(L, 2, "R") != LUA_TNIL) lfb_read_rotations(L, -1, nb, R, "set_state: field 'R'");
    if (lua_getfield(L, 2, "omega") != LUA_TNIL) lfb_read_vectors(L, -1, nb, w, "set_state: field 'omega'");
    if (lua_getfield(L, 2, "momentum") != LUA_TNIL) {
        if (lua_type(L, -2) != LUA_TNIL) return luaL_error(L, "set_state: give either 'omega' or 'momentum', not both");
        lfb_read_vectors(L, -1, nb, w, "set_state: field 'momentum'");
        for (int i = 0; i < 3 * nb; i++) w[i] /= st->sys->J[i];
    }
    if (lf_stepper_set_state(st, R, w, t) != LF_OK) return lfb_error(L, &st->err);
    lua_settop(L, 1);
    return 1;
}

static int it_index(lua_State *L)
{
    lfb_integrator *it = checkit(L, 1);
    const lf_stepper *st = it->st;
    const char *k = luaL_checkstring(L, 2);
    int nb = st->nb;
    if (strcmp(k, "t") == 0) lua_pushnumber(L, st->t);
    else if (strcmp(k, "h") == 0) lua_pushnumber(L, it->h);
    else if (strcmp(k, "R") == 0) lfb_push_rotations(L, nb, st->R);
    else if (strcmp(k, "omega") == 0) lfb_push_vectors(L, nb, st->w);
    else if (strcmp(k, "momentum") == 0) {
        double *Pi = lua_newuserdatauv(L, 3 * (size_t)nb * sizeof(double), 0);
        for (int i = 0; i < 3 * nb; i++) Pi[i] = st->sys->J[i] * st->w[i];
        lfb_push_vectors(L, nb, Pi);
    } else if (strcmp(k, "spatial_momentum") == 0) push_spatial_momentum(L, st);
    else if (strcmp(k, "orthogonality") == 0) lua_pushnumber(L, orthogonality(st));
    else if (strcmp(k, "method") == 0) push_method(L, st->method);
    else if (strcmp(k, "name") == 0) lua_pushstring(L, st->method->name);
    else if (strcmp(k, "system") == 0) lua_getiuservalue(L, 1, 1);
    else if (strcmp(k, "steps") == 0) lua_pushinteger(L, st->nsteps);
    else if (strcmp(k, "torque_evals") == 0) lua_pushinteger(L, st->torque_evals);
    else if (strcmp(k, "newton_iters") == 0) lua_pushinteger(L, st->newton_iters);
    else {
        luaL_getmetatable(L, LFB_INTEGRATOR);
        lua_getfield(L, -1, "methods");
        lua_getfield(L, -1, k);
    }
    return 1;
}

static int it_newindex(lua_State *L)
{
    lfb_integrator *it = checkit(L, 1);
    const char *k = luaL_checkstring(L, 2);
    if (strcmp(k, "h") == 0) {
        double h = lfb_checkfinite(L, 3, "integrator.h");
        if (h == 0) return luaL_error(L, "integrator.h must be nonzero");
        it->h = h;
        return 0;
    }
    return luaL_error(L, "integrator: field '%s' is read-only (use set_state or h)", k);
}

static int it_tostring(lua_State *L)
{
    lfb_integrator *it = checkit(L, 1);
    lua_pushfstring(L, "lf.integrator(%s, h = %f, t = %f)", it->st->method->name, it->h, it->st->t);
    return 1;
}

/* core.reference(system, T, {rtol=, atol=, at={...}, t0=, R=, omega=}) -> {t=, R=, omega=}
 * (and with `at`: an array of such states, one per requested time). */
static int l_reference(lua_State *L)
{
    lf_system *sys = lfb_checksystem(L, 1);
    int nb = sys->nb;
    double T = lfb_checkfinite(L, 2, "argument #2 'T' to 'lf.reference'");
    if (lua_isnoneornil(L, 3)) {
        lua_settop(L, 2);
        lua_newtable(L);
    }
    luaL_checktype(L, 3, LUA_TTABLE);
    lf_reference_opts o = {opt_field(L, 3, "rtol", 1e-13), opt_field(L, 3, "atol", 1e-13), opt_field(L, 3, "h0", 1e-3)};
    if (o.rtol < 0 || o.atol < 0 || o.h0 < 0) /* 0 selects the default */
        return luaL_error(L, "lf.reference: options rtol, atol and h0 must not be negative, got %f, %f, %f", o.rtol,
                          o.atol, o.h0);
    double t0 = opt_field(L, 3, "t0", 0);
    const double *R0c, *w0c;
    lfb_system_initial(L, 1, &R0c, &w0c);
    double *x0 = lua_newuserdatauv(L, 12 * (size_t)nb * sizeof(double), 0);
    memcpy(x0, R0c, 9 * (size_t)nb * sizeof(double));
    memcpy(x0 + 9 * nb, w0c, 3 * (size_t)nb * sizeof(double));
    if (lua_getfield(L, 3, "R") != LUA_TNIL) lfb_read_rotations(L, -1, nb, x0, "lf.reference: option 'R'");
    lua_pop(L, 1);
    if (lua_getfield(L, 3, "omega") != LUA_TNIL) lfb_read_vectors(L, -1, nb, x0 + 9 * nb, "lf.reference: option 'omega'");
    lua_pop(L, 1);

    int at_type = lua_getfield(L, 3, "at"), has_at = at_type == LUA_TTABLE;
    if (!has_at && at_type != LUA_TNIL)
        return luaL_error(L, "lf.reference: option 'at' must be an array of times, got %s", lfb_typename(L, -1));
    int at_idx = lua_gettop(L);
    lua_Integer nat = has_at ? luaL_len(L, at_idx) : 1;
    if (nat < 1) return luaL_error(L, "lf.reference: option 'at' must list at least one time");
    if (nat > INT_MAX / 16) return luaL_error(L, "lf.reference: option 'at' lists too many times (%I)", nat);
    int n = (int)nat;
    double *times = lua_newuserdatauv(L, (size_t)n * 13 * nb * sizeof(double) + n * sizeof(double), 0);
    double *Rout = times + n, *wout = Rout + 9 * (size_t)nb * n;
    for (int k = 0; k < n; k++) {
        if (has_at) {
            lua_geti(L, at_idx, k + 1);
            times[k] = lfb_checkfinite(L, -1, "lf.reference: option 'at' element");
            lua_pop(L, 1);
        } else times[k] = T;
    }
    lf_error e;
    if (lf_reference_solve(sys, x0, x0 + 9 * nb, t0, times, n, Rout, wout, &o, &e) != LF_OK) return lfb_error(L, &e);
    if (has_at) lua_createtable(L, n, 0);
    for (int k = 0; k < n; k++) {
        lua_createtable(L, 0, 3);
        lua_pushnumber(L, times[k]);
        lua_setfield(L, -2, "t");
        lfb_push_rotations(L, nb, Rout + 9 * (size_t)nb * k);
        lua_setfield(L, -2, "R");
        lfb_push_vectors(L, nb, wout + 3 * (size_t)nb * k);
        lua_setfield(L, -2, "omega");
        if (has_at) lua_rawseti(L, -2, k + 1);
    }
    return 1;
}

static const luaL_Reg it_methods[] = {{"step", it_step},   {"advance_to", it_advance_to}, {"energy", it_energy},
                                      {"state", it_state}, {"set_state", it_set_state},   {NULL, NULL}};

void lfb_open_integrators(lua_State *L)
{
    luaL_newmetatable(L, LFB_INTEGRATOR);
    const luaL_Reg meta[] = {{"__gc", it_gc},
                             {"__close", it_gc},
                             {"__index", it_index},
                             {"__newindex", it_newindex},
                             {"__tostring", it_tostring},
                             {NULL, NULL}};
    luaL_setfuncs(L, meta, 0);
    luaL_newlib(L, it_methods);
    lua_setfield(L, -2, "methods");
    lua_pop(L, 1);
    const luaL_Reg fns[] = {{"methods", l_methods}, {"integrator", l_integrator}, {"reference", l_reference}, {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
}
