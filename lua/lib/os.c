/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — what the Lua modules need of the operating system (scripts/lieflow/run.lua,
 * plot.lua, ensemble.lua, experiment.lua):
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
 *       executable's Ctrl-C flag stops the child (SIGTERM) and raises "interrupted".
 *       core.spawn(argv, nil, timeout, "null"): the child's stdin, stdout and stderr are /dev/null
 *       (nothing captured; lf.view starts `setsid -f BROWSER page` this way and returns).
 *   core.file_info(path) -> {uid =, mode =, size =, kind = "file"|"dir"|"link"|"other", real =} | nil,
 *       reason: lstat of path (mode: the permission bits; size in bytes) and its canonical path
 *       (realpath; nil when dangling).
 *   core.uid() -> the effective user id.
 *   core.private_dir(path) -> path: a directory only this user may enter: created with mode 0700, or
 *       an existing one that is a directory (not a link), owned by this user, without group or other
 *       permissions (never changed here); anything else is an error saying why.
 * The process pool of lf.ensemble (fork, sockets, poll) is lib/proc.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
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

#include "shared/bind.h"
#include "lib/open.h"

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

/* The argument strings of the table at idx, NULL-terminated (kept alive by the table). */
static char **read_argv(lua_State *L, int idx)
{
    lua_Integer argc = (lua_Integer)lua_rawlen(L, idx);
    if (argc < 1 || argc > 64) luaL_error(L, "spawn: 1 to 64 arguments expected, got %I", argc);
    char **argv = lua_newuserdatauv(L, (size_t)(argc + 1) * sizeof(char *), 0);
    for (lua_Integer i = 1; i <= argc; i++) {
        lua_rawgeti(L, idx, i);
        size_t len;
        if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "spawn: argument %I is not a string", i);
        const char *a = lua_tolstring(L, -1, &len);
        if (memchr(a, '\0', len)) luaL_error(L, "spawn: argument %I contains a NUL byte", i);
        argv[i - 1] = (char *)a;
        lua_pop(L, 1);
    }
    argv[argc] = NULL;
    return argv;
}

/* A running child and our ends of its pipes (-1 once closed). */
typedef struct {
    pid_t pid;
    int in, out, err;
} child;

static void close_all(const int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0) close(fds[i]);
}

/* Start argv[0] (PATH lookup, no shell) with its stdin, stdout and stderr on pipes. */
static void start_child(lua_State *L, char **argv, child *c)
{
    int p[6] = {-1, -1, -1, -1, -1, -1}; /* in: p[0] read, p[1] write; out: p[2], p[3]; err: p[4], p[5] */
    for (int k = 0; k < 3; k++)
        if (pipe(p + 2 * k)) {
            int e = errno;
            close_all(p, 2 * k);
            luaL_error(L, "spawn: pipe: %s", strerror(e));
        }
    for (int i = 0; i < 6; i++) fcntl(p[i], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[0], 0);
    posix_spawn_file_actions_adddup2(&fa, p[3], 1);
    posix_spawn_file_actions_adddup2(&fa, p[5], 2);
    int rc = posix_spawnp(&c->pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    const int child_ends[3] = {p[0], p[3], p[5]}, our_ends[3] = {p[1], p[2], p[4]};
    close_all(child_ends, 3);
    if (rc != 0) {
        close_all(our_ends, 3);
        luaL_error(L, "spawn: cannot run '%s': %s", argv[0], strerror(rc));
    }
    c->in = p[1], c->out = p[2], c->err = p[4];
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + 1e-9 * (double)(now.tv_nsec - t0->tv_nsec);
}

/* Read what is ready on *fd into b (closing *fd at its end); 1 if out of memory. */
static int drain(int *fd, sbuf *b)
{
    char buf[65536];
    ssize_t k = read(*fd, buf, sizeof buf);
    if (k > 0) return sbuf_add(b, buf, (size_t)k) != 0;
    if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(*fd);
        *fd = -1;
    }
    return 0;
}

enum { DONE = 0, INTERRUPTED = 1, TIMEDOUT = 2, NOMEM = 3 };

