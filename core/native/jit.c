/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow — the compiler runner and code cache of compiled models (see jit_internal.h for the contract
 * and the security checks).
 *
 * Flow of lf_jit_load: resolve the options; open and check the cache directory (one descriptor,
 * every later file operation relative to it); hash the key; try to load <key>.so; if it is absent,
 * or an entry of ours that is not a valid cache file (removed), compile once and load again.
 *
 * Loading: the file is opened O_NOFOLLOW and checked on the descriptor (regular, owner, mode,
 * ELF headers within the file size, the SHA-256 appended at install, the key in its bytes), then loaded through the name
 * /proc/self/fd/<dirfd>/<key>.so: the path resolves inside the directory inode that was checked,
 * whatever happens to the directory's path meanwhile, and only its owner (you) can change the
 * entry, which must still be the checked inode after dlopen (dev/ino). Why not the file's own
 * /proc/self/fd/<fd>: glibc finds an object already loaded under the same name *before* it opens
 * anything, so once fd N is closed and reused, dlopen("/proc/self/fd/N") returns whatever library
 * was first loaded under that name (seen on glibc 2.36). A name that contains the key can only
 * ever name the same code, so the name cache is harmless here; lf_jit_key is checked after every
 * dlopen all the same. Without /proc, the absolute path is loaded and stat(2) must show the
 * checked dev/ino afterwards (weaker: the parents of the directory are resolved again).
 *
 * No global state. The compiler runs in a forked child (async-signal-safe calls only until
 * execve) in its own process group, stdin /dev/null, stdout and stderr into a pipe; all our
 * descriptors are O_CLOEXEC. */
#define _GNU_SOURCE /* pipe2 */
#include "native/jit_internal.h"

#include "native/sha256_internal.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <math.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef LF_BUILD_CC
#define LF_BUILD_CC "cc"
#endif

extern char **environ;

#define MAX_WORDS 16           /* argv words of the compiler command */
#define PATH_LEN 512           /* = sizeof lf_jit_info.path */
#define OUT_KEEP 2047          /* bytes of compiler output kept (lf_jit_info.log) */
#define MAX_SO (256L << 20)    /* a cache file larger than this is refused */
#define DEFAULT_TIMEOUT 30.0
#define TERM_GRACE 0.2         /* seconds between SIGTERM and SIGKILL of a timed-out compiler */

/* compiler flags, in the cache key; the command is: cc... FLAGS -o tmp.so tmp.c LIBS. Generated code
 * must compute what the tape computes, operation by operation: no contraction into fused
 * multiply-adds, and errno semantics kept (with -fno-math-errno gcc 12 rewrites cos(atan(x)) as
 * 1/sqrt(x*x + 1), which differs in the last bits: test_graph's test_native_compositions). */
static const char *const jit_flags[] = {"-std=c11", "-O2", "-fPIC", "-shared", "-ffp-contract=off"};
static const char *const jit_libs[] = {"-lm"};
#define NFLAGS (sizeof jit_flags / sizeof *jit_flags)
#define NLIBS (sizeof jit_libs / sizeof *jit_libs)

/* what a child that cannot execve writes into the output pipe before _exit(127), then its errno */
static const char exec_marker[8] = {'\x7f', 'l', 'f', 'e', 'x', 'e', 'c', '!'};

