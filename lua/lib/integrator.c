/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — integrators (lf.integrator over any system and compatible method: what they
 * expose comes from the system's schema) and the reference solver (lf.reference). */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "shared/bind.h"
#include "shared/forcing.h"
#include "lib/open.h"

#define LFB_INTEGRATOR "lf.integrator"

/* A Lua monitor of reversible adaptive steps: the function (registry reference) and the state it
 * is called in (set before every stepping call). */
typedef struct {
    lua_State *L;
    int ref;
} lfb_monitor;

typedef struct {
    lf_stepper *st;
    double h;
    int busy;  /* inside lf_stepper_step: a Lua callback must not step or reset this integrator */
    int holds; /* it retains its system and method (from its creation until __gc or __close) */
    lfb_monitor mon;
    long control_phase; /* a system with a controller: the steps since its last call (it is called at 0) */
} lfb_integrator;

/* uservalues of an integrator: 1 = its system userdata, 2 = its method userdata (lf.rkmk) */

static lfb_system *it_system(lua_State *L, int idx)
{
    lua_getiuservalue(L, idx, 1);
    lfb_system *s = luaL_testudata(L, -1, LFB_SYSTEM);
    lua_pop(L, 1); /* the integrator's uservalue keeps it alive */
    if (!s || s->finalized || !s->sys)
        luaL_error(L, "the integrator's system has been finalized (garbage-collected) and cannot be used");
    s->L = L;
    return s;
}

static lfb_integrator *checkit(lua_State *L, int idx)
{
    lfb_integrator *it = luaL_checkudata(L, idx, LFB_INTEGRATOR);
    if (!it->st) luaL_error(L, "integrator has been closed");
    it_system(L, idx);
    return it;
}

/* An integrator of one state (methods that read or write "the" state refuse lanes). */
static lfb_integrator *checkone(lua_State *L, int idx, const char *what)
{
    lfb_integrator *it = checkit(L, idx);
    const int B = lf_stepper_lanes(it->st);
    if (B > 1)
        luaL_error(L, "%s: this integrator steps %d lanes; read one with it:lane(j), write one with it:set_lane(j, "
                      "state)", what, B);
    return it;
}

static void check_not_busy(lua_State *L, const lfb_integrator *it)
{
    if (it->busy) luaL_error(L, "integrator is in the middle of a step (called from its own system's callback)");
}

/* ---------------------------------------------------------------- integrators */
static double opt_number(lua_State *L, int t, const char *k, double def)
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

static int opt_choice(lua_State *L, int t, const char *k, const char *const *names, const int *values, int def)
{
    int v = def;
    if (lua_getfield(L, t, k) != LUA_TNIL) {
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
        int found = 0;
        for (int i = 0; names[i] && !found; i++)
            if (strcmp(s, names[i]) == 0) {
                v = values[i];
                found = 1;
            }
        if (!found) {
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            for (int i = 0; names[i]; i++) {
                if (i) luaL_addstring(&b, ", ");
                luaL_addstring(&b, names[i]);
            }
            luaL_pushresult(&b);
            luaL_error(L, "lf.integrator: option '%s' must be one of %s, got %s", k, lua_tostring(L, -1),
                       *s ? s : lfb_typename(L, -2));
        }
    }
    lua_pop(L, 1);
    return v;
}

/* ---------------------------------------------------------------- reversible adaptive steps */
static int push_monitor_state(lua_State *L, void *ud)
{
    const void **a = ud;
    lfb_push_state(L, a[0], *(const double *)a[1], a[2]);
    return 1;
}

static int lua_monitor(void *ctx, const lf_system *sys, double t, const double *y, double *Q, lf_error *err)
{
    lfb_monitor *m = ctx;
    const void *a[3] = {sys, &t, y};
    int rc = lfb_call(m->L, m->ref, push_monitor_state, a, 1, "the adapt monitor", err);
    if (rc != LF_OK) return rc;
    int isnum = 0;
    *Q = lua_tonumberx(m->L, -1, &isnum);
    lua_pop(m->L, 1);
    if (!isnum) return lf_error_set(err, LF_ECALLBACK, "the adapt monitor returned no number at t=%.17g", t);
    return LF_OK;
}

/* Option adapt = true | {monitor = "torque" | function(state) return Q end} into o (the function is
 * referenced from it->mon) */
static void read_adapt(lua_State *L, int t, lfb_integrator *it, lf_stepper_opts *o)
{
    const int ty = lua_getfield(L, t, "adapt");
    if (ty == LUA_TNIL || (ty == LUA_TBOOLEAN && !lua_toboolean(L, -1))) {
        lua_pop(L, 1);
        return;
    }
    o->adapt = 1;
    if (ty == LUA_TBOOLEAN) {
        lua_pop(L, 1);
        return;
    }
    if (ty != LUA_TTABLE)
        luaL_error(L, "lf.integrator: option 'adapt' must be true or a table {monitor = \"torque\" | function(state) "
                      "return rate end}, got %s", lfb_typename(L, -1));
    static const char *const keys[] = {"monitor", NULL};
    lfb_check_keys(L, lua_gettop(L), keys, "lf.integrator", "adapt option");
    const int mt = lua_getfield(L, -1, "monitor");
    if (mt == LUA_TFUNCTION) {
        lua_pushvalue(L, -1);
        it->mon.ref = luaL_ref(L, LUA_REGISTRYINDEX);
        it->mon.L = L;
        o->monitor = lua_monitor;
        o->monitor_ctx = &it->mon;
    } else if (!(mt == LUA_TNIL || (mt == LUA_TSTRING && strcmp(lua_tostring(L, -1), "torque") == 0)))
        luaL_error(L, "lf.integrator: adapt.monitor must be \"torque\" or a function(state) returning a positive rate, "
                      "got %s", mt == LUA_TSTRING ? lua_tostring(L, -1) : lfb_typename(L, -1));
    lua_pop(L, 2);
}

/* Option thermostat = {kind = "langevin", T =, gamma =, gamma_rot =, seed =} into th (langevin.c);
 * returns 0 without one. */
static int read_thermostat(lua_State *L, int t, lf_thermostat *th)
{
    if (lua_getfield(L, t, "thermostat") == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    if (!lua_istable(L, -1))
        return luaL_error(L,
                          "lf.integrator: option 'thermostat' must be a table {kind = \"langevin\", T =, gamma =, "
                          "gamma_rot =, seed =}, got %s",
                          luaL_typename(L, -1));
    const int k = lua_gettop(L);
    static const char *const keys[] = {"kind", "T", "gamma", "gamma_rot", "seed", NULL};
    lfb_check_keys(L, k, keys, "lf.integrator", "thermostat field");
    if (lua_getfield(L, k, "kind") != LUA_TNIL &&
        !(lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "langevin") == 0))
        return luaL_error(L, "lf.integrator: thermostat.kind must be \"langevin\" (the one kind there is), got %s",
                          lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, -1));
    lua_pop(L, 1);
    if (lua_getfield(L, k, "T") != LUA_TNUMBER)
        return luaL_error(L,
                          "lf.integrator: thermostat.T (kT, in the model's energy units) is required, a number >= 0");
    lua_pop(L, 1);
    static const char *const fields[3] = {"T", "gamma", "gamma_rot"};
    double *dst[3] = {&th->kT, &th->gamma, &th->gamma_rot};
    for (int f = 0; f < 3; f++) { /* finite numbers, named as the thermostat's fields */
        *dst[f] = 0;
        if (lua_getfield(L, k, fields[f]) != LUA_TNIL) {
            char what[64];
            snprintf(what, sizeof what, "lf.integrator: thermostat.%s", fields[f]);
            *dst[f] = lfb_checkfinite(L, -1, what);
        }
        lua_pop(L, 1);
    }
    const int st = lua_getfield(L, k, "seed");
    lua_Integer seed = 0;
    if (st != LUA_TNIL) {
        int isint = 0;
        seed = lua_tointegerx(L, -1, &isint);
        if (!isint || seed < 0)
            return luaL_error(L, "lf.integrator: thermostat.seed must be an integer >= 0, got %s",
                              luaL_tolstring(L, -1, NULL));
    }
    lua_pop(L, 2);
    th->seed = (unsigned long long)seed;
    return 1;
}