/* Write the input to the child and read its output until both pipes close, Ctrl-C (the cancel
 * flag), the timeout (seconds; 0: none) or no memory; the pipes closed on return. */
static int exchange(child *c, const char *input, size_t inlen, double timeout, volatile sig_atomic_t *cancel,
                    sbuf *out, sbuf *err)
{
    size_t written = 0;
    int why = DONE;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (inlen == 0) {
        close(c->in);
        c->in = -1;
    } else
        fcntl(c->in, F_SETFL, O_NONBLOCK);
    while ((c->out >= 0 || c->err >= 0 || c->in >= 0) && why == DONE) {
        if (cancel && *cancel) why = INTERRUPTED;
        else if (timeout > 0 && seconds_since(&t0) > timeout) why = TIMEDOUT;
        if (why != DONE) break;
        struct pollfd pf[3] = {{c->in, POLLOUT, 0}, {c->out, POLLIN, 0}, {c->err, POLLIN, 0}}; /* fd -1: ignored */
        int r = poll(pf, 3, 100); /* wake up now and then to look at the Ctrl-C flag */
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break;
        if (c->in >= 0 && pf[0].revents) {
            ssize_t k = write(c->in, input + written, inlen - written);
            if (k > 0) written += (size_t)k;
            if ((k < 0 && errno != EAGAIN && errno != EINTR) || written == inlen) {
                close(c->in);
                c->in = -1;
            }
        }
        if (c->out >= 0 && pf[1].revents && drain(&c->out, out)) why = NOMEM;
        if (c->err >= 0 && pf[2].revents && drain(&c->err, err)) why = NOMEM;
    }
    const int fds[3] = {c->in, c->out, c->err};
    close_all(fds, 3);
    return why;
}

/* Wait for the child (stopped first if interrupted or timed out); its wait status. */
static int reap(const child *c, int why)
{
    if (why == INTERRUPTED) kill(c->pid, SIGTERM);
    if (why == TIMEDOUT) kill(c->pid, SIGKILL);
    int status = 0;
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {}
    return status;
}

/* How a child ended, as spawn returns it: "timeout", seconds | "signaled", signal | "exited", status */
static void push_how(lua_State *L, int timed_out, int status, double timeout)
{
    if (timed_out) {
        lua_pushliteral(L, "timeout");
        lua_pushnumber(L, timeout);
    } else if (WIFSIGNALED(status)) {
        lua_pushliteral(L, "signaled");
        lua_pushinteger(L, WTERMSIG(status));
    } else {
        lua_pushliteral(L, "exited");
        lua_pushinteger(L, WEXITSTATUS(status));
    }
}

/* core.spawn(argv, nil, timeout, "null"): run argv with /dev/null as stdin, stdout and stderr and
 * wait for it (polling, so that Ctrl-C and the timeout are seen); the same results, "" outputs. */
static int spawn_null(lua_State *L, char **argv, double timeout)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    for (int fd = 0; fd < 3; fd++) posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return luaL_error(L, "spawn: cannot run '%s': %s", argv[0], strerror(rc));
    volatile sig_atomic_t *cancel = lfb_cancel_flag(L);
    struct timespec t0, nap = {0, 10 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int status = 0, why = DONE;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR)) break;
        if (cancel && *cancel) why = INTERRUPTED;
        else if (timeout > 0 && seconds_since(&t0) > timeout) why = TIMEDOUT;
        if (why != DONE) {
            child c = {pid, -1, -1, -1};
            status = reap(&c, why);
            break;
        }
        nanosleep(&nap, NULL);
    }
    if (why == INTERRUPTED) return luaL_error(L, "interrupted!");
    push_how(L, why == TIMEDOUT, status, timeout);
    lua_pushliteral(L, "");
    lua_pushliteral(L, "");
    return 4;
}