struct lf_jit_lib {
    void *handle;
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ------------------------------------------------------------------------ options */

typedef struct {
    char cmd[1024];            /* the command as configured (for messages) */
    char split[1024];          /* the same, split in place into words */
    char *words[MAX_WORDS];
    int nwords;
    const char *origin;        /* where the command came from */
    double timeout;
    int no_procfs;
} jit_conf;

static int conf_init(const lf_jit_opts *o, jit_conf *c, lf_error *err)
{
    memset(c, 0, sizeof *c);
    const char *cc = o ? o->cc : NULL;
    c->origin = "opts.cc";
    if (!cc) {
        const char *e = getenv("LIEFLOW_CC");
        if (e && *e) {
            cc = e;
            c->origin = "LIEFLOW_CC";
        } else {
            cc = LF_BUILD_CC;
            c->origin = "the build's compiler";
        }
    }
    if (strlen(cc) >= sizeof c->cmd)
        return lf_error_set(err, LF_EINVAL, "C compiler command (%s) is longer than %zu bytes",
                            c->origin, sizeof c->cmd - 1);
    strcpy(c->cmd, cc);
    strcpy(c->split, cc);
    for (char *s = c->split; *s;) {
        while (*s == ' ' || *s == '\t' || *s == '\n') *s++ = 0;
        if (!*s) break;
        if (c->nwords == MAX_WORDS)
            return lf_error_set(err, LF_EINVAL, "C compiler command '%s' (%s) has more than %d words",
                                c->cmd, c->origin, MAX_WORDS);
        c->words[c->nwords++] = s;
        while (*s && *s != ' ' && *s != '\t' && *s != '\n') s++;
    }
    if (c->nwords == 0)
        return lf_error_set(err, LF_EINVAL, "C compiler command (%s) is empty", c->origin);

    double t = o ? o->timeout : 0;
    if (isnan(t) || isinf(t))
        return lf_error_set(err, LF_EINVAL, "compiler timeout must be a finite number of seconds (got %g)", t);
    if (t <= 0) {
        const char *e = getenv("LIEFLOW_CC_TIMEOUT");
        if (e && *e) {
            char *end;
            t = strtod(e, &end);
            while (*end == ' ') end++;
            if (end == e || *end || !(t > 0) || isinf(t))
                return lf_error_set(err, LF_EINVAL,
                                    "LIEFLOW_CC_TIMEOUT='%s' is not a positive number of seconds", e);
        } else {
            t = DEFAULT_TIMEOUT;
        }
    }
    c->timeout = t;
    c->no_procfs = o ? o->no_procfs : 0;
    return LF_OK;
}

/* key = SHA-256(tag NUL, (word NUL)..., NUL, (flag NUL)..., (lib NUL)..., NUL, src) */
static void key_of(const jit_conf *c, const char *src, char hex[65])
{
    lf_sha256_ctx h;
    unsigned char d[32];
    lf_sha256_init(&h);
    lf_sha256_update(&h, LF_JIT_TAG, sizeof LF_JIT_TAG);
    for (int i = 0; i < c->nwords; i++) lf_sha256_update(&h, c->words[i], strlen(c->words[i]) + 1);
    lf_sha256_update(&h, "", 1);
    for (size_t i = 0; i < NFLAGS; i++) lf_sha256_update(&h, jit_flags[i], strlen(jit_flags[i]) + 1);
    for (size_t i = 0; i < NLIBS; i++) lf_sha256_update(&h, jit_libs[i], strlen(jit_libs[i]) + 1);
    lf_sha256_update(&h, "", 1);
    lf_sha256_update(&h, src, strlen(src));
    lf_sha256_final(&h, d);
    lf_sha256_tohex(d, hex);
}

/* ------------------------------------------------------------------------ the cache directory */

static int cache_path(const lf_jit_opts *o, char *out, size_t size, lf_error *err)
{
    int n;
    if (o && o->cache_dir) {
        if (!*o->cache_dir) return lf_error_set(err, LF_EINVAL, "cache_dir is an empty string");
        n = snprintf(out, size, "%s", o->cache_dir);
    } else {
        const char *x = getenv("XDG_CACHE_HOME");
        if (x && x[0] == '/') { /* relative values are ignored, as the XDG spec says */
            n = snprintf(out, size, "%s/lieflow", x);
        } else {
            const char *home = getenv("HOME");
            char pwbuf[4096];
            struct passwd pw, *res = NULL;
            if (!home || !*home) {
                if (getpwuid_r(geteuid(), &pw, pwbuf, sizeof pwbuf, &res) != 0 || !res || !res->pw_dir ||
                    !*res->pw_dir)
                    return lf_error_set(err, LF_EINVAL,
                                        "no cache directory: HOME is unset and uid %u has no passwd entry "
                                        "with a home directory; set XDG_CACHE_HOME",
                                        (unsigned)geteuid());
                home = res->pw_dir;
            }
            if (home[0] != '/')
                return lf_error_set(err, LF_EINVAL,
                                    "no cache directory: HOME='%s' is not an absolute path; set XDG_CACHE_HOME",
                                    home);
            n = snprintf(out, size, "%s/.cache/lieflow", home);
        }
    }
    if (n < 0 || (size_t)n >= size || (size_t)n + 70 >= PATH_LEN) /* room for /<64 hex>.so */
        return lf_error_set(err, LF_EINVAL, "cache directory path is too long (%d bytes; at most %d)", n,
                            PATH_LEN - 71);
    while (n > 1 && out[n - 1] == '/') out[--n] = 0; /* "dir/" would follow a symlink */
    return LF_OK;
}

/* mkdir -p with mode 0700 for each component created */
static int make_dirs(const char *path, lf_error *err)
{
    char p[PATH_LEN];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s) continue;
        char c = *s;
        *s = 0;
        if (mkdir(p, 0700) < 0 && errno != EEXIST) {
            int e = errno;
            struct stat st;
            if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode))
                return lf_error_set(err, LF_EDOMAIN, "cannot create the cache directory %s: %s", p,
                                    strerror(e));
        }
        *s = c;
        if (!c) break;
    }
    return LF_OK;
}

typedef struct {
    char dir[PATH_LEN];
    int fd;                    /* the checked directory */
    int procfs;                /* /proc/self/fd/<fd> names it */
} cache_ref;

static const char hint[] = "use a private directory (XDG_CACHE_HOME or the cache_dir option)";

static int cache_open(const lf_jit_opts *o, cache_ref *cr, lf_error *err)
{
    cr->fd = -1;
    int rc = cache_path(o, cr->dir, sizeof cr->dir, err);
    if (rc) return rc;
    const char *d = cr->dir;
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        if ((rc = make_dirs(d, err))) return rc;
        fd = open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    struct stat st;
    if (fd < 0) {
        int e = errno;
        if (lstat(d, &st) == 0 && S_ISLNK(st.st_mode))
            return lf_error_set(err, LF_EDOMAIN,
                                "cache directory %s is a symbolic link: refused (it must be a real "
                                "directory; a link could point anywhere); %s", d, hint);
        if (lstat(d, &st) == 0 && !S_ISDIR(st.st_mode))
            return lf_error_set(err, LF_EDOMAIN, "cache directory %s is not a directory: refused; %s", d, hint);
        return lf_error_set(err, LF_EDOMAIN, "cannot open the cache directory %s: %s", d, strerror(e));
    }
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return lf_error_set(err, LF_EDOMAIN, "cannot stat the cache directory %s: %s", d, strerror(e));
    }
    if (st.st_uid != geteuid()) {
        close(fd);
        return lf_error_set(err, LF_EDOMAIN,
                            "cache directory %s is owned by uid %u, not by you (uid %u): refused; %s", d,
                            (unsigned)st.st_uid, (unsigned)geteuid(), hint);
    }
    if (st.st_mode & 022) {
        close(fd);
        return lf_error_set(err, LF_EDOMAIN,
                            "cache directory %s has mode %04o, writable by group or others: refused "
                            "(it must be private: chmod 700 it, or %s)",
                            d, (unsigned)(st.st_mode & 07777), hint);
    }
    cr->fd = fd;
    char pp[64];
    struct stat ps;
    snprintf(pp, sizeof pp, "/proc/self/fd/%d", fd);
    cr->procfs = !(o && o->no_procfs) && stat(pp, &ps) == 0 && ps.st_dev == st.st_dev && ps.st_ino == st.st_ino;
    return LF_OK;
}

