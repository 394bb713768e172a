/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow Lua binding — core.proc: the process primitives behind lf.ensemble
 * (scripts/lieflow/ensemble.lua). POSIX/Linux only.
 *
 *   proc.ncpu()                 -> CPUs this process may run on (sched_getaffinity), CPUs online
 *   proc.socketpair()           -> fd_parent, fd_child (a connected AF_UNIX stream pair, close-on-exec)
 *   proc.fork([quiet])          -> pid in the parent, 0 in the child. Stdio is flushed before the fork;
 *                                  the child gets SIGINT, SIGTERM, SIGPIPE at their defaults, no Lua
 *                                  hook, and dies with its parent (PR_SET_PDEATHSIG SIGKILL). quiet:
 *                                  the child's stderr goes to /dev/null (a library's abort message
 *                                  that its parent reports in its own words: lieflow.hdf5's reader)
 *   proc.close(fd)
 *   proc.send(fd, s)            -> true | nil, message: one frame (8-byte length, then s), blocking
 *   proc.recv(fd)               -> s | nil at end of file: one frame, blocking (a worker reads its tasks)
 *   proc.reader(fd)             -> r; r:pump() -> {frames...}, eof: reads what is available without
 *                                  blocking and returns the complete frames (the parent's side)
 *   proc.poll(fds, timeout_ms)  -> {ready fds...}, interrupted: waits until one of fds is readable or
 *                                  closed, the timeout passes or a signal arrives. interrupted is true
 *                                  when the lieflow executable's Ctrl-C flag is set (its pending
 *                                  "interrupted!" hook is then removed: the caller stops by itself)
 *   proc.interrupted()          -> boolean (the Ctrl-C flag of the lieflow executable)
 *   proc.waitpid(pid)           -> nil while pid runs | "exited", code | "signaled", signo, name
 *   proc.kill(pid, sig)         -> true | nil, message (sig: "TERM", "KILL", "INT" or a number)
 *   proc.group()                -> g: the worker processes of one ensemble. g:add(pid, fd),
 *                                  g:reap(pid [, timeout]) (a worker that is gone: close, wait, kill,
 *                                  reap -> as proc.waitpid), g:shutdown([grace_s]): closes
 *                                  the fds, waits up to grace (default 2 s) for the workers to exit,
 *                                  then SIGTERM, 1 s, SIGKILL; reaps all. __close and __gc shut down
 *                                  at once (grace 0), only in the process that made g: no worker
 *                                  survives and no zombie is left, whatever error happens.
 *   proc.exit(code)             -> flushes stdio and _exit(code) (a worker never returns to the script)
 *   proc.getpid()
 *   proc.encode(v) -> s, proc.decode(s) -> v: exact serialization of nil, booleans, integers, floats
 *      (the 8 bytes of the double: NaN payloads and -0 survive), strings, tables (keys: strings,
 *      numbers, booleans; metatables are dropped), lf.vec3 and lf.mat3. Errors name the path of the
 *      value that cannot be sent ("x.summary.f is a function"). Same byte order on both sides
 *      (checked). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shared/bind.h"
#include "lib/open.h"

#define PROC_READER "lf.proc.reader"
#define PROC_GROUP "lf.proc.group"
#define PROC_BUFFER "lf.proc.buffer"
#define FRAME_MAX ((uint64_t)1 << 40) /* 1 TiB: anything larger is a corrupt length */

static int fail_errno(lua_State *L, const char *what)
{
    int e = errno;
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", what, strerror(e));
    return 2;
}

static int check_fd(lua_State *L, int idx)
{
    lua_Integer fd = luaL_checkinteger(L, idx);
    luaL_argcheck(L, fd >= 0 && fd < (1 << 24), idx, "file descriptor out of range");
    return (int)fd;
}

/* ------------------------------------------------------------------ CPUs */

static int l_ncpu(lua_State *L)
{
    cpu_set_t set;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
    if (n < 1) n = online > 0 ? (int)online : 1;
    lua_pushinteger(L, n);
    lua_pushinteger(L, online > 0 ? online : n);
    return 2;
}