/* core.integrator(method, system, {h=, t0=, newton_tol=, max_iter=, dexpinv_order=, solver=,
 * jacobian=, rtol=, atol=, quadrature=, adapt=, thermostat=}) */
static int l_integrator(lua_State *L)
{
    const lf_method *m = NULL;
    if (lua_type(L, 1) == LUA_TSTRING) {
        const char *name = lua_tostring(L, 1);
        m = lf_method_find(name);
        if (!m) {
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            for (int i = 0; i < lf_method_count(); i++) {
                luaL_addstring(&b, i ? ", " : "");
                luaL_addstring(&b, lf_method_get_info(lf_method_at(i))->name);
            }
            luaL_pushresult(&b);
            return luaL_error(L, "lf.integrator: unknown method '%s' (known: %s)", name, lua_tostring(L, -1));
        }
    } else {
        m = lfb_checkusermethod(L, 1, "lf.integrator")->m;
    }
    lfb_system *s = lfb_checksystem(L, 2);
    if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    else {
        lua_settop(L, 2);
        lua_newtable(L);
    }
    lua_settop(L, 3);
    /* The integrator (slot 4) retains its system and method from here on: the options' metamethods
     * may finalize either (they are checked again below); an error drops the integrator and its __gc
     * releases them. */
    lfb_integrator *it = lua_newuserdatauv(L, sizeof *it, 2);
    *it = (lfb_integrator){.st = NULL, .h = 0, .busy = 0, .holds = 1, .mon = {NULL, LUA_NOREF}};
    luaL_setmetatable(L, LFB_INTEGRATOR);
    lua_pushvalue(L, 2);
    lua_setiuservalue(L, 4, 1);
    lfb_system_retain(s);
    if (lua_type(L, 1) == LUA_TUSERDATA) {
        lua_pushvalue(L, 1);
        lua_setiuservalue(L, 4, 2);
        lfb_method_retain(L, 1);
    }
    static const char *const keys[] = {"h",          "t0",       "newton_tol", "max_iter", "dexpinv_order",
                                       "solver",     "jacobian", "rtol",       "atol",     "lanes",
                                       "quadrature", "adapt",    "thermostat", "dense",    NULL};
    lfb_check_keys(L, 3, keys, "lf.integrator", "option");
    const lf_method_info *mi = lf_method_get_info(m);
    double h = opt_number(L, 3, "h", NAN);
    if (isnan(h)) return luaL_error(L, "lf.integrator: option 'h' (step size%s) is required", mi->adaptive ? ", the first trial step" : "");
    if (h == 0) return luaL_error(L, "lf.integrator: step size h must be nonzero");
    double mi_ = opt_number(L, 3, "max_iter", 50);
    if (!(mi_ >= 1 && mi_ <= INT_MAX && mi_ == floor(mi_)))
        return luaL_error(L, "lf.integrator: max_iter must be an integer >= 1, got %f", mi_);
    double nq = opt_number(L, 3, "quadrature", 0);
    if (!(nq >= 0 && nq <= 40 && nq == floor(nq)))
        return luaL_error(L, "lf.integrator: quadrature (Gauss-Legendre nodes of the discrete-gradient methods) must be "
                             "an integer 1 .. 40, got %f", nq);
    double dq = opt_number(L, 3, "dexpinv_order", 0);
    if (!(dq >= 0 && dq <= 16 && dq == floor(dq)))
        return luaL_error(L, "lf.integrator: dexpinv_order must be an integer 0 (exact) .. 16, got %f", dq);
    static const char *const solvers[] = {"newton", "fixed_point", NULL};
    static const int solver_v[] = {LF_SOLVER_NEWTON, LF_SOLVER_FIXED_POINT};
    static const char *const jacs[] = {"auto", "analytic", "fd", "block", NULL};
    static const int jac_v[] = {LF_JAC_AUTO, LF_JAC_ANALYTIC, LF_JAC_FD, LF_JAC_BLOCK_FD};
    lf_stepper_opts o = {.newton_tol = opt_number(L, 3, "newton_tol", 1e-14),
                         .max_iter = (int)mi_,
                         .dexpinv_order = (int)dq,
                         .solver = opt_choice(L, 3, "solver", solvers, solver_v, LF_SOLVER_DEFAULT),
                         .jacobian = opt_choice(L, 3, "jacobian", jacs, jac_v, LF_JAC_AUTO),
                         .rtol = opt_number(L, 3, "rtol", 1e-6),
                         .atol = opt_number(L, 3, "atol", 1e-9),
                         .h0 = mi->adaptive ? fabs(h) : 0,
                         .quad_nodes = (int)nq};
    read_adapt(L, 3, it, &o);
    lf_thermostat th;
    if (read_thermostat(L, 3, &th)) o.thermostat = &th;
    if (!(o.newton_tol > 0)) return luaL_error(L, "lf.integrator: newton_tol must be positive, got %f", o.newton_tol);
    if (!(o.rtol > 0) || !(o.atol > 0))
        return luaL_error(L, "lf.integrator: rtol and atol must be positive, got %f and %f", o.rtol, o.atol);
    double t0 = opt_number(L, 3, "t0", 0);
    it->h = h;
    lf_error e;
    const int np = lf_system_nparam(s->sys);
    const double *y0 = lf_system_initial(s->sys);
    int B = 1;
    if (lua_getfield(L, 3, "lanes") != LUA_TNIL) { /* lanes = {state, state, ...} */
        if (lua_type(L, -1) != LUA_TTABLE || luaL_len(L, -1) < 1)
            return luaL_error(L, "lf.integrator: option 'lanes' must be an array of initial states, got %s",
                              lfb_typename(L, -1));
        const lua_Integer n = luaL_len(L, -1);
        if (n > (lua_Integer)(INT_MAX / 64) / np) return luaL_error(L, "lf.integrator: %d lanes are too many", (int)n);
        B = (int)n;
        double *ys = lua_newuserdatauv(L, (size_t)B * np * sizeof(double), 0);
        for (int j = 0; j < B; j++) {
            char what[64];
            snprintf(what, sizeof what, "lf.integrator: lanes[%d]", j + 1);
            memcpy(ys + (size_t)j * np, y0, (size_t)np * sizeof(double));
            lua_geti(L, -2, j + 1);
            lfb_read_state(L, -1, s->sys, ys + (size_t)j * np, NULL, NULL, what);
            lua_pop(L, 1);
        }
        y0 = ys; /* anchored on the stack until the stepper copied it */
    }
    s = lfb_checksystem(L, 2); /* neither finalized while the options were read */
    if (lua_type(L, 1) == LUA_TUSERDATA) lfb_checkusermethod(L, 1, "lf.integrator");
    it->st = lf_stepper_new_lanes(m, s->sys, B, y0, t0, &o, &e);
    if (!it->st) return lfb_error(L, &e);
    lua_getfield(L, 3, "dense");
    if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
        return luaL_error(L, "lf.integrator: option 'dense' must be true or false, got %s", lfb_typename(L, -1));
    if (lua_toboolean(L, -1) && lf_stepper_set_dense(it->st, 1) != LF_OK) {
        e = *lf_stepper_error(it->st);
        return lfb_error(L, &e);
    }
    lua_settop(L, 4); /* the integrator */
    /* a host that handles SIGINT (the lieflow executable) registers its flag */
    lf_stepper_set_cancel(it->st, lfb_cancel_flag(L));
    return 1;
}

