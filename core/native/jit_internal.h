/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lieflow (internal) — the compiler runner and code cache of compiled models (DESIGN §5a): C source in,
 * function pointers out. The source is compiled by the system C compiler into a shared object,
 * kept in a private per-user cache directory under its SHA-256 key, and loaded with dlopen.
 *
 * This is a security boundary: it runs a program and loads code from disk. What another user
 * could have planted is refused with a message that names the path, what was found and what is
 * expected; nothing ever falls back to a shared directory such as /tmp.
 *  - Cache directory: created 0700 (missing parents too); opened with O_NOFOLLOW and checked on
 *    the open descriptor: a real directory (not a symlink), owned by you (geteuid), not writable
 *    by group or others. Every later file operation is relative to that descriptor (openat,
 *    renameat, unlinkat; the compiler runs with it as working directory), so a directory renamed
 *    or swapped under its path after the check cannot redirect them.
 *  - Cache file <hash>.so: opened with O_NOFOLLOW|O_NONBLOCK and checked on the descriptor: a
 *    regular file, owned by you, not writable by group or others. Its ELF headers are checked
 *    against its size (dlopen of a truncated object dies of SIGBUS), the SHA-256 appended to it
 *    when it was compiled must match its bytes (a flipped byte in the code would crash the
 *    process that runs it) and its bytes must carry its key. It is dlopen'ed (RTLD_NOW|RTLD_LOCAL) as /proc/self/fd/<dir fd>/<hash>.so, i.e. inside
 *    the checked directory inode; afterwards the entry must still be the checked inode (dev/ino)
 *    and dlsym(lf_jit_key) must equal the key. (Not /proc/self/fd/<file fd>: glibc returns any
 *    library already loaded under the same name without opening the file, so a reused fd number
 *    would yield another library; a name that contains the key can only name the same code.)
 *    Without /proc the absolute path is loaded and stat(2) of it must show the checked dev/ino.
 *  - An entry of yours that is not a valid cache file (a symbolic link, empty, truncated, corrupt,
 *    stale or swapped: another key) is removed (the link itself, never its target) and the source
 *    compiled afresh, once; lf_jit_info.note says so. An entry owned by another user, a file with
 *    group/other write permission, or anything that is not a regular file is refused and left in
 *    place (LF_EDOMAIN).
 * Status codes: LF_EINVAL for bad arguments, options or environment variables, and for a compiler
 * that is missing, fails or times out, and for a requested symbol the code does not define;
 * LF_EDOMAIN for a refused cache directory or file and for system errors (I/O, fork, dlopen);
 * LF_ENOMEM for allocation failures.
 * Thread-safe: no global state; concurrent calls from threads and processes (also for the same
 * source: each compiles to its own temporary file, rename(2) publishes atomically) all succeed.
 * Environment variables are read with getenv (the host must not setenv concurrently). */
#ifndef LF_JIT_INTERNAL_H
#define LF_JIT_INTERNAL_H

#include <stddef.h>

#include "base/error.h"
#include "native/jit.h"

/* Version tag hashed into every cache key; bump it when the generated code's ABI changes. */
#define LF_JIT_TAG "lieflow-jit-2"

/* What lf_jit_load did; filled as far as it got, also on failure. */
typedef struct lf_jit_info {
    int cached;             /* 1: loaded from the cache, 0: compiled now */
    double compile_seconds; /* wall time of the compiler run (0 if cached) */
    double load_seconds;    /* wall time of the checks, dlopen and dlsym of the final load */
    char path[512];         /* the cache file: <cache dir>/<hash>.so */
    char hash[65];          /* the cache key: 64 hex digits */
    char note[256];         /* "" or why a cached file was replaced ("recompiled: ... truncated") */
    char log[2048];         /* the compiler's output (stdout and stderr), its first 2 KB */
} lf_jit_info;

typedef struct lf_jit_lib lf_jit_lib;

/* Compile the C source src (or find it in the cache), load it, and resolve the n symbols
 * names[i] into fns[i] (cast a function's void * to its type). The cache key is the SHA-256 of
 * LF_JIT_TAG, the compiler's argv words, the compiler flags and src (see lf_jit_key); the code
 * compiled is src followed by the line `const char lf_jit_key[] = "<key>";`, which is checked
 * after every dlopen (src must not define lf_jit_key itself). Command: cc -std=c11 -O2 -fPIC
 * -shared -ffp-contract=off -fno-math-errno -o <tmp>.so <tmp>.c -lm, run in the cache directory.
 * On success *lib holds the loaded code until lf_jit_close (the pointers in fns die with it).
 * On failure *lib is NULL, fns[0..n) are NULL and err says why: the compiler's first lines of
 * output when it failed ("C compiler gcc failed (exit status 1): ..."), "no C compiler: X not
 * found (set LIEFLOW_CC)", "C compiler timed out after 30 s (LIEFLOW_CC_TIMEOUT)", a refused
 * cache entry, or a missing symbol by name. A compiler that overruns the timeout is stopped with
 * its whole process group (SIGTERM, so that gcc removes its temporary files, then SIGKILL to
 * what is left after at most 0.2 s). The compiler's status is waited for by its pid only, so a
 * SIGCHLD handler of the host or a wait(-1) in another thread cannot hang the call (a status
 * reaped by someone else is judged by the output file). info may be NULL. */
int lf_jit_load(const char *src, int n, const char *const *names, void **fns,
                const lf_jit_opts *opts, lf_jit_lib **lib, lf_jit_info *info, lf_error *err);

/* Unload code loaded by lf_jit_load (dlclose) and free the handle; NULL is a no-op. */
void lf_jit_close(lf_jit_lib *lib);

/* The cache directory lf_jit_load would use, created (0700) if missing and checked as described
 * above, written to buf (NUL-terminated; LF_EINVAL if it does not fit in size bytes). */
int lf_jit_cache_dir(const lf_jit_opts *opts, char *buf, size_t size, lf_error *err);

/* The cache key src would get with opts (64 hex digits and a NUL), without compiling anything;
 * LF_EINVAL for a bad compiler option. */
int lf_jit_key(const char *src, const lf_jit_opts *opts, char hash[65], lf_error *err);

#endif