/* ------------------------------------------------------------------ processes */

static int l_socketpair(lua_State *L)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return fail_errno(L, "socketpair");
    lua_pushinteger(L, sv[0]);
    lua_pushinteger(L, sv[1]);
    return 2;
}

static void set_default(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static int l_fork(lua_State *L)
{
    int quiet = lua_toboolean(L, 1);
    pid_t parent = getpid();
    fflush(NULL); /* no buffered output is written twice */
    pid_t pid = fork();
    if (pid < 0) return fail_errno(L, "fork");
    if (pid == 0) {
        set_default(SIGINT); /* Ctrl-C on the terminal ends a worker at once; its parent cleans up */
        set_default(SIGTERM);
        set_default(SIGPIPE);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        lua_sethook(L, NULL, 0, 0);
        /* a worker never outlives its parent (killed with SIGKILL, or a crash of the parent) */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(70); /* the parent died before prctl */
        if (quiet) {
            int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
            if (null >= 0) dup2(null, 2), close(null);
        }
    }
    lua_pushinteger(L, pid);
    return 1;
}

static int l_close(lua_State *L)
{
    int fd = check_fd(L, 1);
    if (close(fd) != 0 && errno != EINTR) return fail_errno(L, "close");
    lua_pushboolean(L, 1);
    return 1;
}

/* Write all n bytes (a stream socket: MSG_NOSIGNAL, no SIGPIPE if the peer is gone). */
static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd pfd = {fd, POLLOUT, 0};
                poll(&pfd, 1, 1000);
                continue;
            }
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int l_send(lua_State *L)
{
    int fd = check_fd(L, 1);
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    uint64_t len = n;
    if (write_all(fd, (const char *)&len, sizeof len) != 0 || write_all(fd, s, n) != 0)
        return fail_errno(L, "send");
    lua_pushboolean(L, 1);
    return 1;
}

/* Read exactly n bytes (blocking). Returns n, 0 at end of file before any byte, -1 on error or a
 * truncated read (errno EPIPE then). */
static ssize_t read_all(int fd, char *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, p + got, n - got);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (k == 0) {
            if (got == 0) return 0;
            errno = EPIPE;
            return -1;
        }
        got += (size_t)k;
    }
    return (ssize_t)got;
}

static int l_recv(lua_State *L)
{
    int fd = check_fd(L, 1);
    uint64_t len;
    ssize_t k = read_all(fd, (char *)&len, sizeof len);
    if (k == 0) {
        lua_pushnil(L);
        return 1;
    }
    if (k < 0) return fail_errno(L, "recv");
    if (len > FRAME_MAX) return luaL_error(L, "recv: corrupt frame length %llu", (unsigned long long)len);
    luaL_Buffer b;
    char *p = luaL_buffinitsize(L, &b, (size_t)len);
    if (len > 0 && read_all(fd, p, (size_t)len) <= 0) return fail_errno(L, "recv (frame body)");
    luaL_pushresultsize(&b, (size_t)len);
    return 1;
}

/* ------------------------------------------------------------------ reader: frames without blocking */

typedef struct {
    int fd;
    int eof;
    char *buf;
    size_t len, cap;
} reader;

static int reader_gc(lua_State *L)
{
    reader *r = luaL_checkudata(L, 1, PROC_READER);
    free(r->buf);
    r->buf = NULL;
    r->len = r->cap = 0;
    return 0;
}

static int l_reader(lua_State *L)
{
    int fd = check_fd(L, 1);
    reader *r = lua_newuserdatauv(L, sizeof *r, 0);
    memset(r, 0, sizeof *r);
    r->fd = fd;
    luaL_setmetatable(L, PROC_READER);
    return 1;
}

static void reader_reserve(lua_State *L, reader *r, size_t extra)
{
    if (r->cap - r->len >= extra) return;
    size_t cap = r->cap ? r->cap : 65536;
    while (cap - r->len < extra) cap *= 2;
    char *p = realloc(r->buf, cap);
    if (!p) luaL_error(L, "reader: out of memory (%d bytes)", (int)cap);
    r->buf = p;
    r->cap = cap;
}

