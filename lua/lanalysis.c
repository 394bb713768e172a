/* lieflow Lua binding — the C helpers of scripts/lieflow/analysis.lua and run.lua:
 *   core.fit_linear(xs, ys)  -> slope, intercept, slope_stderr, resid_std   (core/analysis/analysis.h, GSL)
 *   core.isatty(fd)          -> boolean (is file descriptor fd a terminal: progress lines)
 *   core.wall_time()         -> seconds of a monotonic clock (run times, steps/s)
 *   core.mkdir_p(path)       -> true (mkdir -p: creates missing parents; error if impossible) */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "lbind.h"

/* Read the array at idx (a table of n >= 0 numbers) into a userdata buffer left on the stack. */
static double *read_array(lua_State *L, int idx, const char *fn, const char *argname, lua_Integer *n)
{
    if (lua_type(L, idx) != LUA_TTABLE)
        luaL_error(L, "%s: argument '%s' must be an array of numbers, got %s", fn, argname, lfb_typename(L, idx));
    *n = luaL_len(L, idx);
    double *a = lua_newuserdatauv(L, (size_t)(*n > 0 ? *n : 1) * sizeof(double), 0);
    for (lua_Integer i = 1; i <= *n; i++) {
        int ok;
        lua_geti(L, idx, i);
        double v = lua_tonumberx(L, -1, &ok);
        if (!ok)
            luaL_error(L, "%s: %s[%d] must be a number, got %s", fn, argname, (int)i, lfb_typename(L, -1));
        if (!isfinite(v)) luaL_error(L, "%s: %s[%d] is not finite (%f)", fn, argname, (int)i, v);
        a[i - 1] = v;
        lua_pop(L, 1);
    }
    return a;
}

/* core.fit_linear(xs, ys) -> slope, intercept, slope_stderr, resid_std (least squares). */
static int l_fit_linear(lua_State *L)
{
    const char *fn = "fit_linear";
    lua_Integer nx, ny;
    lua_settop(L, 2); /* the scratch userdata of xs must not take the place of a missing ys */
    double *x = read_array(L, 1, fn, "xs", &nx);
    double *y = read_array(L, 2, fn, "ys", &ny);
    if (nx != ny) return luaL_error(L, "%s: xs and ys differ in length (%d and %d)", fn, (int)nx, (int)ny);
    if (nx < 2) return luaL_error(L, "%s: at least 2 points needed, got %d", fn, (int)nx);
    double slope, icpt, se, rs;
    int st = lf_fit_linear(x, y, (size_t)nx, &slope, &icpt, &se, &rs);
    if (st == LF_EDOMAIN) return luaL_error(L, "%s: all %d x values are equal (%f): slope undefined", fn, (int)nx, x[0]);
    if (st != LF_OK) return luaL_error(L, "%s: invalid input (%s)", fn, lf_status_name(st));
    lua_pushnumber(L, slope);
    lua_pushnumber(L, icpt);
    lua_pushnumber(L, se);
    lua_pushnumber(L, rs);
    return 4;
}

/* core.isatty(fd) -> boolean */
static int l_isatty(lua_State *L)
{
    lua_Integer fd = luaL_checkinteger(L, 1);
    luaL_argcheck(L, fd >= 0 && fd <= 1 << 20, 1, "file descriptor out of range");
    lua_pushboolean(L, isatty((int)fd) == 1);
    return 1;
}

/* core.wall_time() -> seconds (CLOCK_MONOTONIC, arbitrary origin) */
static int l_wall_time(lua_State *L)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec);
    return 1;
}

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* core.mkdir_p(path): create the directory and its missing parents (mode 0777 & ~umask). */
static int l_mkdir_p(lua_State *L)
{
    size_t len;
    const char *path = luaL_checklstring(L, 1, &len);
    if (len == 0) return luaL_error(L, "mkdir_p: empty path");
    if (memchr(path, '\0', len)) return luaL_error(L, "mkdir_p: path contains a NUL byte");
    char *buf = lua_newuserdatauv(L, len + 1, 0);
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return luaL_error(L, "mkdir_p: cannot create directory '%s': %s", buf, strerror(errno));
        if (!is_dir(buf)) return luaL_error(L, "mkdir_p: '%s' exists and is not a directory", buf);
        buf[i] = c;
    }
    lua_pushboolean(L, 1);
    return 1;
}

void lfb_open_analysis(lua_State *L)
{
    const luaL_Reg fns[] = {{"fit_linear", l_fit_linear},
                            {"isatty", l_isatty},
                            {"wall_time", l_wall_time},
                            {"mkdir_p", l_mkdir_p},
                            {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
}
