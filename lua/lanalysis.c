/* lieflow Lua binding — the C helpers of scripts/lieflow/analysis.lua, run.lua and plot.lua:
 *   core.fit_linear(xs, ys)  -> slope, intercept, slope_stderr, resid_std   (core/analysis/analysis.h, GSL;
 *                               slope_stderr is nil for 2 points, where it is undefined)
 *   core.isatty(fd)          -> boolean (is file descriptor fd a terminal: progress lines)
 *   core.wall_time()         -> seconds of a monotonic clock (run times, steps/s)
 *   core.mkdir_p(path)       -> true (mkdir -p: creates missing parents; error if impossible)
 *   core.atomic_open(path, who) -> f: a file that appears at path only when complete.
 *       f:write(s, ...), f:commit() -> path, f:abort(); __close and __gc abort an uncommitted file.
 *       A regular file (or a new one) is written to a temporary file beside it and renamed over
 *       it by commit (the old contents stay until then; the mode of an existing file is kept;
 *       a symbolic link is followed); anything else that exists (/dev/full, a FIFO, a terminal)
 *       is written in place. Every error names `who`, the path and the OS error ("No space left
 *       on device") and removes the temporary file. Paths with NUL bytes are errors.
 *   core.spawn(argv, input, timeout) -> status, code, stdout, stderr: runs argv[1] (PATH lookup,
 *       no shell) with `input` on its stdin and captures stdout and stderr (at most 64 MiB each),
 *       no temporary files. status "exited" (code = exit status), "signaled" (code = signal) or
 *       "timeout" (the child ran longer than `timeout` seconds, default none: killed). The lieflow
 *       executable's Ctrl-C flag stops the child (SIGTERM) and raises "interrupted". */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "lbind.h"

/* At most this many numbers in an array argument (2^28 doubles = 2 GiB of scratch). */
#define MAX_ARRAY ((lua_Integer)1 << 28)

/* Read the array at idx (a table of n >= 0 numbers) into a userdata buffer left on the stack.
 * Read raw: the length is the table's own border (lua_rawlen) and the elements its own
 * (lua_rawgeti), so a __len or __index metamethod can neither lie about the size of the buffer
 * nor run (and close or collect things) while we read. */