int lf_jit_cache_dir(const lf_jit_opts *opts, char *buf, size_t size, lf_error *err)
{
    if (!buf || size == 0) return lf_error_set(err, LF_EINVAL, "lf_jit_cache_dir: no buffer");
    cache_ref cr;
    int rc = cache_open(opts, &cr, err);
    if (rc) return rc;
    close(cr.fd);
    if (strlen(cr.dir) >= size)
        return lf_error_set(err, LF_EINVAL, "lf_jit_cache_dir: buffer of %zu bytes too small for %s", size,
                            cr.dir);
    strcpy(buf, cr.dir);
    return LF_OK;
}

int lf_jit_key(const char *src, const lf_jit_opts *opts, char hash[65], lf_error *err)
{
    if (!src || !hash) return lf_error_set(err, LF_EINVAL, "lf_jit_key: source or output is NULL");
    jit_conf c;
    int rc = conf_init(opts, &c, err);
    if (rc) return rc;
    key_of(&c, src, hash);
    return LF_OK;
}

/* ------------------------------------------------------------------------ files */

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* a new file lf-tmp-<16 hex><suffix> in the directory, O_EXCL, mode 0600 (mkstemps, but relative
 * to the directory descriptor) */
static int tmp_create(int dirfd, const char *suffix, char name[48])
{
    for (int tries = 0; tries < 100; tries++) {
        unsigned char r[8];
        if (getentropy(r, sizeof r) != 0) { /* no getrandom: hash what differs between callers */
            struct {
                struct timespec t;
                pid_t pid;
                void *where;
                int tries;
            } s;
            memset(&s, 0, sizeof s);
            clock_gettime(CLOCK_REALTIME, &s.t);
            s.pid = getpid();
            s.where = &s;
            s.tries = tries;
            unsigned char d[32];
            lf_sha256(&s, sizeof s, d);
            memcpy(r, d, sizeof r);
        }
        snprintf(name, 48, "lf-tmp-%02x%02x%02x%02x%02x%02x%02x%02x%s", r[0], r[1], r[2], r[3], r[4], r[5],
                 r[6], r[7], suffix);
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) return fd;
        if (errno != EEXIST && errno != EINTR) return -1;
    }
    errno = EEXIST;
    return -1;
}

/* unlink name only if it is still the inode seen (a concurrent process may have put a fresh file
 * there meanwhile) */
static void remove_entry(int dirfd, const char *name, const struct stat *seen)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == seen->st_dev &&
        st.st_ino == seen->st_ino)
        unlinkat(dirfd, name, 0);
}

static int fits(uint64_t off, uint64_t len, uint64_t n) { return off <= n && len <= n - off; }

/* NULL if the ELF headers of the shared object b[0..n) are sane and everything they point to lies
 * within the file (dlopen maps segments beyond the end of a truncated file and dies of SIGBUS),
 * else what is wrong */
static const char *elf_problem(const unsigned char *b, size_t n)
{
    ElfW(Ehdr) eh;
    if (n < sizeof eh) return "shorter than an ELF header";
    memcpy(&eh, b, sizeof eh);
    const union {
        uint16_t u;
        unsigned char c[2];
    } endian = {1};
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return "not an ELF file";
    if (eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
        eh.e_ident[EI_DATA] != (endian.c[0] ? ELFDATA2LSB : ELFDATA2MSB))
        return "an ELF file for another word size or byte order";
    if (eh.e_type != ET_DYN) return "not a shared object";
    if (eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_phnum == 0 ||
        !fits(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(ElfW(Phdr)), n))
        return "program headers missing or beyond the end of the file";
    if (eh.e_shoff != 0 && (eh.e_shentsize != sizeof(ElfW(Shdr)) ||
                            !fits(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(ElfW(Shdr)), n)))
        return "section headers beyond the end of the file";
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        ElfW(Phdr) ph;
        memcpy(&ph, b + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_NULL && !fits(ph.p_offset, ph.p_filesz, n))
            return "a segment extends beyond the end of the file";
    }
    return NULL;
}

/* Every cache file ends with SUM_MAGIC and the SHA-256 of the bytes before them (install_output
 * appends them; the ELF loader ignores bytes past its headers and segments): a flipped byte in the
 * code is "corrupt" and recompiled, where it would have been loaded and crashed the process. */
#define SUM_MAGIC "lfsha256"
#define SUM_LEN (8 + 32)
static int sum_ok(const unsigned char *b, size_t n)
{
    unsigned char d[32];
    if (n < SUM_LEN || memcmp(b + n - SUM_LEN, SUM_MAGIC, 8) != 0) return 0;
    lf_sha256(b, n - SUM_LEN, d);
    return memcmp(b + n - 32, d, 32) == 0;
}

/* the bytes hold the key followed by its NUL, as the string lf_jit_key does */
static int has_key(const unsigned char *b, size_t n, const char *hash)
{
    if (n < 65) return 0;
    for (const unsigned char *p = b; (p = memchr(p, hash[0], (size_t)(b + n - 65 - p) + 1)); p++)
        if (memcmp(p, hash, 65) == 0) return 1;
    return 0;
}

static int key_ok(void *h, const char *hash)
{
    const char *k = dlsym(h, "lf_jit_key");
    return k && strncmp(k, hash, 65) == 0;
}

/* ------------------------------------------------------------------------ loading */

enum { LOAD_OK, LOAD_ABSENT, LOAD_STALE, LOAD_RACE, LOAD_FAIL };

/* Open the cache entry name (path, for messages) without following a link: LOAD_OK with *fd, or
 * LOAD_ABSENT; LOAD_STALE: a symbolic link of yours (never followed; the link is removed);
 * LOAD_FAIL: another's link (not followed, not removed) or a system error (err filled). */