static int l_spawn(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    size_t inlen = 0;
    const char *input = luaL_optlstring(L, 2, "", &inlen);
    double timeout = luaL_optnumber(L, 3, 0);
    if (!(timeout >= 0)) return luaL_error(L, "spawn: timeout must be a number >= 0 (0: none)");
    char **argv = read_argv(L, 1);
    if (lua_type(L, 4) == LUA_TSTRING && strcmp(lua_tostring(L, 4), "null") == 0) return spawn_null(L, argv, timeout);
    child c;
    start_child(L, argv, &c);
    /* a child that exits before reading its input must not kill us with SIGPIPE */
    sigset_t pipeset, oldmask;
    sigemptyset(&pipeset);
    sigaddset(&pipeset, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipeset, &oldmask);
    sbuf out = {0}, err = {0};
    const int why = exchange(&c, input, inlen, timeout, lfb_cancel_flag(L), &out, &err);
    const int status = reap(&c, why);
    /* drop a SIGPIPE raised by our writes, then restore the mask */
    sigset_t pending;
    if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) && !sigismember(&oldmask, SIGPIPE)) {
        struct timespec zero = {0, 0};
        sigtimedwait(&pipeset, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
    if (why == INTERRUPTED || why == NOMEM) {
        free(out.p);
        free(err.p);
        return luaL_error(L, why == INTERRUPTED ? "interrupted!" : "spawn: not enough memory for the output of '%s'",
                          argv[0]);
    }
    push_how(L, why == TIMEDOUT, status, timeout);
    lua_pushlstring(L, out.p ? out.p : "", out.n);
    lua_pushlstring(L, err.p ? err.p : "", err.n);
    free(out.p);
    free(err.p);
    return 4;
}

/* ---------------------------------------------------------------- ownership (lf.view) */
static const char *kind_of_mode(mode_t m)
{
    return S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "link" : "other";
}

/* core.file_info(path) -> {uid, mode, kind, real} | nil, reason */
static int l_file_info(lua_State *L)
{
    const char *path = checkpath(L, 1, "file_info");
    struct stat st;
    if (lstat(path, &st) != 0) {
        lua_pushnil(L);
        lua_pushstring(L, strerror(errno));
        return 2;
    }
    lua_createtable(L, 0, 5);
    lua_pushinteger(L, (lua_Integer)st.st_size);
    lua_setfield(L, -2, "size");
    lua_pushinteger(L, (lua_Integer)st.st_uid);
    lua_setfield(L, -2, "uid");
    lua_pushinteger(L, (lua_Integer)(st.st_mode & 07777));
    lua_setfield(L, -2, "mode");
    lua_pushstring(L, kind_of_mode(st.st_mode));
    lua_setfield(L, -2, "kind");
    char *real = realpath(path, NULL);
    if (real) {
        lua_pushstring(L, real);
        lua_setfield(L, -2, "real");
        free(real);
    }
    return 1;
}

/* core.uid() -> the effective user id */
static int l_uid(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)geteuid());
    return 1;
}

/* core.private_dir(path) -> path (see the header) */
static int l_private_dir(lua_State *L)
{
    const char *path = checkpath(L, 1, "private_dir");
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return luaL_error(L, "cannot create the directory '%s': %s", path, strerror(errno));
    struct stat st;
    if (lstat(path, &st) != 0) return luaL_error(L, "cannot examine '%s': %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return luaL_error(L, "'%s' is a %s, not a directory: refused (another user could have planted it)", path,
                          kind_of_mode(st.st_mode));
    if (st.st_uid != geteuid())
        return luaL_error(L, "'%s' belongs to user %d, not to you (%d): refused (another user could have planted it)",
                          path, (int)st.st_uid, (int)geteuid());
    if (st.st_mode & 077)
    {
        char mode[8];
        snprintf(mode, sizeof mode, "%04o", (unsigned)(st.st_mode & 07777));
        return luaL_error(L, "'%s' has mode %s: others may enter it: refused (it must be 0700)", path, mode);
    }
    lua_pushvalue(L, 1);
    return 1;
}

void lfb_open_os(lua_State *L)
{
    const luaL_Reg fns[] = {{"isatty", l_isatty},
                            {"wall_time", l_wall_time},
                            {"mkdir_p", l_mkdir_p},
                            {"atomic_open", l_atomic_open},
                            {"spawn", l_spawn},
                            {"file_info", l_file_info},
                            {"uid", l_uid},
                            {"private_dir", l_private_dir},
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