static double *read_array(lua_State *L, int idx, const char *fn, const char *argname, lua_Integer *n)
{
    if (lua_type(L, idx) != LUA_TTABLE)
        luaL_error(L, "%s: argument '%s' must be an array of numbers, got %s", fn, argname, lfb_typename(L, idx));
    size_t len = lua_rawlen(L, idx);
    if (len > (size_t)MAX_ARRAY)
        luaL_error(L, "%s: argument '%s' has %I elements, more than the %I this function takes", fn, argname,
                   (lua_Integer)len, MAX_ARRAY);
    *n = (lua_Integer)len;
    double *a = lua_newuserdatauv(L, (len > 0 ? len : 1) * sizeof(double), 0);
    for (lua_Integer i = 1; i <= *n; i++) {
        int ok;
        lua_rawgeti(L, idx, i);
        double v = lua_tonumberx(L, -1, &ok);
        if (!ok) luaL_error(L, "%s: %s[%I] must be a number, got %s", fn, argname, i, lfb_typename(L, -1));
        if (!isfinite(v)) luaL_error(L, "%s: %s[%I] is not finite (%f)", fn, argname, i, v);
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
    if (nx != ny) return luaL_error(L, "%s: xs and ys differ in length (%I and %I)", fn, nx, ny);
    if (nx < 2) return luaL_error(L, "%s: at least 2 points needed, got %I", fn, nx);
    double slope, icpt, se, rs;
    int distinct = 0;
    for (lua_Integer i = 1; i < nx && !distinct; i++) distinct = x[i] != x[0];
    if (!distinct) return luaL_error(L, "%s: all %I x values are equal (%f): slope undefined", fn, nx, x[0]);
    int st = lf_fit_linear(x, y, (size_t)nx, &slope, &icpt, &se, &rs);
    if (st == LF_EDOMAIN)
        return luaL_error(L, "%s: the fitted line overflows (its slope or intercept exceeds %f)", fn, DBL_MAX);
    if (st == LF_ENOMEM) return luaL_error(L, "%s: not enough memory", fn);
    if (st != LF_OK) return luaL_error(L, "%s: invalid input (%s)", fn, lf_status_name(st));
    lua_pushnumber(L, slope);
    lua_pushnumber(L, icpt);
    if (nx > 2) lua_pushnumber(L, se);
    else lua_pushnil(L); /* undefined with 2 points (the C API's NaN): absent, not a NaN */
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

/* ---------------------------------------------------------------- atomic files */
#define LFB_AFILE "lf.atomic_file"

typedef struct {
    FILE *f;
    char *target; /* where the file appears (a symbolic link resolved) */
    char *tmp;    /* the temporary file beside it; NULL when writing in place */
    char *who;    /* the Lua function, for messages */
    int open;
} afile;

static const char *checkpath(lua_State *L, int idx, const char *who)
{
    size_t len;
    if (lua_type(L, idx) != LUA_TSTRING)
        luaL_error(L, "%s: path (string) expected, got %s", who, lfb_typename(L, idx));
    const char *p = lua_tolstring(L, idx, &len);
    if (len == 0) luaL_error(L, "%s: empty path", who);
    if (memchr(p, '\0', len)) luaL_error(L, "%s: the path contains a NUL byte", who);
    if (len >= PATH_MAX) luaL_error(L, "%s: path longer than %d bytes", who, PATH_MAX - 1);
    return p;
}

static void afile_release(afile *a, int remove_tmp)
{
    if (a->f) fclose(a->f);
    a->f = NULL;
    if (a->tmp && remove_tmp) unlink(a->tmp);
    free(a->tmp);
    free(a->target);
    free(a->who);
    a->tmp = a->target = a->who = NULL;
    a->open = 0;
}

/* Raise "<who>: <what> '<path>': <strerror(err)>" after releasing the file (the temporary removed). */
static int afile_fail(lua_State *L, afile *a, const char *what, int err)
{
    lua_pushfstring(L, "%s: %s '%s': %s", a->who ? a->who : "write", what, a->target ? a->target : "?", strerror(err));
    afile_release(a, 1);
    return lua_error(L);
}

static char *dupstr(lua_State *L, afile *a, const char *s)
{
    char *d = strdup(s);
    if (!d) {
        afile_release(a, 1);
        luaL_error(L, "out of memory");
    }
    return d;
}

static int l_atomic_open(lua_State *L)
{
    const char *who = luaL_optstring(L, 2, "write");
    const char *path = checkpath(L, 1, who);
    afile *a = lua_newuserdatauv(L, sizeof *a, 0);
    memset(a, 0, sizeof *a);
    luaL_setmetatable(L, LFB_AFILE);
    a->who = dupstr(L, a, who);
    a->open = 1;
    struct stat st, lst;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        a->target = dupstr(L, a, path);
        return afile_fail(L, a, "cannot write", EISDIR);
    }
    if (exists && !S_ISREG(st.st_mode)) { /* a device, FIFO, socket: write in place */
        a->target = dupstr(L, a, path);
        a->f = fopen(path, "w");
        if (!a->f) return afile_fail(L, a, "cannot open", errno);
        return 1;
    }
    /* follow a symbolic link to the file it names (rename would replace the link itself) */
    char resolved[PATH_MAX];
    if (exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && realpath(path, resolved)) path = resolved;
    else if (!exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) { /* dangling: create its target in place */
        a->target = dupstr(L, a, path);
        a->f = fopen(path, "w");
        if (!a->f) return afile_fail(L, a, "cannot open", errno);
        return 1;
    }
    a->target = dupstr(L, a, path);
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = slash ? slash + 1 : path;
    static unsigned counter;
    size_t n = dirlen + strlen(base) + 64;
    a->tmp = malloc(n);
    if (!a->tmp) return afile_fail(L, a, "cannot write", ENOMEM);
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        snprintf(a->tmp, n, "%.*s.%s.tmp-%ld-%u", (int)dirlen, path, base, (long)getpid(), counter++);
        fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        int err = errno;
        free(a->tmp);
        a->tmp = NULL;
        return afile_fail(L, a, "cannot open", err); /* (the temporary file beside it) */
    }
    if (exists) (void)fchmod(fd, st.st_mode & 07777); /* keep the mode of the file we replace */
    a->f = fdopen(fd, "w");
    if (!a->f) {
        int err = errno;
        close(fd);
        return afile_fail(L, a, "cannot write", err);
    }
    return 1;
}