static int open_entry(const cache_ref *cr, const char *name, const char *path, int *fd, char *why, size_t whysz,
                      lf_error *err)
{
    uid_t me = geteuid();
    do *fd = openat(cr->fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    while (*fd < 0 && errno == EINTR);
    if (*fd >= 0) return LOAD_OK;
    int e = errno;
    struct stat ls;
    if (e == ENOENT) return LOAD_ABSENT;
    if (fstatat(cr->fd, name, &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode)) {
        if (ls.st_uid != me) {
            lf_error_set(err, LF_EDOMAIN,
                         "cache file %s is a symbolic link owned by uid %u, not by you (uid %u): refused "
                         "(not followed, not removed); %s",
                         path, (unsigned)ls.st_uid, (unsigned)me, hint);
            return LOAD_FAIL;
        }
        remove_entry(cr->fd, name, &ls);
        snprintf(why, whysz, "was a symbolic link (never followed; the link was removed)");
        return LOAD_STALE;
    }
    lf_error_set(err, LF_EDOMAIN, "cannot open the cache file %s: %s", path, strerror(e));
    return LOAD_FAIL;
}

/* The checks of an open entry's status st: a regular file, owned by you, not writable by group or
 * others, at most MAX_SO bytes. -1: refused (err filled; the entry is neither loaded nor removed). */
static int entry_refused(const struct stat *st, const char *path, lf_error *err)
{
    uid_t me = geteuid();
    if (!S_ISREG(st->st_mode)) {
        lf_error_set(err, LF_EDOMAIN, "cache file %s is not a regular file (mode %06o): refused; remove it",
                     path, (unsigned)st->st_mode);
        return -1;
    }
    if (st->st_uid != me) {
        lf_error_set(err, LF_EDOMAIN,
                     "cache file %s is owned by uid %u, not by you (uid %u): refused (not loaded, not "
                     "removed); %s",
                     path, (unsigned)st->st_uid, (unsigned)me, hint);
        return -1;
    }
    if (st->st_mode & 022) {
        lf_error_set(err, LF_EDOMAIN,
                     "cache file %s has mode %04o, writable by group or others: refused (not loaded); "
                     "remove it",
                     path, (unsigned)(st->st_mode & 07777));
        return -1;
    }
    if (st->st_size > MAX_SO) {
        lf_error_set(err, LF_EDOMAIN, "cache file %s is larger than %ld bytes: refused", path, MAX_SO);
        return -1;
    }
    return 0;
}

/* Read the entry's n bytes through fd into *buf (the caller frees it) and check them: ELF headers
 * within the file, the key in its bytes. *bad: NULL if they pass, else what the entry was (a
 * constant, or why). -1: no memory (err filled). */
static int read_entry(int fd, size_t n, const char *hash, const char *path, unsigned char **buf, const char **bad,
                      char *why, size_t whysz, lf_error *err)
{
    *bad = NULL;
    if (n == 0) {
        *bad = "was empty";
        return 0;
    }
    if (!(*buf = malloc(n))) {
        lf_error_set(err, LF_ENOMEM, "no memory to read the cache file %s (%zu bytes)", path, n);
        return -1;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, *buf + got, n - got, (off_t)got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    const char *p = got < n ? "shorter than its size" : elf_problem(*buf, n);
    if (!p && !sum_ok(*buf, n)) p = "its bytes do not match the SHA-256 written after them";
    if (p) {
        snprintf(why, whysz, "was truncated or corrupt (%s)", p);
        *bad = why;
    } else if (!has_key(*buf, n, hash)) {
        *bad = "did not carry its key (stale or swapped)";
    }
    return 0;
}

/* dlopen the checked entry name (status st) through /proc/self/fd/<dirfd>/name, or its path without
 * /proc (see the top of this file); afterwards the entry must still be the checked inode (dev/ino),
 * and the loaded code must carry the key. LOAD_OK (*out: the handle); LOAD_RACE: the entry changed
 * meanwhile; LOAD_STALE: *bad says what the entry was. */
static int dlopen_checked(const cache_ref *cr, const char *name, const char *path, const struct stat *st,
                          const char *hash, void **out, const char **bad, char *why, size_t whysz)
{
    char dlname[PATH_LEN + 64];
    if (cr->procfs) snprintf(dlname, sizeof dlname, "/proc/self/fd/%d/%s", cr->fd, name);
    else snprintf(dlname, sizeof dlname, "%s", path);
    dlerror();
    void *h = dlopen(dlname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *de = dlerror();
        snprintf(why, whysz, "was rejected by dlopen (%s)", de ? de : "?");
        *bad = why;
        return LOAD_STALE;
    }
    struct stat now_st;
    int same = fstatat(cr->fd, name, &now_st, AT_SYMLINK_NOFOLLOW) == 0 && now_st.st_dev == st->st_dev &&
               now_st.st_ino == st->st_ino;
    if (same && !cr->procfs)
        same = stat(path, &now_st) == 0 && now_st.st_dev == st->st_dev && now_st.st_ino == st->st_ino;
    if (!same) {
        dlclose(h);
        return LOAD_RACE;
    }
    if (!key_ok(h, hash)) {
        dlclose(h);
        *bad = "had another lf_jit_key (stale or swapped)";
        return LOAD_STALE;
    }
    *out = h;
    return LOAD_OK;
}

/* Try to load <hash>.so from the cache. LOAD_STALE: the entry was ours but no valid cache file (it
 * is removed; why says what it was); LOAD_RACE: the entry changed between the check and dlopen;
 * LOAD_FAIL: refused or a system error (err filled). */
static int try_load(const cache_ref *cr, const char *hash, const char *path, void **out, char *why,
                    size_t whysz, lf_error *err)
{
    char name[72];
    snprintf(name, sizeof name, "%s.so", hash);
    int fd;
    int rc = open_entry(cr, name, path, &fd, why, whysz, err);
    if (rc != LOAD_OK) return rc;
    struct stat st;
    unsigned char *buf = NULL;
    const char *bad = NULL;
    rc = LOAD_FAIL;
    if (fstat(fd, &st) < 0) {
        lf_error_set(err, LF_EDOMAIN, "cannot stat the cache file %s: %s", path, strerror(errno));
        goto done;
    }
    if (entry_refused(&st, path, err) ||
        read_entry(fd, (size_t)st.st_size, hash, path, &buf, &bad, why, whysz, err))
        goto done;
    if (!bad) {
        rc = dlopen_checked(cr, name, path, &st, hash, out, &bad, why, whysz);
        if (rc != LOAD_STALE) goto done; /* loaded, or the entry changed meanwhile */
    }
    if (bad != why) snprintf(why, whysz, "%s", bad);
    remove_entry(cr->fd, name, &st);
    rc = LOAD_STALE;
done:
    free(buf);
    close(fd);
    return rc;
}

/* ------------------------------------------------------------------------ running the compiler */

/* An absolute path to the executable the command word w names: itself if it contains a slash
 * (relative to the current directory: the compiler runs in the cache directory), else the first
 * match on PATH (execvp's search). 0, or an errno value. */
static int find_exe(const char *w, char *out, size_t size)
{
    char cwd[PATH_LEN];
    int eacces = 0;
    const char *path = strchr(w, '/') ? "" : getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *s = path;;) {
        const char *e = strchr(s, ':');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        int k;
        if (strchr(w, '/')) k = snprintf(out, size, "%s", w);
        else if (len == 0) k = snprintf(out, size, "%s", w); /* an empty entry: the current directory */
        else k = snprintf(out, size, "%.*s/%s", (int)len, s, w);
        if (k > 0 && (size_t)k < size && out[0] != '/') {
            char tmp[PATH_LEN];
            if (getcwd(cwd, sizeof cwd) && snprintf(tmp, sizeof tmp, "%s/%s", cwd, out) < (int)sizeof tmp)
                k = snprintf(out, size, "%s", tmp);
            else k = -1;
        }
        struct stat st;
        if (k > 0 && (size_t)k < size && stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(out, X_OK) == 0) return 0;
            eacces = 1;
        }
        if (!e) break;
        s = e + 1;
    }
    return eacces ? EACCES : ENOENT;
}