static int it_gc(lua_State *L)
{
    lfb_integrator *it = luaL_checkudata(L, 1, LFB_INTEGRATOR);
    check_not_busy(L, it); /* __close from a callback; __gc cannot run while a step holds it */
    if (it->st) lf_stepper_free(it->st);
    it->st = NULL;
    if (it->mon.ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, it->mon.ref);
    it->mon.ref = LUA_NOREF;
    if (!it->holds) return 0;
    it->holds = 0;
    lua_getiuservalue(L, 1, 1);
    lfb_system *s = luaL_testudata(L, -1, LFB_SYSTEM);
    if (s) lfb_system_release(L, s);
    lua_getiuservalue(L, 1, 2);
    lfb_method_release(L, -1);
    return 0;
}

static void stepper_error(lua_State *L, lfb_integrator *it)
{
    const lf_error *e = lf_stepper_error(it->st);
    if (e->code == LF_EINTR) luaL_error(L, "interrupted: %s", e->msg);
    lfb_error(L, e);
}

/* A system's controller (shared/forcing.c): called when the phase is 0, its output held for `every`
 * steps (a zero-order hold). An error stops before the step, the state kept, naming the controller. */
static int control(lua_State *L, lfb_integrator *it, lfb_system *s)
{
    if (it->control_phase != 0) return LF_OK;
    lf_error e;
    it->busy = 0; /* the controller may read the integrator (not step it: its system is busy) */
    int rc = lfb_controller_update(L, s, lf_stepper_time(it->st), lf_stepper_state(it->st), &e);
    it->busy = 1;
    if (rc != LF_OK) {
        it->busy = 0;
        lfb_error(L, &e);
    }
    lf_stepper_forcing_changed(it->st);
    return LF_OK;
}

/* n steps (max_steps, T: lf_stepper_advance's; n < 0: lf_stepper_step of -n steps), in pieces that end
 * where the controller is due */
static int controlled(lua_State *L, lfb_integrator *it, lfb_system *s, double h, long n, double T, int advance)
{
    const long k = s->control_every;
    lf_stepper_stats st0, st1;
    int rc = LF_OK;
    while (rc == LF_OK && n > 0) {
        control(L, it, s);
        const long m = k - it->control_phase < n ? k - it->control_phase : n;
        lf_stepper_get_stats(it->st, &st0);
        rc = advance ? lf_stepper_advance(it->st, T, h, m) : lf_stepper_step(it->st, h, m);
        lf_stepper_get_stats(it->st, &st1);
        const long taken = st1.steps - st0.steps;
        it->control_phase = (it->control_phase + taken) % k;
        n -= taken;
        if (advance && (taken < m || lf_stepper_time(it->st) == T)) break;
    }
    return rc;
}