/* r:pump() -> {frames...}, eof */
static int reader_pump(lua_State *L)
{
    reader *r = luaL_checkudata(L, 1, PROC_READER);
    while (!r->eof) {
        reader_reserve(L, r, 65536);
        ssize_t k = recv(r->fd, r->buf + r->len, r->cap - r->len, MSG_DONTWAIT);
        if (k > 0) {
            r->len += (size_t)k;
            continue;
        }
        if (k == 0) r->eof = 1;
        else if (errno == EINTR) continue;
        else if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        else r->eof = 1; /* ECONNRESET ...: the worker is gone */
    }
    lua_newtable(L);
    size_t off = 0;
    lua_Integer nf = 0;
    while (r->len - off >= 8) {
        uint64_t flen;
        memcpy(&flen, r->buf + off, 8);
        if (flen > FRAME_MAX) return luaL_error(L, "reader: corrupt frame length %llu", (unsigned long long)flen);
        if (r->len - off - 8 < flen) break;
        lua_pushlstring(L, r->buf + off + 8, (size_t)flen);
        lua_rawseti(L, -2, ++nf);
        off += 8 + (size_t)flen;
    }
    if (off > 0) {
        memmove(r->buf, r->buf + off, r->len - off);
        r->len -= off;
    }
    lua_pushboolean(L, r->eof);
    return 2;
}

/* r:pending() -> bytes of an incomplete frame held */
static int reader_pending(lua_State *L)
{
    reader *r = luaL_checkudata(L, 1, PROC_READER);
    lua_pushinteger(L, (lua_Integer)r->len);
    return 1;
}

/* ------------------------------------------------------------------ poll, interrupts */

static volatile sig_atomic_t *cancel_flag(lua_State *L)
{
    volatile sig_atomic_t *f = NULL;
    if (lua_getfield(L, LUA_REGISTRYINDEX, "lieflow.cancel") == LUA_TLIGHTUSERDATA) f = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return f;
}

static int interrupted(lua_State *L)
{
    volatile sig_atomic_t *f = cancel_flag(L);
    if (f && *f) {
        lua_sethook(L, NULL, 0, 0); /* the pending "interrupted!": the ensemble stops by itself */
        return 1;
    }
    return 0;
}

static int l_interrupted(lua_State *L)
{
    lua_pushboolean(L, interrupted(L));
    return 1;
}

static int l_poll(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer timeout = luaL_optinteger(L, 2, 1000);
    luaL_argcheck(L, timeout >= 0 && timeout <= 3600000, 2, "timeout (ms) out of range");
    lua_Integer n = luaL_len(L, 1);
    luaL_argcheck(L, n >= 0 && n <= 4096, 1, "too many file descriptors");
    struct pollfd *p = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *p, 0);
    for (lua_Integer i = 0; i < n; i++) {
        lua_geti(L, 1, i + 1);
        int isint;
        lua_Integer fd = lua_tointegerx(L, -1, &isint);
        lua_pop(L, 1);
        if (!isint || fd < 0 || fd >= (1 << 24)) return luaL_error(L, "poll: fds[%d] is not a file descriptor", (int)i + 1);
        p[i].fd = (int)fd;
        p[i].events = POLLIN;
        p[i].revents = 0;
    }
    int k = interrupted(L) ? 0 : poll(p, (nfds_t)n, (int)timeout);
    if (k < 0 && errno != EINTR) return luaL_error(L, "poll: %s", strerror(errno));
    lua_newtable(L);
    lua_Integer m = 0;
    for (lua_Integer i = 0; k > 0 && i < n; i++)
        if (p[i].revents) {
            lua_pushinteger(L, p[i].fd);
            lua_rawseti(L, -2, ++m);
        }
    lua_pushboolean(L, interrupted(L));
    return 2;
}

/* ------------------------------------------------------------------ waitpid, kill */