typedef struct {
    int exited;                /* the child is gone (status valid unless lost) */
    int lost;                  /* its status was reaped by someone else (ECHILD) */
    int status;
    int timed_out;
    char out[OUT_KEEP + 1];
    size_t nout;
} run_result;

static int fd_above_2(int fd)
{
    if (fd < 0 || fd > 2) return fd;
    int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return nfd;
}

/* read what is available; 0 at EOF or error, 1 if the pipe stays open */
static int read_some(int fd, run_result *r)
{
    for (int i = 0; i < 1024; i++) {
        char b[4096];
        ssize_t k = read(fd, b, sizeof b);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
        if (k == 0) return 0;
        size_t keep = (size_t)k < OUT_KEEP - r->nout ? (size_t)k : OUT_KEEP - r->nout;
        memcpy(r->out + r->nout, b, keep);
        r->nout += keep;
        r->out[r->nout] = 0;
    }
    return 1;
}

/* the child: async-signal-safe calls only (the host may be multithreaded) */
static void child(const char *exe, char *const argv[], int dirfd, int outr, int outw, int nullfd)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL); /* SIG_IGN in the host would break the compiler's own waits */
    sigaction(SIGPIPE, &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setpgid(0, 0);
    close(outr);
    if (fchdir(dirfd) == 0 && dup2(nullfd, 0) == 0 && dup2(outw, 1) == 1 && dup2(outw, 2) == 2) {
        close(nullfd);
        execve(exe, argv, environ); /* outw and dirfd are O_CLOEXEC */
    }
    int e = errno;
    char msg[sizeof exec_marker + sizeof e];
    memcpy(msg, exec_marker, sizeof exec_marker);
    memcpy(msg + sizeof exec_marker, &e, sizeof e);
    ssize_t k = write(outw, msg, sizeof msg);
    (void)k;
    _exit(127);
}

/* SIGTERM to the group (gcc removes its temporary files), SIGKILL after TERM_GRACE, then reap. The
 * leader is waited for with WNOWAIT first: while it is an unreaped zombie, its pid (= the group's
 * id) cannot be reused, so the SIGKILL cannot reach a stranger. */
static void stop_group(pid_t pid, run_result *r)
{
    kill(-pid, SIGTERM);
    kill(pid, SIGTERM);
    double end = now() + TERM_GRACE;
    for (;;) {
        siginfo_t si;
        si.si_pid = 0;
        int w = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 || si.si_pid == pid || now() >= end) break;
        poll(NULL, 0, 5);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    for (;;) {
        int st;
        pid_t w = waitpid(pid, &st, 0);
        if (w == pid) { r->status = st; break; }
        if (w < 0 && errno == EINTR) continue;
        r->lost = 1;
        break;
    }
    r->exited = 1;
}