static void stepn(lua_State *L, lfb_integrator *it, double h, lua_Integer n)
{
    check_not_busy(L, it);
    lfb_system *s = it_system(L, 1);
    it->mon.L = L;
    it->busy = 1; /* no Lua error can cross lf_stepper_step: the callbacks run under lua_pcall */
    int rc = s->control_every ? controlled(L, it, s, h, (long)n, 0, 0) : lf_stepper_step(it->st, h, (long)n);
    it->busy = 0;
    if (rc != LF_OK) stepper_error(L, it);
}

/* it:step([n]) : n steps of size h (adaptive methods: n accepted steps of their own size). */
static int it_step(lua_State *L)
{
    lfb_integrator *it = checkit(L, 1);
    lua_Integer n = luaL_optinteger(L, 2, 1);
    luaL_argcheck(L, n >= 0, 2, "number of steps must be >= 0");
    const lf_method_info *mi = lf_method_get_info(lf_stepper_method(it->st));
    stepn(L, it, mi->adaptive ? copysign(INFINITY, it->h) : it->h, n);
    lua_settop(L, 1);
    return 1;
}

/* it:advance_to(T [, max_steps]): steps of h while they fit, then one shorter step landing on T
 * exactly; with max_steps, at most that many steps (it.t < T if they did not reach T). */
static int it_advance_to(lua_State *L)
{
    lfb_integrator *it = checkit(L, 1);
    check_not_busy(L, it);
    double T = lfb_checkfinite(L, 2, "argument #1 to 'advance_to'");
    lua_Integer nmax = luaL_optinteger(L, 3, LUA_MAXINTEGER);
    luaL_argcheck(L, nmax >= 0, 3, "the number of steps must be >= 0");
    lfb_system *s = it_system(L, 1);
    it->mon.L = L;
    it->busy = 1;
    const long max_steps = nmax > LONG_MAX ? LONG_MAX : (long)nmax;
    int rc = s->control_every ? controlled(L, it, s, it->h, max_steps, T, 1)
                              : lf_stepper_advance(it->st, T, it->h, max_steps);
    it->busy = 0;
    if (rc != LF_OK) stepper_error(L, it);
    lua_settop(L, 1);
    return 1;
}

/* Lane j (1-based argument idx) of an integrator with lanes into y (np doubles). */
static void read_lane(lua_State *L, lfb_integrator *it, int idx, double *y)
{
    const int B = lf_stepper_lanes(it->st);
    lua_Integer j = luaL_checkinteger(L, idx);
    if (j < 1 || j > B) luaL_error(L, "lane %d of %d (lanes count from 1)", (int)j, B);
    lf_stepper_get_lane(it->st, (int)j - 1, y);
}

/* it:energy() -> E; with lanes it:energy(j) -> E of lane j */
static int it_energy(lua_State *L)
{
    lfb_integrator *it = lua_isnoneornil(L, 2) ? checkone(L, 1, "it:energy()") : checkit(L, 1);
    const lf_system *sys = lf_stepper_system(it->st);
    const double *y = lf_stepper_state(it->st);
    if (!lua_isnoneornil(L, 2)) {
        double *yl = lua_newuserdatauv(L, (size_t)lf_system_nparam(sys) * sizeof(double), 0);
        read_lane(L, it, 2, yl);
        y = yl;
    }
    double E;
    lf_error e;
    if (lf_system_energy(sys, y, &E, &e) != LF_OK) return lfb_error(L, &e);
    lua_pushnumber(L, E);
    return 1;
}

/* it:lane(j) -> {t=, <fields>=} of lane j (1-based) of an integrator with lanes (copies). */
static int it_lane(lua_State *L)
{
    lfb_integrator *it = checkit(L, 1);
    const lf_system *sys = lf_stepper_system(it->st);
    double *y = lua_newuserdatauv(L, (size_t)lf_system_nparam(sys) * sizeof(double), 0);
    read_lane(L, it, 2, y);
    lfb_push_state(L, sys, lf_stepper_time(it->st), y);
    return 1;
}

/* it:set_lane(j, {<fields>=}) (fields omitted keep the lane's values) */
static int it_set_lane(lua_State *L)
{
    lfb_integrator *it = checkit(L, 1);
    check_not_busy(L, it);
    lua_settop(L, 3);
    const lf_system *sys = lf_stepper_system(it->st);
    double *y = lua_newuserdatauv(L, (size_t)lf_system_nparam(sys) * sizeof(double), 0);
    read_lane(L, it, 2, y);
    lfb_read_state(L, 3, sys, y, NULL, NULL, "set_lane");
    it = checkit(L, 1);
    if (lf_stepper_set_lane(it->st, (int)lua_tointeger(L, 2) - 1, y) != LF_OK)
        return lfb_error(L, lf_stepper_error(it->st));
    lua_settop(L, 1);
    return 1;
}

/* it:state() -> {t=, <fields>=} (copies). */
static int it_state(lua_State *L)
{
    lfb_integrator *it = checkone(L, 1, "it:state()");
    lfb_push_state(L, lf_stepper_system(it->st), lf_stepper_time(it->st), lf_stepper_state(it->st));
    return 1;
}

/* it:dense(t [, into]) -> the state at t within the last step (an integrator made with dense = true): the
 * fields of it:state(), from the Hermite interpolant in the Lie algebra (core/method/dense.c); with into
 * (an integrator of the same system), that integrator set to the state (no table made) and returned */