static int push_status(lua_State *L, int status)
{
    if (WIFEXITED(status)) {
        lua_pushliteral(L, "exited");
        lua_pushinteger(L, WEXITSTATUS(status));
        return 2;
    }
    if (WIFSIGNALED(status)) {
        lua_pushliteral(L, "signaled");
        lua_pushinteger(L, WTERMSIG(status));
        lua_pushstring(L, strsignal(WTERMSIG(status)));
        return 3;
    }
    lua_pushliteral(L, "unknown");
    return 1;
}

static int l_waitpid(lua_State *L)
{
    pid_t pid = (pid_t)luaL_checkinteger(L, 1);
    luaL_argcheck(L, pid > 0, 1, "pid must be positive");
    int status;
    pid_t r;
    do r = waitpid(pid, &status, WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == 0) return 0; /* still running */
    if (r < 0) {
        lua_pushliteral(L, "gone");
        lua_pushstring(L, strerror(errno));
        return 2;
    }
    return push_status(L, status);
}

static int signal_number(lua_State *L, int idx)
{
    if (lua_type(L, idx) == LUA_TNUMBER) return (int)luaL_checkinteger(L, idx);
    const char *s = luaL_checkstring(L, idx);
    if (strcmp(s, "TERM") == 0) return SIGTERM;
    if (strcmp(s, "KILL") == 0) return SIGKILL;
    if (strcmp(s, "INT") == 0) return SIGINT;
    return luaL_error(L, "kill: unknown signal name '%s' (TERM, KILL, INT or a number)", s);
}

static int l_kill(lua_State *L)
{
    pid_t pid = (pid_t)luaL_checkinteger(L, 1);
    luaL_argcheck(L, pid > 0, 1, "pid must be positive (no process groups)");
    int sig = signal_number(L, 2);
    if (kill(pid, sig) != 0) return fail_errno(L, "kill");
    lua_pushboolean(L, 1);
    return 1;
}

static int l_exit(lua_State *L)
{
    int code = (int)luaL_optinteger(L, 1, 0);
    fflush(NULL);
    _exit(code);
    return 0;
}

static int l_getpid(lua_State *L)
{
    lua_pushinteger(L, getpid());
    return 1;
}

/* ------------------------------------------------------------------ group: no orphan, no zombie */

typedef struct {
    pid_t owner;
    int n, cap;
    pid_t *pid;
    int *fd;
} group;

static int l_group(lua_State *L)
{
    group *g = lua_newuserdatauv(L, sizeof *g, 0);
    memset(g, 0, sizeof *g);
    g->owner = getpid();
    luaL_setmetatable(L, PROC_GROUP);
    return 1;
}

static int group_add(lua_State *L)
{
    group *g = luaL_checkudata(L, 1, PROC_GROUP);
    pid_t pid = (pid_t)luaL_checkinteger(L, 2);
    int fd = (int)luaL_optinteger(L, 3, -1);
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 8;
        pid_t *p = realloc(g->pid, (size_t)cap * sizeof *p);
        if (!p) return luaL_error(L, "group: out of memory");
        g->pid = p;
        int *f = realloc(g->fd, (size_t)cap * sizeof *f);
        if (!f) return luaL_error(L, "group: out of memory");
        g->fd = f;
        g->cap = cap;
    }
    g->pid[g->n] = pid;
    g->fd[g->n] = fd;
    g->n++;
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Wait up to `secs` for the processes of g to end; returns how many are left. */
static int group_wait(group *g, double secs)
{
    double t0 = now_s();
    for (;;) {
        int left = 0;
        for (int i = 0; i < g->n; i++) {
            if (g->pid[i] <= 0) continue;
            int st;
            pid_t r = waitpid(g->pid[i], &st, WNOHANG);
            if (r == g->pid[i] || (r < 0 && errno == ECHILD)) g->pid[i] = 0;
            else left++;
        }
        if (left == 0 || now_s() - t0 >= secs) return left;
        struct timespec ts = {0, 2000000}; /* 2 ms */
        nanosleep(&ts, NULL);
    }
}