static afile *checkafile(lua_State *L)
{
    afile *a = luaL_checkudata(L, 1, LFB_AFILE);
    if (!a->open) luaL_error(L, "atomic file: already committed or aborted");
    return a;
}

static int l_afile_write(lua_State *L)
{
    afile *a = checkafile(L);
    int n = lua_gettop(L);
    for (int i = 2; i <= n; i++) {
        size_t len;
        const char *s = luaL_checklstring(L, i, &len);
        errno = 0;
        if (fwrite(s, 1, len, a->f) != len) return afile_fail(L, a, "writing", errno ? errno : EIO);
    }
    lua_settop(L, 1);
    return 1;
}

static int l_afile_commit(lua_State *L)
{
    afile *a = checkafile(L);
    errno = 0;
    if (fflush(a->f) != 0 || ferror(a->f)) return afile_fail(L, a, "writing", errno ? errno : EIO);
    FILE *f = a->f;
    a->f = NULL;
    if (fclose(f) != 0) return afile_fail(L, a, "writing", errno);
    if (a->tmp && rename(a->tmp, a->target) != 0) return afile_fail(L, a, "cannot rename the temporary file to", errno);
    lua_pushstring(L, a->target);
    afile_release(a, 0);
    return 1;
}

static int l_afile_abort(lua_State *L)
{
    afile *a = luaL_checkudata(L, 1, LFB_AFILE);
    if (a->open) afile_release(a, 1);
    return 0;
}

/* ---------------------------------------------------------------- spawn with captured output */
extern char **environ;
#define SPAWN_CAP ((size_t)64 << 20)

typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static int sbuf_add(sbuf *b, const char *s, size_t n)
{
    if (b->n + n > SPAWN_CAP) n = SPAWN_CAP - b->n;
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap : 4096;
        while (c < b->n + n) c *= 2;
        char *q = realloc(b->p, c);
        if (!q) return -1;
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

static volatile sig_atomic_t *cancel_flag(lua_State *L)
{
    volatile sig_atomic_t *c = NULL;
    if (lua_getfield(L, LUA_REGISTRYINDEX, "lieflow.cancel") == LUA_TLIGHTUSERDATA) c = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return c;
}

static int l_spawn(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    size_t inlen = 0;
    const char *input = luaL_optlstring(L, 2, "", &inlen);
    double timeout = luaL_optnumber(L, 3, 0);
    if (!(timeout >= 0)) return luaL_error(L, "spawn: timeout must be a number >= 0 (0: none)");
    lua_Integer argc = (lua_Integer)lua_rawlen(L, 1);
    if (argc < 1 || argc > 64) return luaL_error(L, "spawn: 1 to 64 arguments expected, got %I", argc);
    char **argv = lua_newuserdatauv(L, (size_t)(argc + 1) * sizeof(char *), 0);
    for (lua_Integer i = 1; i <= argc; i++) {
        lua_rawgeti(L, 1, i);
        size_t len;
        if (lua_type(L, -1) != LUA_TSTRING) return luaL_error(L, "spawn: argument %I is not a string", i);
        const char *a = lua_tolstring(L, -1, &len);
        if (memchr(a, '\0', len)) return luaL_error(L, "spawn: argument %I contains a NUL byte", i);
        argv[i - 1] = (char *)a; /* kept alive by the table at index 1 */
        lua_pop(L, 1);
    }
    argv[argc] = NULL;
    volatile sig_atomic_t *cancel = cancel_flag(L);

    int pin[2], pout[2], perr[2];
    if (pipe(pin)) return luaL_error(L, "spawn: pipe: %s", strerror(errno));
    if (pipe(pout)) {
        int e = errno;
        close(pin[0]); close(pin[1]);
        return luaL_error(L, "spawn: pipe: %s", strerror(e));
    }
    if (pipe(perr)) {
        int e = errno;
        close(pin[0]); close(pin[1]); close(pout[0]); close(pout[1]);
        return luaL_error(L, "spawn: pipe: %s", strerror(e));
    }
    int fds[6] = {pin[0], pin[1], pout[0], pout[1], perr[0], perr[1]};
    for (int i = 0; i < 6; i++) fcntl(fds[i], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pin[0], 0);
    posix_spawn_file_actions_adddup2(&fa, pout[1], 1);
    posix_spawn_file_actions_adddup2(&fa, perr[1], 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pin[0]); close(pout[1]); close(perr[1]);
    if (rc != 0) {
        close(pin[1]); close(pout[0]); close(perr[0]);
        return luaL_error(L, "spawn: cannot run '%s': %s", argv[0], strerror(rc));
    }
    /* a child that exits before reading its input must not kill us with SIGPIPE */
    sigset_t pipeset, oldmask;
    sigemptyset(&pipeset);
    sigaddset(&pipeset, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipeset, &oldmask);

    sbuf out = {0}, err = {0};
    size_t written = 0;
    int win = pin[1], rout = pout[0], rerr = perr[0], interrupted = 0, nomem = 0, timedout = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (inlen == 0) { close(win); win = -1; }
    else fcntl(win, F_SETFL, O_NONBLOCK);
    while (rout >= 0 || rerr >= 0 || win >= 0) {
        if (cancel && *cancel) {
            interrupted = 1;
            break;
        }
        if (timeout > 0) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > timeout) {
                timedout = 1;
                break;
            }
        }
        struct pollfd pf[3];
        int np = 0, iw = -1, io = -1, ie = -1;
        if (win >= 0) { iw = np; pf[np].fd = win; pf[np++].events = POLLOUT; }
        if (rout >= 0) { io = np; pf[np].fd = rout; pf[np++].events = POLLIN; }
        if (rerr >= 0) { ie = np; pf[np].fd = rerr; pf[np++].events = POLLIN; }
        int r = poll(pf, (nfds_t)np, 100); /* wake up now and then to look at the Ctrl-C flag */
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break;
        if (iw >= 0 && pf[iw].revents) {
            ssize_t k = write(win, input + written, inlen - written);
            if (k > 0) written += (size_t)k;
            if ((k < 0 && errno != EAGAIN && errno != EINTR) || written == inlen) { close(win); win = -1; }
        }
        char buf[65536];
        int *fdp[2] = {&rout, &rerr};
        int idx[2] = {io, ie};
        sbuf *dst[2] = {&out, &err};
        for (int j = 0; j < 2; j++) {
            if (idx[j] < 0 || !pf[idx[j]].revents) continue;
            ssize_t k = read(*fdp[j], buf, sizeof buf);
            if (k > 0) {
                if (sbuf_add(dst[j], buf, (size_t)k)) nomem = 1;
            } else if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
                close(*fdp[j]);
                *fdp[j] = -1;
            }
        }
    }
    if (win >= 0) close(win);
    if (rout >= 0) close(rout);
    if (rerr >= 0) close(rerr);
    if (interrupted) kill(pid, SIGTERM);
    if (timedout) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    /* drop a SIGPIPE raised by our writes, then restore the mask */
    sigset_t pending;
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) && !sigismember(&oldmask, SIGPIPE)) {
        struct timespec zero = {0, 0};
        sigtimedwait(&pipeset, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
    if (interrupted || nomem) {
        free(out.p);
        free(err.p);
        return luaL_error(L, interrupted ? "interrupted!" : "spawn: not enough memory for the output of '%s'", argv[0]);
    }
    if (timedout) {
        lua_pushliteral(L, "timeout");
        lua_pushnumber(L, timeout);
    } else if (WIFSIGNALED(status)) {
        lua_pushliteral(L, "signaled");
        lua_pushinteger(L, WTERMSIG(status));
    } else {
        lua_pushliteral(L, "exited");
        lua_pushinteger(L, WEXITSTATUS(status));
    }
    lua_pushlstring(L, out.p ? out.p : "", out.n);
    lua_pushlstring(L, err.p ? err.p : "", err.n);
    free(out.p);
    free(err.p);
    return 4;
}

void lfb_open_analysis(lua_State *L)
{
    const luaL_Reg fns[] = {{"fit_linear", l_fit_linear},
                            {"isatty", l_isatty},
                            {"wall_time", l_wall_time},
                            {"mkdir_p", l_mkdir_p},
                            {"atomic_open", l_atomic_open},
                            {"spawn", l_spawn},
                            {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
    luaL_newmetatable(L, LFB_AFILE);
    const luaL_Reg meta[] = {{"__gc", l_afile_abort}, {"__close", l_afile_abort}, {NULL, NULL}};
    luaL_setfuncs(L, meta, 0);
    lua_newtable(L);
    const luaL_Reg methods[] = {{"write", l_afile_write}, {"commit", l_afile_commit}, {"abort", l_afile_abort},
                                {NULL, NULL}};
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}