static int it_dense(lua_State *L)
{
    lfb_integrator *it = checkone(L, 1, "it:dense(t)");
    const double t = lfb_checkfinite(L, 2, "it:dense: argument #1 (t)");
    lfb_integrator *into = lua_isnoneornil(L, 3) ? NULL : checkone(L, 3, "it:dense(t, into)");
    const lf_system *sys = lf_stepper_system(it->st);
    if (into && lf_stepper_system(into->st) != sys)
        return luaL_error(L, "it:dense: argument #2 (into) must be an integrator of the same system");
    if (into) check_not_busy(L, into);
    double *y = lua_newuserdatauv(L, (size_t)lf_system_nparam(sys) * sizeof(double), 0);
    if (lf_stepper_dense(it->st, t, y) != LF_OK) {
        const lf_error *e = lf_stepper_error(it->st);
        return luaL_error(L, "it:dense: %s", e->msg);
    }
    if (into) {
        if (lf_stepper_set_state(into->st, y, t) != LF_OK) return lfb_error(L, lf_stepper_error(into->st));
        lua_settop(L, 3);
        return 1;
    }
    lfb_push_state(L, sys, t, y);
    return 1;
}

/* it:set_state{t=, <fields>= [, momentum= for rigid bodies, p= (= m v) for bodies with a mass]}
 * (fields omitted keep their values). Every input is read and converted before the stepper is touched. */
static int it_set_state(lua_State *L)
{
    lfb_integrator *it = checkone(L, 1, "set_state");
    check_not_busy(L, it);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    const lf_system *sys = lf_stepper_system(it->st);
    const int np = lf_system_nparam(sys), nb = lf_rigid_nbodies(sys);
    double *y = lua_newuserdatauv(L, (size_t)np * sizeof(double), 0);
    memcpy(y, lf_stepper_state(it->st), (size_t)np * sizeof(double));
    double t = lf_stepper_time(it->st);
    const double *mass = lf_rigid_masses(sys);
    static const char *const rigid_extra[] = {"momentum", NULL}, *moving_extra[] = {"momentum", "p", NULL};
    lfb_read_state(L, 2, sys, y, &t, mass ? moving_extra : nb ? rigid_extra : NULL, "set_state");
    if (mass && lua_getfield(L, 2, "p") != LUA_TNIL) {
        if (lua_getfield(L, 2, "v") != LUA_TNIL) return luaL_error(L, "set_state: give either 'v' or 'p', not both");
        lua_pop(L, 1);
        lfb_read_field(L, -1, sys, lf_system_find_field(sys, "v"), y, "set_state: field 'p'");
        for (int i = 0; i < 3 * nb; i++) y[15 * nb + i] /= mass[i / 3]; /* v = p / m, correctly rounded */
    }
    lua_settop(L, 3);
    if (nb && lua_getfield(L, 2, "momentum") != LUA_TNIL) {
        if (lua_getfield(L, 2, "omega") != LUA_TNIL)
            return luaL_error(L, "set_state: give either 'omega' or 'momentum', not both");
        lua_pop(L, 1);
        lfb_read_field(L, -1, sys, lf_system_find_field(sys, "omega"), y, "set_state: field 'momentum'");
        const double *J = lf_rigid_inertia(sys);
        for (int i = 0; i < 3 * nb; i++) y[9 * nb + i] /= J[i];
    }
    /* the stepper is checked again: a callback run by a metamethod above may have closed it */
    it = checkit(L, 1);
    if (lf_stepper_set_state(it->st, y, t) != LF_OK) return lfb_error(L, lf_stepper_error(it->st));
    lua_settop(L, 1);
    return 1;
}

/* it:checkpoint() -> {t=, t_comp=, next_h=, h=, steps=, [rho=, monitor0=,] <fields>=} (what it:restore takes back). */
static int it_checkpoint(lua_State *L)
{
    lfb_integrator *it = checkone(L, 1, "checkpoint");
    const lf_stepper *st = it->st;
    lf_stepper_stats stats;
    lf_stepper_get_stats(st, &stats);
    lfb_push_state(L, lf_stepper_system(st), lf_stepper_time(st), lf_stepper_state(st));
    lua_pushnumber(L, lf_stepper_time_compensation(st));
    lua_setfield(L, -2, "t_comp");
    lua_pushnumber(L, lf_stepper_next_h(st));
    lua_setfield(L, -2, "next_h");
    lua_pushnumber(L, it->h);
    lua_setfield(L, -2, "h");
    lua_pushinteger(L, stats.steps);
    lua_setfield(L, -2, "steps");
    double h_proc;
    const double *z = lf_stepper_kernel_state(st, &h_proc);
    if (h_proc > 0) { /* a processed method: its kernel's variable, for a bit-for-bit resume */
        lfb_push_state(L, lf_stepper_system(st), lf_stepper_time(st), z);
        lua_setfield(L, -2, "kernel");
        lua_pushnumber(L, h_proc);
        lua_setfield(L, -2, "h_proc");
    }
    lfb_system *s = it_system(L, 1);
    if (s->control_every) { /* a controller's held output and the steps since its last call */
        lfb_push_control(L, s);
        lua_setfield(L, -2, "control");
        lua_pushinteger(L, it->control_phase);
        lua_setfield(L, -2, "control_phase");
    }
    double work, heat;
    lf_stepper_get_work(st, &work, &heat);
    lua_pushnumber(L, work);
    lua_setfield(L, -2, "work");
    lua_pushnumber(L, heat);
    lua_setfield(L, -2, "heat");
    const lf_thermostat *th = lf_stepper_thermostat(st);
    if (th) { /* the thermostat (lf.load makes its integrator with it) and its noise counter */
        lua_pushinteger(L, (lua_Integer)lf_stepper_noise_step(st));
        lua_setfield(L, -2, "noise_step");
        lua_createtable(L, 0, 5);
        lua_pushliteral(L, "langevin");
        lua_setfield(L, -2, "kind");
        lua_pushnumber(L, th->kT);
        lua_setfield(L, -2, "T");
        lua_pushnumber(L, th->gamma);
        lua_setfield(L, -2, "gamma");
        lua_pushnumber(L, th->gamma_rot);
        lua_setfield(L, -2, "gamma_rot");
        lua_pushinteger(L, (lua_Integer)th->seed);
        lua_setfield(L, -2, "seed");
        lua_setfield(L, -2, "thermostat");
    }
    if (lf_stepper_adaptive(st)) {
        lua_pushnumber(L, lf_stepper_rho(st));
        lua_setfield(L, -2, "rho");
        lua_pushnumber(L, lf_stepper_monitor0(st));
        lua_setfield(L, -2, "monitor0");
    }
    return 1;
}