/* Close the fds (a worker then sees the end of its task stream and exits by itself), wait up to
 * grace seconds, SIGTERM what is left, wait up to 1 s more, SIGKILL and reap the rest. Returns the
 * number of processes that had to be signalled. */
static int group_shutdown_impl(group *g, double grace)
{
    if (g->owner != getpid()) return 0; /* a copy in a forked worker: not ours */
    for (int i = 0; i < g->n; i++)
        if (g->fd[i] >= 0) {
            close(g->fd[i]);
            g->fd[i] = -1;
        }
    int left = group_wait(g, grace), signalled = left;
    if (left > 0) {
        for (int i = 0; i < g->n; i++)
            if (g->pid[i] > 0) kill(g->pid[i], SIGTERM);
        left = group_wait(g, 1.0);
    }
    for (int i = 0; i < g->n; i++)
        if (g->pid[i] > 0) {
            kill(g->pid[i], SIGKILL);
            int st;
            while (waitpid(g->pid[i], &st, 0) < 0 && errno == EINTR) {
            }
            g->pid[i] = 0;
        }
    g->n = 0;
    return signalled;
}

/* g:reap(pid [, timeout_s]) -> how, code, name (as proc.waitpid): a worker that closed its socket.
 * Closes its fd, waits up to timeout (default 2 s) for it to exit, then SIGKILL; removes it from g.
 * One C call: an "interrupted!" hook cannot leave it half done (no zombie, no fd closed twice). */
static int group_reap(lua_State *L)
{
    group *g = luaL_checkudata(L, 1, PROC_GROUP);
    pid_t pid = (pid_t)luaL_checkinteger(L, 2);
    double timeout = luaL_optnumber(L, 3, 2.0);
    int i = 0;
    while (i < g->n && g->pid[i] != pid) i++;
    if (i == g->n) return luaL_error(L, "reap: process %d is not in the group", (int)pid);
    if (g->fd[i] >= 0) close(g->fd[i]);
    g->pid[i] = g->pid[g->n - 1];
    g->fd[i] = g->fd[g->n - 1];
    g->n--;
    double t0 = now_s();
    int st = 0;
    pid_t r;
    for (;;) {
        r = waitpid(pid, &st, WNOHANG);
        if (r != 0 || now_s() - t0 >= timeout) break;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    if (r == 0) {
        kill(pid, SIGKILL);
        while ((r = waitpid(pid, &st, 0)) < 0 && errno == EINTR) {
        }
    }
    if (r < 0) {
        lua_pushliteral(L, "gone");
        lua_pushstring(L, strerror(errno));
        return 2;
    }
    return push_status(L, st);
}

static int group_shutdown(lua_State *L)
{
    group *g = luaL_checkudata(L, 1, PROC_GROUP);
    double grace = luaL_optnumber(L, 2, 2.0);
    luaL_argcheck(L, grace >= 0 && grace <= 3600, 2, "grace (s) out of range");
    lua_pushinteger(L, group_shutdown_impl(g, grace));
    return 1;
}

/* __close (g, err) and __gc (g): an error or a lost reference: the workers go at once. */
static int group_close(lua_State *L)
{
    group *g = luaL_checkudata(L, 1, PROC_GROUP);
    group_shutdown_impl(g, 0.0);
    return 0;
}

static int group_gc(lua_State *L)
{
    group *g = luaL_checkudata(L, 1, PROC_GROUP);
    group_shutdown_impl(g, 0.0);
    free(g->pid);
    free(g->fd);
    g->pid = NULL;
    g->fd = NULL;
    g->cap = 0;
    return 0;
}

static int group_count(lua_State *L)
{
    group *g = luaL_checkudata(L, 1, PROC_GROUP);
    lua_pushinteger(L, g->n);
    return 1;
}

/* ------------------------------------------------------------------ encode / decode */

#define ENC_MAGIC "LFE1"
#define ENC_MAX_DEPTH 100
#define PATH_MAX_LEN 200

typedef struct {
    char *p;
    size_t n, cap;
} buffer;

static int buffer_gc(lua_State *L)
{
    buffer *b = luaL_checkudata(L, 1, PROC_BUFFER);
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    return 0;
}

typedef struct {
    lua_State *L;
    buffer *b;
    char path[PATH_MAX_LEN + 8];
    size_t plen;
} encoder;

static void put(encoder *e, const void *src, size_t n)
{
    buffer *b = e->b;
    if (b->cap - b->n < n) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap - b->n < n) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) luaL_error(e->L, "encode: out of memory (%d MB)", (int)(cap >> 20));
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void put_tag(encoder *e, char t) { put(e, &t, 1); }
static void put_u64(encoder *e, uint64_t v) { put(e, &v, 8); }