static int run(const char *exe, char *const argv[], int dirfd, double timeout, run_result *r, lf_error *err)
{
    memset(r, 0, sizeof *r);
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return lf_error_set(err, LF_EDOMAIN, "cannot start the C compiler: pipe: %s", strerror(errno));
    p[0] = fd_above_2(p[0]);
    p[1] = fd_above_2(p[1]);
    int nullfd = fd_above_2(open("/dev/null", O_RDWR | O_CLOEXEC));
    if (p[0] < 0 || p[1] < 0 || nullfd < 0) {
        int e = errno;
        if (p[0] >= 0) close(p[0]);
        if (p[1] >= 0) close(p[1]);
        if (nullfd >= 0) close(nullfd);
        return lf_error_set(err, LF_EDOMAIN, "cannot start the C compiler: %s", strerror(e));
    }
    pid_t pid = fork();
    if (pid == 0) child(exe, argv, dirfd, p[0], p[1], nullfd);
    int fe = errno;
    close(p[1]);
    close(nullfd);
    if (pid < 0) {
        close(p[0]);
        return lf_error_set(err, LF_EDOMAIN, "cannot start the C compiler: fork: %s", strerror(fe));
    }
    setpgid(pid, pid); /* also here, against the race with the child's own call; errors are harmless */
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    double deadline = now() + timeout;
    int open_ = 1;
    for (;;) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG); /* our child only: never wait(-1) */
        if (w == pid) {
            r->exited = 1;
            r->status = st;
        } else if (w < 0 && errno == ECHILD) { /* reaped by a SIGCHLD handler, SIG_IGN or another thread */
            r->exited = 1;
            r->lost = 1;
        }
        if (r->exited) {
            if (open_) read_some(p[0], r); /* what the compiler wrote before it exited */
            break;
        }
        double rem = deadline - now();
        if (rem <= 0) {
            stop_group(pid, r);
            r->timed_out = 1;
            break;
        }
        int ms = (int)fmin(rem * 1000 + 1, open_ ? 50 : 2);
        if (open_) {
            struct pollfd pf = {.fd = p[0], .events = POLLIN};
            if (poll(&pf, 1, ms) > 0) open_ = read_some(p[0], r);
        } else {
            poll(NULL, 0, ms); /* output closed, exit not yet seen */
        }
    }
    close(p[0]);
    return LF_OK;
}

/* replace every occurrence of from by to in s (size bytes) */
static void replace_all(char *s, size_t size, const char *from, const char *to)
{
    char tmp[OUT_KEEP + 1];
    size_t lf = strlen(from), lt = strlen(to), o = 0;
    for (const char *p = s; *p && o + 1 < sizeof tmp;) {
        if (strncmp(p, from, lf) == 0 && o + lt < sizeof tmp) {
            memcpy(tmp + o, to, lt);
            o += lt;
            p += lf;
        } else {
            tmp[o++] = *p++;
        }
    }
    tmp[o] = 0;
    snprintf(s, size, "%s", tmp);
}

/* The generated source src and the key line into a new temporary file cname of the cache directory
 * (0600, O_EXCL), and a second one, sname, that reserves the compiler's output name. On failure
 * neither is left (err filled). */
static int write_source(const cache_ref *cr, const char *src, const char *hash, char cname[48], char sname[48],
                        lf_error *err)
{
    int cfd = tmp_create(cr->fd, ".c", cname);
    if (cfd < 0)
        return lf_error_set(err, LF_EDOMAIN, "cannot create a temporary file in %s: %s", cr->dir, strerror(errno));
    char keyline[128];
    snprintf(keyline, sizeof keyline, "\nconst char lf_jit_key[] = \"%s\";\n", hash);
    int wrc = write_all(cfd, src, strlen(src)) || write_all(cfd, keyline, strlen(keyline));
    int we = errno;
    if (close(cfd) < 0 && !wrc) {
        wrc = 1;
        we = errno;
    }
    if (wrc) {
        unlinkat(cr->fd, cname, 0);
        return lf_error_set(err, LF_EDOMAIN, "cannot write the generated source to %s: %s", cr->dir, strerror(we));
    }
    int sfd = tmp_create(cr->fd, ".so", sname); /* reserves the output name */
    if (sfd < 0) {
        int se = errno;
        unlinkat(cr->fd, cname, 0);
        return lf_error_set(err, LF_EDOMAIN, "cannot create a temporary file in %s: %s", cr->dir, strerror(se));
    }
    close(sfd);
    return LF_OK;
}

/* The compiler's argv (no shell): exe, the command's other words, the flags, -o sname cname, the
 * libraries. */
static void compiler_argv(const jit_conf *c, char *exe, char *sname, char *cname,
                          char *argv[MAX_WORDS + NFLAGS + NLIBS + 5])
{
    int a = 0;
    argv[a++] = exe;
    for (int i = 1; i < c->nwords; i++) argv[a++] = c->words[i];
    for (size_t i = 0; i < NFLAGS; i++) argv[a++] = (char *)jit_flags[i];
    argv[a++] = "-o";
    argv[a++] = sname;
    argv[a++] = cname;
    for (size_t i = 0; i < NLIBS; i++) argv[a++] = (char *)jit_libs[i];
    argv[a] = NULL;
}

/* How the compiler run r ended: its output (the temporary name cname shown as generated.c) into
 * info->log, and trimmed in r->out; an error if it timed out, could not be executed, was killed or
 * failed; a note in info when its exit status was reaped elsewhere. */
static int compiler_result(const jit_conf *c, const char *exe, const char *cname, run_result *r,
                           lf_jit_info *info, lf_error *err)
{
    int exec_errno = 0;
    if (r->nout >= sizeof exec_marker + sizeof(int) && memcmp(r->out, exec_marker, sizeof exec_marker) == 0) {
        memcpy(&exec_errno, r->out + sizeof exec_marker, sizeof(int));
        r->nout = 0;
        r->out[0] = 0;
    }
    replace_all(r->out, sizeof r->out, cname, "generated.c");
    snprintf(info->log, sizeof info->log, "%s", r->out);
    size_t L = strlen(r->out);
    while (L > 0 && (r->out[L - 1] == '\n' || r->out[L - 1] == ' ')) r->out[--L] = 0;
    const char *out = L ? r->out : "(no output)";
    if (r->timed_out)
        return lf_error_set(err, LF_EINVAL,
                            "C compiler timed out after %g s (LIEFLOW_CC_TIMEOUT): %s was stopped with its "
                            "process group",
                            c->timeout, c->cmd);
    if (exec_errno)
        return lf_error_set(err, LF_EINVAL, "no C compiler: %s cannot be executed: %s (set LIEFLOW_CC)", exe,
                            strerror(exec_errno));
    if (!r->lost && WIFSIGNALED(r->status))
        return lf_error_set(err, LF_EINVAL, "C compiler %s was killed by signal %d (%s):\n%s", c->cmd,
                            WTERMSIG(r->status), strsignal(WTERMSIG(r->status)), out);
    if (!r->lost && WEXITSTATUS(r->status) != 0)
        return lf_error_set(err, LF_EINVAL, "C compiler %s failed (exit status %d):\n%s", c->cmd,
                            WEXITSTATUS(r->status), out);
    if (r->lost) { /* appended to a note on the replaced file, if any */
        size_t k = strlen(info->note);
        snprintf(info->note + k, sizeof info->note - k,
                 "%sthe compiler's exit status was reaped elsewhere in the program (SIGCHLD ignored or "
                 "handled, or wait(-1) in another thread); its output file was checked instead",
                 k ? "; " : "");
    }
    return LF_OK;
}