/* it:restore(checkpoint): the state, time, its compensation, h and the adaptive step, bit for bit. */
static int it_restore(lua_State *L)
{
    lfb_integrator *it = checkone(L, 1, "restore");
    check_not_busy(L, it);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    const lf_system *sys = lf_stepper_system(it->st);
    const int np = lf_system_nparam(sys);
    double *y = lua_newuserdatauv(L, (size_t)np * sizeof(double), 0);
    memcpy(y, lf_stepper_state(it->st), (size_t)np * sizeof(double));
    double t = lf_stepper_time(it->st);
    static const char *const extra[] = {"t_comp",   "next_h", "h",       "steps",         "rho",
                                        "monitor0", "kernel", "h_proc",  "noise_step",    "thermostat",
                                        "work",     "heat",   "control", "control_phase", NULL};
    lfb_read_state(L, 2, sys, y, &t, extra, "restore");
    /* a processed method's kernel variable (it:checkpoint of a processed run) */
    const double h_proc = opt_number(L, 2, "h_proc", 0);
    double *z = NULL;
    if (lua_getfield(L, 2, "kernel") != LUA_TNIL) {
        if (!lua_istable(L, -1)) return luaL_error(L, "restore: kernel must be a state table, got %s", luaL_typename(L, -1));
        if (!(h_proc > 0)) return luaL_error(L, "restore: a kernel state needs h_proc > 0, got %f", h_proc);
        z = lua_newuserdatauv(L, (size_t)np * sizeof(double), 0);
        memcpy(z, y, (size_t)np * sizeof(double));
        double tk = t;
        lfb_read_state(L, -2, sys, z, &tk, NULL, "restore: kernel");
        lua_replace(L, -2); /* keep the userdata (z) alive in the slot of the table */
    } else if (h_proc != 0)
        return luaL_error(L, "restore: h_proc=%f without a kernel state", h_proc);
    const double t_comp = opt_number(L, 2, "t_comp", 0), next_h = opt_number(L, 2, "next_h", 0);
    const double h = opt_number(L, 2, "h", it->h);
    if (h == 0) return luaL_error(L, "restore: h must be nonzero");
    const double steps = opt_number(L, 2, "steps", 0);
    if (!(steps >= 0 && steps <= 0x1p62 && steps == floor(steps)))
        return luaL_error(L, "restore: steps must be an integer >= 0, got %f", steps);
    const double rho = opt_number(L, 2, "rho", 1), q0 = opt_number(L, 2, "monitor0", 0);
    const double noise = opt_number(L, 2, "noise_step", 0), work = opt_number(L, 2, "work", 0),
                 heat = opt_number(L, 2, "heat", 0);
    if (!(noise >= 0 && noise <= 0x1p62 && noise == floor(noise)))
        return luaL_error(L, "restore: noise_step must be an integer >= 0, got %f", noise);
    it = checkit(L, 1);
    if (lf_stepper_restore(it->st, y, t, t_comp, next_h) != LF_OK) return lfb_error(L, lf_stepper_error(it->st));
    if (lf_stepper_adaptive(it->st) && lf_stepper_set_rho(it->st, rho, q0) != LF_OK)
        return lfb_error(L, lf_stepper_error(it->st));
    if (z && lf_stepper_set_kernel_state(it->st, z, h_proc) != LF_OK) return lfb_error(L, lf_stepper_error(it->st));
    if (lf_stepper_set_noise_step(it->st, (unsigned long long)noise) != LF_OK)
        return lfb_error(L, lf_stepper_error(it->st));
    if (lf_stepper_set_work(it->st, work, heat) != LF_OK) return lfb_error(L, lf_stepper_error(it->st));
    lfb_system *s = it_system(L, 1);
    if (s->control_every) { /* the held output and the phase of a controller (absent: called at the next step) */
        const double phase = opt_number(L, 2, "control_phase", 0);
        if (!(phase >= 0 && phase < s->control_every && phase == floor(phase)))
            return luaL_error(L, "restore: control_phase must be an integer 0 .. %d, got %f", s->control_every - 1,
                              phase);
        if (lua_getfield(L, 2, "control") != LUA_TNIL) lfb_controller_set(L, s, lua_gettop(L), "restore: control");
        else if (phase != 0) return luaL_error(L, "restore: control_phase %f without the held output 'control'", phase);
        lua_pop(L, 1);
        it->control_phase = (long)phase;
        lf_stepper_forcing_changed(it->st);
    }
    lf_stepper_stats stats = {0};
    lf_stepper_get_stats(it->st, &stats);
    stats.steps = (long)steps;
    lf_stepper_set_stats(it->st, &stats);
    it->h = h;
    lua_settop(L, 1);
    return 1;
}

/* it:observe() -> t, then the values of every trajectory column (it:columns()) */
static int it_observe(lua_State *L)
{
    lfb_integrator *it = checkone(L, 1, "observe");
    lua_pushnumber(L, lf_stepper_time(it->st));
    return 1 + lfb_push_columns(L, lf_stepper_system(it->st), lf_stepper_time(it->st), lf_stepper_state(it->st));
}

/* it:error(state) -> {field = distance to the state, ...} */
static int it_error(lua_State *L)
{
    lfb_integrator *it = checkone(L, 1, "it:error");
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    const lf_system *sys = lf_stepper_system(it->st);
    const int np = lf_system_nparam(sys);
    double *ref = lua_newuserdatauv(L, (size_t)np * sizeof(double), 0);
    memcpy(ref, lf_stepper_state(it->st), (size_t)np * sizeof(double));
    static const char *const extra[] = {"momentum", "spatial_momentum", "manifold_defect", NULL};
    lfb_read_state(L, 2, sys, ref, NULL, extra, "it:error");
    it = checkit(L, 1);
    lfb_push_errors(L, sys, lf_stepper_state(it->st), ref);
    return 1;
}