static const char *path_of(encoder *e) { return e->plen ? e->path : "the value"; }

/* Append the key at stack index k to the path ("a.b", "a[3]"); returns the old length. */
static size_t path_push(encoder *e, int k)
{
    size_t old = e->plen;
    char piece[64];
    lua_State *L = e->L;
    if (lua_type(L, k) == LUA_TSTRING) {
        const char *s = lua_tostring(L, k);
        snprintf(piece, sizeof piece, "%s%.40s", old ? "." : "", s);
    } else if (lua_isinteger(L, k)) {
        snprintf(piece, sizeof piece, "[%lld]", (long long)lua_tointeger(L, k));
    } else if (lua_type(L, k) == LUA_TNUMBER) {
        snprintf(piece, sizeof piece, "[%.17g]", lua_tonumber(L, k));
    } else {
        snprintf(piece, sizeof piece, "[%s]", lua_toboolean(L, k) ? "true" : "false");
    }
    size_t n = strlen(piece);
    if (old + n > PATH_MAX_LEN) n = PATH_MAX_LEN > old ? PATH_MAX_LEN - old : 0;
    memcpy(e->path + old, piece, n);
    e->plen = old + n;
    e->path[e->plen] = '\0';
    return old;
}

static void path_pop(encoder *e, size_t old)
{
    e->plen = old;
    e->path[old] = '\0';
}

static void encode_value(encoder *e, int idx, int depth);

static void encode_key(encoder *e, int idx)
{
    lua_State *L = e->L;
    int t = lua_type(L, idx);
    if (t != LUA_TSTRING && t != LUA_TNUMBER && t != LUA_TBOOLEAN)
        luaL_error(L, "%s has a key of type %s: only strings, numbers and booleans can be sent", path_of(e),
                   lfb_typename(L, idx));
    encode_value(e, idx, 0);
}

/* A table that is exactly the sequence 1..n (n >= 1) of floats: sent as n raw doubles. */
static lua_Integer float_array_length(lua_State *L, int idx)
{
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx), count = 0;
    if (n < 1) return 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        count++;
        int isnum;
        lua_Integer k = lua_tointegerx(L, -2, &isnum);
        int ok = lua_isinteger(L, -2) && isnum && k >= 1 && k <= n && lua_type(L, -1) == LUA_TNUMBER &&
                 !lua_isinteger(L, -1);
        lua_pop(L, 1);
        if (!ok || count > n) {
            lua_pop(L, 1);
            return 0;
        }
    }
    return count == n ? n : 0;
}

static void encode_table(encoder *e, int idx, int depth)
{
    lua_State *L = e->L;
    luaL_checkstack(L, 6, "encode: nested too deeply");
    lua_Integer n = float_array_length(L, idx);
    if (n > 0) {
        put_tag(e, 'A');
        put_u64(e, (uint64_t)n);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_rawgeti(L, idx, i);
            double x = lua_tonumber(L, -1);
            lua_pop(L, 1);
            put(e, &x, 8);
        }
        return;
    }
    uint64_t count = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        count++;
        lua_pop(L, 1);
    }
    uint64_t narr = (uint64_t)lua_rawlen(L, idx); /* a size hint for the decoder */
    put_tag(e, 'H');
    put_u64(e, narr < count ? narr : count);
    put_u64(e, count);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        int k = lua_gettop(L) - 1, v = lua_gettop(L);
        encode_key(e, k);
        size_t old = path_push(e, k);
        encode_value(e, v, depth + 1);
        path_pop(e, old);
        lua_pop(L, 1);
    }
}