/* Append SUM_MAGIC and the SHA-256 of the file's n bytes to the file fd. -1: errno set. */
static int append_sum(int fd, size_t n)
{
    unsigned char *b = malloc(n + SUM_LEN);
    if (!b) return errno = ENOMEM, -1;
    size_t got = 0;
    int e = EIO; /* a file shorter than its size */
    while (got < n) {
        ssize_t k = pread(fd, b + got, n - got, (off_t)got);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) e = errno;
        if (k <= 0) break;
        got += (size_t)k;
    }
    int rc = -1;
    if (got == n) {
        memcpy(b + n, SUM_MAGIC, 8);
        lf_sha256(b, n, b + n + 8);
        rc = 0;
        for (size_t off = n; off < n + SUM_LEN && rc == 0;) {
            ssize_t k = pwrite(fd, b + off, n + SUM_LEN - off, (off_t)off);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) rc = -1;
            else off += (size_t)k;
        }
    } else {
        errno = e;
    }
    free(b);
    return rc;
}

/* The compiler's output sname (r: how it ended; r->out its trimmed output) checked (a non-empty
 * regular file, not a link, owned by you), made 0600 and renamed to final atomically. */
static int install_output(const jit_conf *c, const cache_ref *cr, const char *sname, const char *final,
                          const run_result *r, const lf_jit_info *info, lf_error *err)
{
    const char *out = r->out[0] ? r->out : "(no output)";
    int fd = openat(cr->fd, sname, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        if (fd >= 0) close(fd);
        return lf_error_set(err, LF_EINVAL, "C compiler %s %s but wrote no shared object:\n%s", c->cmd,
                            r->lost ? "ended (status unknown)" : "succeeded", out);
    }
    if (st.st_uid != geteuid()) {
        close(fd);
        return lf_error_set(err, LF_EDOMAIN,
                            "the compiler's output in %s is owned by uid %u, not by you (uid %u): refused",
                            cr->dir, (unsigned)st.st_uid, (unsigned)geteuid());
    }
    if (st.st_size > MAX_SO) {
        close(fd);
        return lf_error_set(err, LF_EINVAL, "the compiled file in %s is larger than %ld bytes: refused", cr->dir, MAX_SO);
    }
    if (append_sum(fd, (size_t)st.st_size) < 0) {
        int e = errno;
        close(fd);
        return lf_error_set(err, LF_EDOMAIN, "cannot write the checksum of the compiled file in %s: %s", cr->dir,
                            strerror(e));
    }
    /* the linker creates its output 0777 & ~umask: make it private */
    if (fchmod(fd, 0600) < 0 || close(fd) < 0)
        return lf_error_set(err, LF_EDOMAIN, "cannot set the mode of the compiled file in %s: %s", cr->dir,
                            strerror(errno));
    if (renameat(cr->fd, sname, cr->fd, final) < 0)
        return lf_error_set(err, LF_EDOMAIN, "cannot rename the compiled file to %s: %s", info->path,
                            strerror(errno));
    return LF_OK;
}

/* Compile src (+ the key line) into <hash>.so in the cache directory: temporary files created there
 * (0600, O_EXCL), the result made 0600 and renamed into place atomically; temporary files are
 * removed in every case. */
static int compile(const jit_conf *c, const cache_ref *cr, const char *src, lf_jit_info *info, lf_error *err)
{
    char exe[PATH_LEN];
    int e = find_exe(c->words[0], exe, sizeof exe);
    if (e == ENOENT)
        return lf_error_set(err, LF_EINVAL, "no C compiler: %s not found (set LIEFLOW_CC)", c->words[0]);
    if (e)
        return lf_error_set(err, LF_EINVAL, "no C compiler: %s is not executable (set LIEFLOW_CC)", exe);

    char cname[48], sname[48], final[72];
    snprintf(final, sizeof final, "%s.so", info->hash);
    int rc = write_source(cr, src, info->hash, cname, sname, err);
    if (rc) return rc;
    char *argv[MAX_WORDS + NFLAGS + NLIBS + 5];
    compiler_argv(c, exe, sname, cname, argv);

    run_result *r = malloc(sizeof *r);
    if (!r) {
        unlinkat(cr->fd, cname, 0);
        unlinkat(cr->fd, sname, 0);
        return lf_error_set(err, LF_ENOMEM, "no memory to run the C compiler");
    }
    double t0 = now();
    rc = run(exe, argv, cr->fd, c->timeout, r, err);
    info->compile_seconds = now() - t0;
    unlinkat(cr->fd, cname, 0);
    if (!rc) rc = compiler_result(c, exe, cname, r, info, err);
    if (!rc) rc = install_output(c, cr, sname, final, r, info, err);
    if (rc) unlinkat(cr->fd, sname, 0); /* renamed into place on success */
    free(r);
    return rc;
}

/* ------------------------------------------------------------------------ the cache's size */
typedef struct {
    char name[72];
    struct stat st;
} entry_age;