static const luaL_Reg it_methods[] = {{"step", it_step},
                                      {"advance_to", it_advance_to},
                                      {"energy", it_energy},
                                      {"state", it_state},
                                      {"dense", it_dense},
                                      {"set_state", it_set_state},
                                      {"observe", it_observe},
                                      {"error", it_error},
                                      {"checkpoint", it_checkpoint},
                                      {"restore", it_restore},
                                      {"lane", it_lane},
                                      {"set_lane", it_set_lane},
                                      {NULL, NULL}};

static int it_columns(lua_State *L)
{
    checkit(L, 1);
    lua_getiuservalue(L, 1, 1);
    lua_getfield(L, -1, "columns");
    lua_insert(L, -2);
    lua_call(L, 1, 1);
    return 1;
}

static const char *const stat_names[] = {"steps", "rejected", "f_evals", "torque_evals", "newton_iters", "jac_evals",
                                         "constraint_position", "constraint_velocity", NULL};

static int is_observable(const lf_system *sys, const char *k)
{
    for (int i = 0; i < lf_system_nobservables(sys); i++)
        if (strcmp(lf_system_observable(sys, i)->name, k) == 0) return 1;
    return 0;
}

static int it_index(lua_State *L)
{
    lfb_integrator *it = checkit(L, 1);
    const lf_stepper *st = it->st;
    const lf_system *sys = lf_stepper_system(st);
    const char *k = luaL_checkstring(L, 2);
    lf_stepper_stats stats;
    lf_stepper_get_stats(st, &stats);
    const lf_field *f;
    if (strcmp(k, "t") == 0) lua_pushnumber(L, lf_stepper_time(st));
    else if (strcmp(k, "h") == 0) lua_pushnumber(L, it->h);
    else if (lf_stepper_lanes(st) > 1 && lf_system_find_field(sys, k))
        return luaL_error(L, "it.%s: this integrator steps %d lanes; read lane j with it:lane(j).%s", k,
                          lf_stepper_lanes(st), k);
    else if ((f = lf_system_find_field(sys, k))) lfb_push_field(L, sys, f, lf_stepper_state(st));
    else if (strcmp(k, "method") == 0) lfb_push_method_info(L, lf_stepper_method(st), "C");
    else if (strcmp(k, "name") == 0) lua_pushstring(L, lf_method_get_info(lf_stepper_method(st))->name);
    else if (strcmp(k, "system") == 0) lua_getiuservalue(L, 1, 1);
    else if (strcmp(k, "steps") == 0) lua_pushinteger(L, stats.steps);
    else if (strcmp(k, "rejected") == 0) lua_pushinteger(L, stats.rejected);
    else if (strcmp(k, "f_evals") == 0 || strcmp(k, "torque_evals") == 0) lua_pushinteger(L, stats.f_evals);
    else if (strcmp(k, "newton_iters") == 0) lua_pushinteger(L, stats.newton_iters);
    else if (strcmp(k, "jac_evals") == 0) lua_pushinteger(L, stats.jac_evals);
    else if (strcmp(k, "constraint_position") == 0) lua_pushnumber(L, stats.constraint_position);
    else if (strcmp(k, "constraint_velocity") == 0) lua_pushnumber(L, stats.constraint_velocity);
    else if (strcmp(k, "next_h") == 0) lua_pushnumber(L, lf_stepper_next_h(st));
    else if (strcmp(k, "last_h") == 0) lua_pushnumber(L, lf_stepper_last_h(st));
    else if (strcmp(k, "rho") == 0) lf_stepper_adaptive(st) ? lua_pushnumber(L, lf_stepper_rho(st)) : lua_pushnil(L);
    else if (strcmp(k, "adaptive") == 0) lua_pushboolean(L, lf_stepper_adaptive(st));
    else if (strcmp(k, "lanes") == 0) lua_pushinteger(L, lf_stepper_lanes(st));
    else if (strcmp(k, "work") == 0 || strcmp(k, "heat") == 0) { /* of the forcing, from the thermostat */ double w, q;
        lf_stepper_get_work(st, &w, &q);
        lua_pushnumber(L, k[0] == 'w' ? w : q);
    } else if (strcmp(k, "thermostatted") == 0) lua_pushboolean(L, lf_stepper_thermostat(st) != NULL);
    else if (strcmp(k, "columns") == 0) lua_pushcfunction(L, it_columns);
    else {
        luaL_getmetatable(L, LFB_INTEGRATOR);
        lua_getfield(L, -1, "methods");
        if (lua_getfield(L, -1, k) == LUA_TNIL) {
            lua_pop(L, 3);
            if (lf_stepper_lanes(st) > 1 && is_observable(sys, k))
                return luaL_error(L, "it.%s: this integrator steps %d lanes; read lane j with it:lane(j) and "
                                     "it:energy(j)", k, lf_stepper_lanes(st));
            if (!lfb_push_observable(L, sys, k, lf_stepper_time(st), lf_stepper_state(st))) lua_pushnil(L);
        }
    }
    return 1;
}