static void encode_value(encoder *e, int idx, int depth)
{
    lua_State *L = e->L;
    if (depth > ENC_MAX_DEPTH)
        luaL_error(L, "%s is nested more than %d levels deep (a cycle?)", path_of(e), ENC_MAX_DEPTH);
    switch (lua_type(L, idx)) {
    case LUA_TNIL: put_tag(e, 'N'); return;
    case LUA_TBOOLEAN: put_tag(e, lua_toboolean(L, idx) ? 'T' : 'F'); return;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) {
            int64_t v = (int64_t)lua_tointeger(L, idx);
            put_tag(e, 'I');
            put(e, &v, 8);
        } else {
            double x = lua_tonumber(L, idx);
            put_tag(e, 'D');
            put(e, &x, 8);
        }
        return;
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        put_tag(e, 'S');
        put_u64(e, n);
        put(e, s, n);
        return;
    }
    case LUA_TTABLE: encode_table(e, idx, depth); return;
    case LUA_TUSERDATA: {
        const double *v = lfb_testvec3(L, idx);
        if (v) {
            put_tag(e, 'V');
            put(e, v, 3 * sizeof(double));
            return;
        }
        v = lfb_testmat3(L, idx);
        if (v) {
            put_tag(e, 'M');
            put(e, v, 9 * sizeof(double));
            return;
        }
    }
    /* fall through */
    default:
        luaL_error(L, "%s is a %s: only nil, booleans, numbers, strings, tables, vec3 and mat3 can be sent",
                   path_of(e), lfb_typename(L, idx));
    }
}

static int l_encode(lua_State *L)
{
    luaL_checkany(L, 1);
    lua_settop(L, 1);
    buffer *b = lua_newuserdatauv(L, sizeof *b, 0);
    memset(b, 0, sizeof *b);
    luaL_setmetatable(L, PROC_BUFFER);
    encoder e;
    e.L = L;
    e.b = b;
    e.plen = 0;
    e.path[0] = '\0';
    uint16_t one = 1;
    char hdr[6] = {ENC_MAGIC[0], ENC_MAGIC[1], ENC_MAGIC[2], ENC_MAGIC[3], (char)sizeof(double),
                   *(char *)&one ? 'l' : 'b'};
    put(&e, hdr, sizeof hdr);
    encode_value(&e, 1, 0);
    lua_pushlstring(L, b->p, b->n);
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    return 1;
}

typedef struct {
    lua_State *L;
    const char *p;
    size_t n, off;
} decoder;

static void need(decoder *d, size_t k)
{
    if (d->n - d->off < k) luaL_error(d->L, "decode: truncated data at byte %d", (int)d->off);
}

static char get_tag(decoder *d)
{
    need(d, 1);
    return d->p[d->off++];
}

static uint64_t get_u64(decoder *d)
{
    uint64_t v;
    need(d, 8);
    memcpy(&v, d->p + d->off, 8);
    d->off += 8;
    return v;
}

static double get_double(decoder *d)
{
    double x;
    need(d, 8);
    memcpy(&x, d->p + d->off, 8);
    d->off += 8;
    return x;
}