static int older(const void *a, const void *b)
{
    const struct timespec *x = &((const entry_age *)a)->st.st_mtim, *y = &((const entry_age *)b)->st.st_mtim;
    return x->tv_sec != y->tv_sec ? (x->tv_sec < y->tv_sec ? -1 : 1) : (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* <64 hex digits>.so: what this cache writes */
static int is_object_name(const char *n)
{
    for (int i = 0; i < 64; i++)
        if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f'))) return 0;
    return strcmp(n + 64, ".so") == 0;
}

/* Keep at most max objects: past that, remove the least recently used (modification time: set when
 * compiled, refreshed on every load) down to 3/4 of max. Only our own regular files named like our
 * objects are counted or removed; what cannot be read or removed stays (best effort: the cache works
 * either way). */
static void prune(const cache_ref *cr, int max)
{
    int fd = fcntl(cr->fd, F_DUPFD_CLOEXEC, 0);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    rewinddir(d);
    entry_age *e = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (!is_object_name(de->d_name)) continue;
        if (n == cap) {
            entry_age *m = realloc(e, (cap = cap ? 2 * cap : 256) * sizeof *e);
            if (!m) break;
            e = m;
        }
        if (fstatat(cr->fd, de->d_name, &e[n].st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(e[n].st.st_mode) &&
            e[n].st.st_uid == geteuid()) {
            memcpy(e[n].name, de->d_name, 68); /* 64 + ".so" + NUL (is_object_name) */
            n++;
        }
    }
    closedir(d);
    if (n > (size_t)max) {
        qsort(e, n, sizeof *e, older);
        for (size_t i = 0; i < n - (size_t)max * 3 / 4; i++) remove_entry(cr->fd, e[i].name, &e[i].st);
    }
    free(e);
}

/* ------------------------------------------------------------------------ the API */

int lf_jit_load(const char *src, int n, const char *const *names, void **fns, const lf_jit_opts *opts,
                lf_jit_lib **lib, lf_jit_info *info, lf_error *err)
{
    lf_jit_info scratch;
    lf_error scratch_err;
    if (!info) info = &scratch;
    if (!err) err = &scratch_err;
    memset(info, 0, sizeof *info);
    if (lib) *lib = NULL;
    if (fns)
        for (int i = 0; i < n; i++) fns[i] = NULL;
    if (!src || !lib || n < 0 || (n > 0 && (!names || !fns)))
        return lf_error_set(err, LF_EINVAL, "lf_jit_load: %s", !src ? "source is NULL" : !lib ? "lib is NULL"
                                                              : n < 0 ? "negative symbol count"
                                                                      : "names or fns is NULL");
    for (int i = 0; i < n; i++)
        if (!names[i] || !*names[i])
            return lf_error_set(err, LF_EINVAL, "lf_jit_load: symbol name %d is NULL or empty", i);

    jit_conf *c = malloc(sizeof *c);
    if (!c) return lf_error_set(err, LF_ENOMEM, "lf_jit_load: no memory");
    cache_ref cr = {.fd = -1};
    void *h = NULL;
    int rc = conf_init(opts, c, err);
    if (rc) goto out;
    key_of(c, src, info->hash);
    if ((rc = cache_open(opts, &cr, err))) goto out;
    if (snprintf(info->path, sizeof info->path, "%s/%s.so", cr.dir, info->hash) >= (int)sizeof info->path) {
        rc = lf_error_set(err, LF_EINVAL, "cache directory path %s is too long", cr.dir); /* cache_path checks */
        goto out;
    }

    int compiled = 0, races = 0;
    for (;;) {
        char why[200] = "";
        double t0 = now();
        int r = try_load(&cr, info->hash, info->path, &h, why, sizeof why, err);
        info->load_seconds = now() - t0;
        if (r == LOAD_OK) break;
        if (r == LOAD_FAIL) {
            rc = err->code;
            goto out;
        }
        if (r == LOAD_RACE) {
            if (++races < 4) continue;
            rc = lf_error_set(err, LF_EDOMAIN, "cache file %s changed while it was being loaded (%d times): refused",
                              info->path, races);
            goto out;
        }
        if (compiled) {
            rc = lf_error_set(err, LF_EDOMAIN, "the freshly compiled %s %s", info->path,
                              r == LOAD_ABSENT ? "disappeared before it was loaded" : why);
            goto out;
        }
        if (r == LOAD_STALE) snprintf(info->note, sizeof info->note, "recompiled: the cached file %s", why);
        if ((rc = compile(c, &cr, src, info, err))) goto out;
        compiled = 1;
    }

    double t1 = now();
    for (int i = 0; i < n; i++) {
        dlerror();
        fns[i] = dlsym(h, names[i]);
        if (!fns[i]) {
            rc = lf_error_set(err, LF_EINVAL, "symbol '%s' is not defined by the compiled code (%s)", names[i],
                              info->path);
            for (int j = 0; j < n; j++) fns[j] = NULL;
            goto out;
        }
    }
    info->load_seconds += now() - t1;
    char object[72];
    snprintf(object, sizeof object, "%s.so", info->hash);
    if (compiled) prune(&cr, opts && opts->cache_max > 0 ? opts->cache_max : LF_JIT_CACHE_MAX);
    else utimensat(cr.fd, object, NULL, AT_SYMLINK_NOFOLLOW); /* recently used: kept longest */
    *lib = malloc(sizeof **lib);
    if (!*lib) {
        for (int j = 0; j < n; j++) fns[j] = NULL;
        rc = lf_error_set(err, LF_ENOMEM, "lf_jit_load: no memory");
        goto out;
    }
    (*lib)->handle = h;
    h = NULL;
    info->cached = !compiled;
    rc = LF_OK;
out:
    if (h) dlclose(h);
    if (cr.fd >= 0) close(cr.fd);
    free(c);
    return rc;
}

void lf_jit_close(lf_jit_lib *lib)
{
    if (!lib) return;
    if (lib->handle) dlclose(lib->handle);
    free(lib);
}