/* The names a REPL may complete after "it." / "it:". */
static int it_fields(lua_State *L)
{
    lfb_integrator *it = checkit(L, 1);
    const lf_system *sys = lf_stepper_system(it->st);
    lua_settop(L, 1);
    lua_newtable(L); /* 2: the names, each once (the observable energy and the method it:energy) */
    lua_newtable(L); /* 3: those in it */
    static const char *const fixed[] = {"t",      "h",      "method", "name",          "system",
                                        "next_h", "last_h", "rho",    "adaptive",      "columns",
                                        "lanes",  "work",   "heat",   "thermostatted", NULL};
    for (int i = 0; fixed[i]; i++) lfb_list_add_once(L, 2, 3, fixed[i]);
    for (int i = 0; stat_names[i]; i++) lfb_list_add_once(L, 2, 3, stat_names[i]);
    for (int i = 0; i < lf_system_nfields(sys); i++) lfb_list_add_once(L, 2, 3, lf_system_field(sys, i)->name);
    for (int i = 0; i < lf_system_nobservables(sys); i++)
        lfb_list_add_once(L, 2, 3, lf_system_observable(sys, i)->name);
    /* the methods table of the metatable: the C methods and those added in Lua (it:save) */
    luaL_getmetatable(L, LFB_INTEGRATOR);
    lua_getfield(L, -1, "methods");
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING) lfb_list_add_once(L, 2, 3, lua_tostring(L, -1));
    }
    lua_settop(L, 2);
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
    lfb_integrator *it = luaL_checkudata(L, 1, LFB_INTEGRATOR);
    if (!it->st) {
        lua_pushstring(L, "lf.integrator (closed)");
        return 1;
    }
    if (lf_stepper_lanes(it->st) > 1)
        lua_pushfstring(L, "lf.integrator(%s, h = %f, t = %f, %d lanes)", lf_method_get_info(lf_stepper_method(it->st))->name,
                        it->h, lf_stepper_time(it->st), lf_stepper_lanes(it->st));
    else
        lua_pushfstring(L, "lf.integrator(%s, h = %f, t = %f)", lf_method_get_info(lf_stepper_method(it->st))->name, it->h,
                        lf_stepper_time(it->st));
    return 1;
}

/* ---------------------------------------------------------------- reference solutions */
/* core.reference(system, T, {rtol=, atol=, h0=, max_steps=, at={...}, t0=, <field>=...}) -> state
 * {t=, <fields>=, manifold_defect=} (with `at`: an array of such states, one per time). */
static int l_reference(lua_State *L)
{
    lfb_system *s = lfb_checksystem(L, 1);
    const lf_system *sys = s->sys;
    double T = lfb_checkfinite(L, 2, "argument #2 'T' to 'lf.reference'");
    if (lua_isnoneornil(L, 3)) {
        lua_settop(L, 2);
        lua_newtable(L);
    }
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_settop(L, 3);
    lfb_hold(L, 1, 0); /* the options' metamethods may finalize the system */
    lf_reference_opts o = {opt_number(L, 3, "rtol", 1e-13), opt_number(L, 3, "atol", 1e-13), opt_number(L, 3, "h0", 1e-3),
                           0, lfb_cancel_flag(L)};
    if (o.rtol < 0 || o.atol < 0 || o.h0 < 0) /* 0 selects the default */
        return luaL_error(L, "lf.reference: options rtol, atol and h0 must not be negative, got %f, %f, %f", o.rtol,
                          o.atol, o.h0);
    double ms = opt_number(L, 3, "max_steps", 0);
    if (!(ms >= 0 && ms <= 1e12)) return luaL_error(L, "lf.reference: max_steps must be in 0 .. 1e12, got %f", ms);
    o.max_steps = (unsigned long)ms;
    const int np = lf_system_nparam(sys);
    double *y0 = lua_newuserdatauv(L, (size_t)np * sizeof(double), 0);
    memcpy(y0, lf_system_initial(sys), (size_t)np * sizeof(double));
    double t0 = 0;
    static const char *const extra[] = {"rtol", "atol", "h0", "max_steps", "at", "t0", NULL};
    lfb_read_state(L, 3, sys, y0, NULL, extra, "lf.reference");
    t0 = opt_number(L, 3, "t0", 0);
    int at_type = lua_getfield(L, 3, "at"), has_at = at_type == LUA_TTABLE;
    if (!has_at && at_type != LUA_TNIL)
        return luaL_error(L, "lf.reference: option 'at' must be an array of times, got %s", lfb_typename(L, -1));
    const int at_idx = lua_gettop(L);
    lua_Integer nat = has_at ? (lua_Integer)lua_rawlen(L, at_idx) : 1;
    if (nat < 1) return luaL_error(L, "lf.reference: option 'at' must list at least one time");
    if (nat > INT_MAX / 16 || (size_t)nat > ((size_t)1 << 40) / ((size_t)np + 1))
        return luaL_error(L, "lf.reference: option 'at' lists too many times (%I)", nat);
    const int n = (int)nat;
    double *times = lua_newuserdatauv(L, (size_t)n * (np + 1) * sizeof(double), 0), *out = times + n;
    for (int k = 0; k < n; k++) {
        if (has_at) {
            lua_rawgeti(L, at_idx, k + 1);
            times[k] = lfb_checkfinite(L, -1, "lf.reference: option 'at' element");
            lua_pop(L, 1);
        } else
            times[k] = T;
    }
    lf_error e;
    double defect;
    lfb_checksystem(L, 1); /* not finalized while the options were read */
    if (lf_reference_solve(sys, y0, t0, times, n, out, &defect, &o, &e) != LF_OK) {
        if (e.code == LF_EINTR) return luaL_error(L, "interrupted: %s", e.msg);
        if (strncmp(e.msg, "reference: ", 11) == 0) return luaL_error(L, "lf.reference: %s", e.msg + 11);
        return lfb_error_in(L, "lf.reference", &e);
    }
    if (has_at) lua_createtable(L, n, 0);
    for (int k = 0; k < n; k++) {
        lfb_push_state(L, sys, times[k], out + (size_t)np * k);
        lua_pushnumber(L, lf_manifold_defect(lf_system_manifold(sys), out + (size_t)np * k));
        lua_setfield(L, -2, "manifold_defect");
        if (has_at) lua_rawseti(L, -2, k + 1);
    }
    (void)defect;
    return 1;
}

void lfb_open_integrators(lua_State *L)
{
    luaL_newmetatable(L, LFB_INTEGRATOR);
    const luaL_Reg meta[] = {{"__gc", it_gc},           {"__close", it_gc},       {"__index", it_index},
                             {"__newindex", it_newindex}, {"__tostring", it_tostring}, {"__lf_fields", it_fields},
                             {NULL, NULL}};
    luaL_setfuncs(L, meta, 0);
    luaL_newlib(L, it_methods);
    lua_setfield(L, -2, "methods");
    lua_pop(L, 1);
    const luaL_Reg fns[] = {{"integrator", l_integrator}, {"reference", l_reference},
                            {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
}