static void decode_value(decoder *d, int depth)
{
    lua_State *L = d->L;
    if (depth > ENC_MAX_DEPTH + 2) luaL_error(L, "decode: nested too deeply");
    luaL_checkstack(L, 4, "decode: nested too deeply");
    char t = get_tag(d);
    switch (t) {
    case 'N': lua_pushnil(L); return;
    case 'T': lua_pushboolean(L, 1); return;
    case 'F': lua_pushboolean(L, 0); return;
    case 'I': {
        int64_t v;
        need(d, 8);
        memcpy(&v, d->p + d->off, 8);
        d->off += 8;
        lua_pushinteger(L, (lua_Integer)v);
        return;
    }
    case 'D': lua_pushnumber(L, get_double(d)); return;
    case 'S': {
        uint64_t n = get_u64(d);
        need(d, n);
        lua_pushlstring(L, d->p + d->off, (size_t)n);
        d->off += n;
        return;
    }
    case 'A': {
        uint64_t n = get_u64(d);
        if (n > (d->n - d->off) / 8) luaL_error(L, "decode: truncated array of %d numbers", (int)n);
        lua_createtable(L, n > INT_MAX ? 0 : (int)n, 0);
        for (uint64_t i = 1; i <= n; i++) {
            lua_pushnumber(L, get_double(d));
            lua_rawseti(L, -2, (lua_Integer)i);
        }
        return;
    }
    case 'H': {
        uint64_t narr = get_u64(d), count = get_u64(d);
        if (count > d->n - d->off || narr > count) luaL_error(L, "decode: corrupt table header");
        lua_createtable(L, narr > INT_MAX ? 0 : (int)narr, count - narr > INT_MAX ? 0 : (int)(count - narr));
        for (uint64_t i = 0; i < count; i++) {
            decode_value(d, depth + 1);
            if (lua_isnil(L, -1)) luaL_error(L, "decode: nil table key");
            decode_value(d, depth + 1);
            lua_rawset(L, -3);
        }
        return;
    }
    case 'V': {
        double v[3];
        for (int i = 0; i < 3; i++) v[i] = get_double(d);
        lfb_pushvec3(L, v);
        return;
    }
    case 'M': {
        double m[9];
        for (int i = 0; i < 9; i++) m[i] = get_double(d);
        lfb_pushmat3(L, m);
        return;
    }
    default: luaL_error(L, "decode: unknown tag 0x%02x at byte %d", (unsigned char)t, (int)d->off - 1);
    }
}

static int l_decode(lua_State *L)
{
    decoder d;
    d.L = L;
    d.p = luaL_checklstring(L, 1, &d.n);
    d.off = 0;
    uint16_t one = 1;
    if (d.n < 6 || memcmp(d.p, ENC_MAGIC, 4) != 0) return luaL_error(L, "decode: not lf.ensemble data");
    if (d.p[4] != (char)sizeof(double) || d.p[5] != (*(char *)&one ? 'l' : 'b'))
        return luaL_error(L, "decode: data from a machine with another byte order or double size");
    d.off = 6;
    decode_value(&d, 0);
    if (d.off != d.n) return luaL_error(L, "decode: %d trailing bytes", (int)(d.n - d.off));
    return 1;
}

/* ------------------------------------------------------------------ registration */

void lfb_open_proc(lua_State *L)
{
    static const luaL_Reg reader_m[] = {{"pump", reader_pump}, {"pending", reader_pending}, {NULL, NULL}};
    static const luaL_Reg group_m[] = {{"add", group_add}, {"reap", group_reap},
                                       {"shutdown", group_shutdown}, {"count", group_count},
                                       {NULL, NULL}};
    static const luaL_Reg fns[] = {{"ncpu", l_ncpu},         {"socketpair", l_socketpair},
                                   {"fork", l_fork},         {"close", l_close},
                                   {"send", l_send},         {"recv", l_recv},
                                   {"reader", l_reader},     {"poll", l_poll},
                                   {"interrupted", l_interrupted}, {"waitpid", l_waitpid},
                                   {"kill", l_kill},         {"group", l_group},
                                   {"exit", l_exit},         {"getpid", l_getpid},
                                   {"encode", l_encode},     {"decode", l_decode},
                                   {NULL, NULL}};
    if (luaL_newmetatable(L, PROC_READER)) {
        luaL_newlib(L, reader_m);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, reader_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, PROC_GROUP)) {
        luaL_newlib(L, group_m);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, group_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, group_close);
        lua_setfield(L, -2, "__close");
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, PROC_BUFFER)) {
        lua_pushcfunction(L, buffer_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
    luaL_newlib(L, fns);
    lua_setfield(L, -2, "proc");
}
