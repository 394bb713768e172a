/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of core/graph/jit.c (compiler runner and code cache) and core/graph/sha256.c.
 * Every test works in its own temporary directory (mkdtemp under /tmp, removed at the end) and
 * passes its cache directory through opts.cache_dir; hostile states of the cache are made by
 * hand (chmod, chown when run as root, symlinks, truncation, swapped files) and each must be
 * refused or repaired as jit.h documents. Each test prints what it measured. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <dirent.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "native/jit_internal.h"
#include "native/sha256_internal.h"
#include "testutil.h"

typedef double (*fn1)(double);

typedef struct {
    char root[64];   /* mkdtemp */
    char cache[128]; /* root/cache/lieflow, created by the code under test */
    lf_jit_opts opts;
} fixture;

static void rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) < 0) return;
    if (S_ISDIR(st.st_mode)) {
        chmod(path, 0700);
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
                char sub[1024];
                snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
                rm_rf(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx) return -1;
    strcpy(fx->root, "/tmp/lf-test-jit-XXXXXX");
    if (!mkdtemp(fx->root)) return -1;
    snprintf(fx->cache, sizeof fx->cache, "%s/cache/lieflow", fx->root);
    fx->opts.cache_dir = fx->cache;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    rm_rf(fx->root);
    free(fx);
    return 0;
}

/* entries of dir whose name starts with prefix ("" = all) */
static int count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int k = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !strncmp(e->d_name, prefix, strlen(prefix))) k++;
    closedir(d);
    return k;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

/* load src, resolve "f"; returns the status */
static int load_f(const char *src, const lf_jit_opts *o, fn1 *f, lf_jit_lib **lib, lf_jit_info *info,
                  lf_error *err)
{
    const char *names[] = {"f"};
    void *fns[1] = {NULL};
    int rc = lf_jit_load(src, 1, names, fns, o, lib, info, err);
    *f = (fn1)(uintptr_t)fns[0];
    return rc;
}

/* load src that must work; returns f(x) and closes */
static double load_call(const char *src, const lf_jit_opts *o, double x, lf_jit_info *info)
{
    fn1 f;
    lf_jit_lib *lib;
    lf_error err = {0};
    int rc = load_f(src, o, &f, &lib, info, &err);
    if (rc) printf("  unexpected error: %s\n", err.msg);
    assert_int_equal(rc, LF_OK);
    assert_non_null(f);
    double y = f(x);
    lf_jit_close(lib);
    return y;
}

static const char SRC_A[] = "double f(double x) { return 2 * x; }\n";
static const char SRC_B[] = "double f(double x) { return 3 * x; }\n";

/* ------------------------------------------------------------------------------------------ */

static void test_sha256(void **state)
{
    (void)state;
    static const struct {
        const char *in, *hex;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmn"
         "opqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    char hex[65];
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        lf_sha256_hex(v[i].in, strlen(v[i].in), hex);
        assert_string_equal(hex, v[i].hex);
    }
    /* a million 'a' in pieces of odd sizes (exercises the partial-block buffer) */
    char a[997];
    memset(a, 'a', sizeof a);
    lf_sha256_ctx c;
    lf_sha256_init(&c);
    size_t left = 1000000;
    for (size_t k = 1; left > 0; k = k % 996 + 1) {
        size_t m = k < left ? k : left;
        lf_sha256_update(&c, a, m);
        left -= m;
    }
    unsigned char d[32];
    lf_sha256_final(&c, d);
    lf_sha256_tohex(d, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    printf("  FIPS 180-4 vectors (0, 3, 56, 112 bytes, 10^6 'a' in pieces): all equal\n");
}

static void test_compile_then_cached(void **state)
{
    fixture *fx = *state;
    lf_jit_info info;
    double t0 = now();
    assert_true(load_call(SRC_A, &fx->opts, 21, &info) == 42);
    double first = now() - t0;
    assert_int_equal(info.cached, 0);
    printf("  first load: compiled in %.3f s (compiler run %.3f s, load %.2f ms)\n", first, info.compile_seconds,
           1e3 * info.load_seconds);
    assert_true(first < 5);
    assert_int_equal((int)strlen(info.hash), 64);
    char want[600], key[65];
    snprintf(want, sizeof want, "%s/%s.so", fx->cache, info.hash);
    assert_string_equal(info.path, want);
    assert_int_equal(lf_jit_key(SRC_A, &fx->opts, key, NULL), LF_OK);
    assert_string_equal(key, info.hash);

    double best = 1e9;
    for (int i = 0; i < 3; i++) {
        lf_jit_info again;
        t0 = now();
        assert_true(load_call(SRC_A, &fx->opts, 1.5, &again) == 3);
        double t = now() - t0;
        assert_int_equal(again.cached, 1);
        assert_true(again.compile_seconds == 0);
        if (t < best) best = t;
        if (i == 0) printf("  cached load: %.2f ms wall (checks + dlopen + dlsym %.2f ms)\n", 1e3 * t,
                           1e3 * again.load_seconds);
    }
    printf("  cached load, best of 3: %.2f ms (bound 20 ms)\n", 1e3 * best);
    assert_true(best < 0.020);

    struct stat st;
    assert_int_equal(stat(info.path, &st), 0);
    printf("  cache file mode %04o, directory mode ", (unsigned)(st.st_mode & 07777));
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(st.st_uid, geteuid());
    assert_int_equal(stat(fx->cache, &st), 0);
    printf("%04o, ", (unsigned)(st.st_mode & 07777));
    assert_int_equal(st.st_mode & 077, 0);
    char parent[200];
    snprintf(parent, sizeof parent, "%s/cache", fx->root);
    assert_int_equal(stat(parent, &st), 0);
    printf("created parent %04o\n", (unsigned)(st.st_mode & 07777));
    assert_int_equal(st.st_mode & 077, 0); /* missing parents are created private too */
    assert_int_equal(count_entries(fx->cache, ""), 1);
    char dir[512];
    assert_int_equal(lf_jit_cache_dir(&fx->opts, dir, sizeof dir, NULL), LF_OK);
    assert_string_equal(dir, fx->cache);
}

/* The cache keeps at most cache_max objects: past that, the least recently used go (a load counts
 * as a use), down to 3/4 of it; a file that is not one of its objects is never touched. */
static void test_cache_bound(void **state)
{
    fixture *fx = *state;
    lf_jit_opts o = fx->opts;
    o.cache_max = 4;
    char src[8][80], other[600];
    for (int i = 0; i < 8; i++) snprintf(src[i], sizeof src[i], "double f(double x) { return %d * x; }\n", i + 2);
    snprintf(other, sizeof other, "%s/notes.txt", fx->cache);
    for (int i = 0; i < 4; i++) assert_true(load_call(src[i], &o, 1, NULL) == i + 2);
    FILE *f = fopen(other, "w");
    assert_non_null(f);
    fclose(f);
    struct timespec pause = {0, 20000000};
    nanosleep(&pause, NULL);
    assert_true(load_call(src[0], &o, 1, NULL) == 2); /* object 0 used again: the newest now */
    nanosleep(&pause, NULL);
    assert_true(load_call(src[4], &o, 1, NULL) == 6); /* a 5th object: the 2 least recently used go */
    const int left = count_entries(fx->cache, "");
    printf("  cache_max 4: %d files after the 5th compile (3 objects and notes.txt)\n", left);
    assert_int_equal(left, 4);
    lf_jit_info info;
    assert_true(load_call(src[0], &o, 1, &info) == 2);
    assert_int_equal(info.cached, 1); /* recently used: kept */
    assert_true(load_call(src[1], &o, 1, &info) == 3);
    assert_int_equal(info.cached, 0); /* the least recently used: removed, compiled again */
    assert_int_equal(access(other, F_OK), 0);
}

static void test_key(void **state)
{
    fixture *fx = *state;
    char ka[65], kb[65], kc[65], kd[65];
    lf_jit_opts o = fx->opts;
    assert_int_equal(lf_jit_key(SRC_A, &o, ka, NULL), LF_OK);
    assert_int_equal(lf_jit_key(SRC_B, &o, kb, NULL), LF_OK);
    o.cc = "gcc";
    assert_int_equal(lf_jit_key(SRC_A, &o, kc, NULL), LF_OK);
    o.cc = "  gcc\t";
    assert_int_equal(lf_jit_key(SRC_A, &o, kd, NULL), LF_OK);
    printf("  key(A) %.16s..., key(B) %.16s..., key(A, gcc) %.16s...\n", ka, kb, kc);
    assert_string_not_equal(ka, kb);
    assert_string_equal(kc, kd); /* the command's words count, not its blanks */
    o.cc = "env gcc";            /* leading argv words: env runs gcc */
    assert_int_equal(lf_jit_key(SRC_A, &o, kd, NULL), LF_OK);
    assert_string_not_equal(kc, kd);
    lf_jit_info ia, ib;
    assert_true(load_call(SRC_A, &o, 1, &ia) == 2);
    assert_string_equal(ia.hash, kd);
    assert_true(load_call(SRC_B, &fx->opts, 1, &ib) == 3);
    assert_string_equal(ib.hash, kb);
    assert_int_equal(count_entries(fx->cache, ""), 2);
    lf_error err;
    o.cc = " ";
    assert_int_equal(lf_jit_key(SRC_A, &o, kd, &err), LF_EINVAL);
    printf("  empty command: %s\n", err.msg);
}

static void test_refuse_open_dir(void **state)
{
    fixture *fx = *state;
    char dir[512];
    assert_int_equal(lf_jit_cache_dir(&fx->opts, dir, sizeof dir, NULL), LF_OK);
    static const mode_t modes[] = {0777, 0770, 0702};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(chmod(fx->cache, modes[i]), 0);
        lf_error err = {0};
        fn1 f;
        lf_jit_lib *lib = (lf_jit_lib *)1;
        assert_int_equal(load_f(SRC_A, &fx->opts, &f, &lib, NULL, &err), LF_EDOMAIN);
        assert_null(lib);
        assert_null(f);
        if (i == 0) printf("  mode 0777: %s\n", err.msg);
        assert_non_null(strstr(err.msg, "writable by group or others: refused"));
        assert_non_null(strstr(err.msg, fx->cache));
        assert_int_equal(lf_jit_cache_dir(&fx->opts, dir, sizeof dir, NULL), LF_EDOMAIN);
    }
    assert_int_equal(count_entries(fx->cache, ""), 0); /* nothing written into it */
}

static void test_refuse_symlink_dir(void **state)
{
    fixture *fx = *state;
    char real[200], link[200], slash[200];
    snprintf(real, sizeof real, "%s/real", fx->root);
    snprintf(link, sizeof link, "%s/link", fx->root);
    snprintf(slash, sizeof slash, "%s/link/", fx->root);
    assert_int_equal(mkdir(real, 0700), 0);
    assert_int_equal(symlink(real, link), 0);
    lf_jit_opts o = fx->opts;
    const char *paths[] = {link, slash};
    for (int i = 0; i < 2; i++) {
        o.cache_dir = paths[i];
        lf_error err = {0};
        fn1 f;
        lf_jit_lib *lib;
        assert_int_equal(load_f(SRC_A, &o, &f, &lib, NULL, &err), LF_EDOMAIN);
        if (i == 0) printf("  %s\n", err.msg);
        assert_non_null(strstr(err.msg, "is a symbolic link: refused"));
    }
    assert_int_equal(count_entries(real, ""), 0);
    /* a file where the directory should be */
    char file[200];
    snprintf(file, sizeof file, "%s/file", fx->root);
    write_file(file, "x", 0600);
    o.cache_dir = file;
    lf_error err = {0};
    char dir[512];
    assert_int_equal(lf_jit_cache_dir(&o, dir, sizeof dir, &err), LF_EDOMAIN);
    printf("  %s\n", err.msg);
}

static void test_refuse_foreign_owner(void **state)
{
    fixture *fx = *state;
    if (geteuid() != 0) {
        printf("  (skipped: chown to another uid needs root; running as uid %u)\n", (unsigned)geteuid());
        skip();
    }
    lf_jit_info info;
    assert_true(load_call(SRC_A, &fx->opts, 1, &info) == 2);
    lf_error err = {0};
    fn1 f;
    lf_jit_lib *lib;
    /* the directory */
    assert_int_equal(chown(fx->cache, 65534, 65534), 0);
    assert_int_equal(load_f(SRC_A, &fx->opts, &f, &lib, NULL, &err), LF_EDOMAIN);
    printf("  %s\n", err.msg);
    assert_non_null(strstr(err.msg, "is owned by uid 65534, not by you (uid 0): refused"));
    assert_int_equal(chown(fx->cache, 0, 0), 0);
    /* the cache file: refused, not loaded, not removed */
    assert_int_equal(chown(info.path, 65534, 65534), 0);
    assert_int_equal(load_f(SRC_A, &fx->opts, &f, &lib, NULL, &err), LF_EDOMAIN);
    printf("  %s\n", err.msg);
    assert_non_null(strstr(err.msg, "owned by uid 65534"));
    assert_non_null(strstr(err.msg, "not removed"));
    struct stat st;
    assert_int_equal(lstat(info.path, &st), 0);
    assert_int_equal(st.st_uid, 65534);
    /* a symbolic link of another user in its place: refused, left there */
    char elsewhere[200];
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere.so", fx->root);
    assert_int_equal(rename(info.path, elsewhere), 0);
    assert_int_equal(symlink(elsewhere, info.path), 0);
    assert_int_equal(lchown(info.path, 65534, 65534), 0);
    assert_int_equal(load_f(SRC_A, &fx->opts, &f, &lib, NULL, &err), LF_EDOMAIN);
    printf("  %s\n", err.msg);
    assert_non_null(strstr(err.msg, "symbolic link owned by uid 65534"));
    assert_int_equal(lstat(info.path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
}

static void test_refuse_writable_file(void **state)
{
    fixture *fx = *state;
    lf_jit_info info;
    assert_true(load_call(SRC_A, &fx->opts, 1, &info) == 2);
    static const mode_t modes[] = {0666, 0620, 0602};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(chmod(info.path, modes[i]), 0);
        lf_error err = {0};
        fn1 f;
        lf_jit_lib *lib;
        assert_int_equal(load_f(SRC_A, &fx->opts, &f, &lib, NULL, &err), LF_EDOMAIN);
        if (i == 0) printf("  %s\n", err.msg);
        assert_non_null(strstr(err.msg, "writable by group or others: refused"));
        assert_int_equal(access(info.path, F_OK), 0); /* left in place */
    }
    assert_int_equal(chmod(info.path, 0600), 0);
    lf_jit_info again;
    assert_true(load_call(SRC_A, &fx->opts, 1, &again) == 2);
    assert_int_equal(again.cached, 1);
}

static void test_refuse_not_regular(void **state)
{
    fixture *fx = *state;
    char key[65], path[600], dir[512];
    assert_int_equal(lf_jit_cache_dir(&fx->opts, dir, sizeof dir, NULL), LF_OK);
    assert_int_equal(lf_jit_key(SRC_A, &fx->opts, key, NULL), LF_OK);
    snprintf(path, sizeof path, "%s/%s.so", dir, key);
    for (int i = 0; i < 2; i++) { /* a FIFO (opening must not block), a directory */
        assert_int_equal(i == 0 ? mkfifo(path, 0600) : mkdir(path, 0700), 0);
        lf_error err = {0};
        fn1 f;
        lf_jit_lib *lib;
        double t0 = now();
        assert_int_equal(load_f(SRC_A, &fx->opts, &f, &lib, NULL, &err), LF_EDOMAIN);
        printf("  %s (%.1f ms): %s\n", i == 0 ? "FIFO" : "directory", 1e3 * (now() - t0), err.msg);
        assert_non_null(strstr(err.msg, "is not a regular file"));
        assert_int_equal(i == 0 ? unlink(path) : rmdir(path), 0); /* it was left in place */
    }
}

/* corrupt the cache file of SRC_A with act, load: recompiled, the note says why */
static void corrupt_and_reload(fixture *fx, const char *label, void (*act)(const char *path, fixture *fx),
                               const char *note_has)
{
    lf_jit_info info;
    assert_true(load_call(SRC_A, &fx->opts, 1, &info) == 2);
    act(info.path, fx);
    lf_jit_info again;
    assert_true(load_call(SRC_A, &fx->opts, 5, &again) == 10);
    printf("  %-15s -> cached=%d, %s\n", label, again.cached, again.note);
    assert_int_equal(again.cached, 0);
    assert_non_null(strstr(again.note, note_has));
    assert_int_equal(count_entries(fx->cache, ""), 1);
    struct stat st;
    assert_int_equal(stat(again.path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
}

static void halve(const char *path, fixture *fx)
{
    (void)fx;
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size / 2), 0);
}
static void most(const char *path, fixture *fx)
{
    (void)fx;
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size - 100), 0);
}
static void empty(const char *path, fixture *fx)
{
    (void)fx;
    assert_int_equal(truncate(path, 0), 0);
}
static void garbage(const char *path, fixture *fx)
{
    (void)fx;
    char text[200];
    memset(text, '#', sizeof text - 1);
    text[sizeof text - 1] = 0;
    write_file(path, text, 0600);
}
/* half of the file, and no section headers: only the program headers show the truncation (a
 * dlopen of this file dies of SIGBUS) */
static void halve_no_shdr(const char *path, fixture *fx)
{
    (void)fx;
    halve(path, fx);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    ElfW(Ehdr) eh;
    assert_int_equal(pread(fd, &eh, sizeof eh, 0), (ssize_t)sizeof eh);
    eh.e_shoff = 0;
    eh.e_shnum = 0;
    eh.e_shstrndx = 0;
    assert_int_equal(pwrite(fd, &eh, sizeof eh, 0), (ssize_t)sizeof eh);
    close(fd);
}

/* one byte in the middle of the object changed: headers, size and key intact (before the checksum
 * it was loaded, and the flipped code crashed the process: found by tests/fuzz/cache_fuzz.lua) */
static void flip_middle(const char *path, fixture *fx)
{
    (void)fx;
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char b;
    assert_int_equal(pread(fd, &b, 1, st.st_size / 2), 1);
    b ^= 0x5a;
    assert_int_equal(pwrite(fd, &b, 1, st.st_size / 2), 1);
    close(fd);
}

static void test_truncated_recompiled(void **state)
{
    fixture *fx = *state;
    corrupt_and_reload(fx, "a byte flipped", flip_middle, "do not match the SHA-256");
    corrupt_and_reload(fx, "half", halve, "truncated");
    corrupt_and_reload(fx, "all-100 B", most, "truncated");
    corrupt_and_reload(fx, "empty", empty, "empty");
    corrupt_and_reload(fx, "half, e_shoff=0", halve_no_shdr, "a segment extends beyond the end");
    corrupt_and_reload(fx, "garbage", garbage, "not an ELF file");
}

static void test_swapped_recompiled(void **state)
{
    fixture *fx = *state;
    lf_jit_info ia, ib;
    assert_true(load_call(SRC_A, &fx->opts, 1, &ia) == 2);
    assert_true(load_call(SRC_B, &fx->opts, 1, &ib) == 3);
    /* A's object under B's name: B's key is not in its bytes */
    assert_int_equal(rename(ia.path, ib.path), 0);
    lf_jit_info again;
    assert_true(load_call(SRC_B, &fx->opts, 2, &again) == 6);
    printf("  A renamed to B: cached=%d, %s\n", again.cached, again.note);
    assert_int_equal(again.cached, 0);
    assert_non_null(strstr(again.note, "did not carry its key"));

    /* an object that holds B's key as data but has its own lf_jit_key: caught by dlsym */
    char decoy[300];
    snprintf(decoy, sizeof decoy, "double f(double x) { return 7 * x; }\nconst char decoy[] = \"%s\";\n", ib.hash);
    lf_jit_info id;
    assert_true(load_call(decoy, &fx->opts, 1, &id) == 7);
    assert_int_equal(rename(id.path, ib.path), 0);
    assert_true(load_call(SRC_B, &fx->opts, 2, &again) == 6);
    printf("  decoy carrying B's key renamed to B: cached=%d, %s\n", again.cached, again.note);
    assert_int_equal(again.cached, 0);
    assert_non_null(strstr(again.note, "had another lf_jit_key"));
}

static void test_symlink_file(void **state)
{
    fixture *fx = *state;
    lf_jit_info ia, ib;
    assert_true(load_call(SRC_A, &fx->opts, 1, &ia) == 2);
    assert_true(load_call(SRC_B, &fx->opts, 1, &ib) == 3);
    /* B's (valid) object moved outside, a link to it planted at A's name: never followed */
    char elsewhere[200];
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere.so", fx->root);
    assert_int_equal(rename(ib.path, elsewhere), 0);
    assert_int_equal(unlink(ia.path), 0);
    assert_int_equal(symlink(elsewhere, ia.path), 0);
    lf_jit_info again;
    assert_true(load_call(SRC_A, &fx->opts, 1, &again) == 2);
    printf("  link at A's name: cached=%d, %s\n", again.cached, again.note);
    assert_int_equal(again.cached, 0);
    assert_non_null(strstr(again.note, "symbolic link"));
    struct stat st;
    assert_int_equal(lstat(ia.path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(lstat(elsewhere, &st), 0); /* the target is untouched */
    assert_true(S_ISREG(st.st_mode));
}

static void test_compiler_not_found(void **state)
{
    fixture *fx = *state;
    lf_jit_opts o = fx->opts;
    const char *ccs[] = {"/nonexistent/cc", "lieflow-no-such-compiler -O0"};
    const char *want[] = {"no C compiler: /nonexistent/cc not found (set LIEFLOW_CC)",
                          "no C compiler: lieflow-no-such-compiler not found (set LIEFLOW_CC)"};
    for (int i = 0; i < 2; i++) {
        o.cc = ccs[i];
        lf_error err = {0};
        lf_jit_info info;
        fn1 f;
        lf_jit_lib *lib;
        assert_int_equal(load_f(SRC_A, &o, &f, &lib, &info, &err), LF_EINVAL);
        printf("  %s\n", err.msg);
        assert_string_equal(err.msg, want[i]);
        assert_int_equal((int)strlen(info.hash), 64);
    }
    assert_int_equal(count_entries(fx->cache, ""), 0);
}

static void test_compiler_fails(void **state)
{
    fixture *fx = *state;
    char cc[200];
    snprintf(cc, sizeof cc, "%s/failing-cc", fx->root);
    write_file(cc, "#!/bin/sh\necho boom >&2\nexit 1\n", 0700);
    lf_jit_opts o = fx->opts;
    o.cc = cc;
    lf_error err = {0};
    lf_jit_info info;
    fn1 f;
    lf_jit_lib *lib;
    assert_int_equal(load_f(SRC_A, &o, &f, &lib, &info, &err), LF_EINVAL);
    printf("  %s\n", err.msg);
    assert_non_null(strstr(err.msg, "failed (exit status 1)"));
    assert_non_null(strstr(err.msg, "boom"));
    assert_non_null(strstr(info.log, "boom"));
    assert_int_equal(count_entries(fx->cache, ""), 0);

    /* a compiler that succeeds without writing anything: no shared object, nothing cached */
    write_file(cc, "#!/bin/sh\nexit 0\n", 0700);
    assert_int_equal(load_f(SRC_A, &o, &f, &lib, &info, &err), LF_EINVAL);
    printf("  %s\n", err.msg);
    assert_non_null(strstr(err.msg, "wrote no shared object"));
    assert_int_equal(count_entries(fx->cache, ""), 0);
}

static int process_gone(pid_t pid)
{
    if (kill(pid, 0) < 0 && errno == ESRCH) return 1;
    char p[64], buf[256];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r");
    if (!f) return 1;
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[k] = 0;
    char *rp = strrchr(buf, ')'); /* a zombie whose parent (not us) has not reaped it yet counts as gone */
    return rp && rp[1] == ' ' && rp[2] == 'Z';
}

static void test_compiler_hangs(void **state)
{
    fixture *fx = *state;
    char cc[200], script[600], pids[200];
    snprintf(cc, sizeof cc, "%s/hanging-cc", fx->root);
    snprintf(pids, sizeof pids, "%s/pids", fx->root);
    /* the shell, and a grandchild in the background: both must die with the process group */
    snprintf(script, sizeof script, "#!/bin/sh\necho $$ > %s\nsleep 100 &\necho $! >> %s\nsleep 100\n", pids, pids);
    write_file(cc, script, 0700);
    lf_jit_opts o = fx->opts;
    o.cc = cc;
    o.timeout = 0.5;
    lf_error err = {0};
    fn1 f;
    lf_jit_lib *lib;
    double t0 = now();
    assert_int_equal(load_f(SRC_A, &o, &f, &lib, NULL, &err), LF_EINVAL);
    double t = now() - t0;
    printf("  returned after %.3f s (timeout 0.5 s): %s\n", t, err.msg);
    assert_non_null(strstr(err.msg, "C compiler timed out after 0.5 s (LIEFLOW_CC_TIMEOUT)"));
    assert_true(t >= 0.5 && t < 1.0);
    FILE *pf = fopen(pids, "r");
    assert_non_null(pf);
    int p1 = 0, p2 = 0;
    assert_int_equal(fscanf(pf, "%d %d", &p1, &p2), 2);
    fclose(pf);
    double t1 = now();
    while (!(process_gone(p1) && process_gone(p2)) && now() - t1 < 1) usleep(1000);
    printf("  compiler pid %d gone: %d, its background child %d gone: %d (after %.1f ms more)\n", p1,
           process_gone(p1), p2, process_gone(p2), 1e3 * (now() - t1));
    assert_true(process_gone(p1));
    assert_true(process_gone(p2));
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1); /* no child of ours left to reap */
    assert_int_equal(errno, ECHILD);
    assert_int_equal(count_entries(fx->cache, ""), 0);
}

static void test_syntax_error(void **state)
{
    fixture *fx = *state;
    lf_error err = {0};
    lf_jit_info info;
    fn1 f;
    lf_jit_lib *lib;
    assert_int_equal(load_f("double f(double x) { return 2 * x }\n", &fx->opts, &f, &lib, &info, &err), LF_EINVAL);
    printf("  %s\n", err.msg);
    assert_non_null(strstr(err.msg, "failed (exit status 1)"));
    assert_non_null(strstr(err.msg, "generated.c:1:"));
    assert_non_null(strstr(info.log, "error"));
    assert_int_equal(count_entries(fx->cache, ""), 0);
    assert_null(lib);
}

static void test_missing_symbol(void **state)
{
    fixture *fx = *state;
    const char *names[] = {"f", "g_missing"};
    void *fns[2] = {(void *)1, (void *)1};
    lf_jit_lib *lib;
    lf_error err = {0};
    assert_int_equal(lf_jit_load(SRC_A, 2, names, fns, &fx->opts, &lib, NULL, &err), LF_EINVAL);
    printf("  %s\n", err.msg);
    assert_non_null(strstr(err.msg, "symbol 'g_missing' is not defined"));
    assert_null(lib);
    assert_null(fns[0]);
    assert_null(fns[1]);
    /* bad arguments */
    assert_int_equal(lf_jit_load(NULL, 0, NULL, NULL, &fx->opts, &lib, NULL, &err), LF_EINVAL);
    assert_int_equal(lf_jit_load(SRC_A, 1, NULL, NULL, &fx->opts, &lib, NULL, &err), LF_EINVAL);
    /* no symbols at all is fine */
    assert_int_equal(lf_jit_load(SRC_A, 0, NULL, NULL, &fx->opts, &lib, NULL, &err), LF_OK);
    lf_jit_close(lib);
    lf_jit_close(NULL);
}

static int count_fds(void)
{
    return count_entries("/proc/self/fd", "") - 1; /* less the one opendir holds */
}

static void test_no_fd_leak(void **state)
{
    fixture *fx = *state;
    int before = count_fds();
    lf_jit_info info;
    assert_true(load_call(SRC_A, &fx->opts, 1, &info) == 2); /* compiled */
    assert_true(load_call(SRC_A, &fx->opts, 1, &info) == 2); /* cached */
    lf_error err;
    fn1 f;
    lf_jit_lib *lib;
    assert_int_equal(load_f("syntax error", &fx->opts, &f, &lib, NULL, &err), LF_EINVAL);
    lf_jit_opts o = fx->opts;
    o.cc = "/nonexistent/cc";
    assert_int_equal(load_f(SRC_B, &o, &f, &lib, NULL, &err), LF_EINVAL);
    assert_int_equal(chmod(info.path, 0666), 0);
    assert_int_equal(load_f(SRC_A, &fx->opts, &f, &lib, NULL, &err), LF_EDOMAIN);
    int after = count_fds();
    printf("  open descriptors before %d, after compile, cached load and three failures %d\n", before, after);
    assert_int_equal(after, before);
}

typedef struct {
    const lf_jit_opts *opts;
    const char *src;
    pthread_barrier_t *go;
    int rc, cached;
    double y;
    char msg[sizeof(lf_error){0}.msg];
} worker;

static void *work(void *p)
{
    worker *w = p;
    pthread_barrier_wait(w->go);
    fn1 f;
    lf_jit_lib *lib;
    lf_jit_info info;
    lf_error err = {0};
    w->rc = load_f(w->src, w->opts, &f, &lib, &info, &err);
    snprintf(w->msg, sizeof w->msg, "%s", err.msg);
    if (!w->rc) {
        w->y = f(4);
        w->cached = info.cached;
        lf_jit_close(lib);
    }
    return NULL;
}

static void test_concurrent(void **state)
{
    fixture *fx = *state;
    /* two threads, the same new source at once */
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 2);
    worker w[2] = {{.opts = &fx->opts, .src = SRC_A, .go = &go}, {.opts = &fx->opts, .src = SRC_A, .go = &go}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, work, &w[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&go);
    printf("  threads: rc %d %d, cached %d %d, f(4) = %g %g\n", w[0].rc, w[1].rc, w[0].cached, w[1].cached, w[0].y,
           w[1].y);
    for (int i = 0; i < 2; i++) {
        if (w[i].rc) printf("  thread %d: %s\n", i, w[i].msg);
        assert_int_equal(w[i].rc, LF_OK);
        assert_true(w[i].y == 8);
    }
    /* two processes, another new source at once (both compile: no cache file yet) */
    int sync[2];
    assert_int_equal(pipe(sync), 0);
    pid_t pid[2];
    for (int i = 0; i < 2; i++) {
        pid[i] = fork();
        assert_true(pid[i] >= 0);
        if (pid[i] == 0) {
            char c;
            close(sync[1]);
            if (read(sync[0], &c, 1) != 0) _exit(3); /* start together: at EOF */
            fn1 f;
            lf_jit_lib *lib;
            lf_jit_info info;
            lf_error err = {0};
            int rc = load_f(SRC_B, &fx->opts, &f, &lib, &info, &err);
            if (rc) fprintf(stderr, "  process %d: %s\n", i, err.msg);
            _exit(rc ? 1 : f(4) == 12 ? 0 : 2);
        }
    }
    close(sync[0]);
    close(sync[1]);
    for (int i = 0; i < 2; i++) {
        int st;
        assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
        printf("  process %d: exit status %d\n", i, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    assert_int_equal(count_entries(fx->cache, ""), 2); /* A and B; no temporary file left */
}

static void test_sigchld_ignored(void **state)
{
    fixture *fx = *state;
    /* the host ignores SIGCHLD: children are reaped by the kernel, waitpid says ECHILD */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGCHLD, &ign, &old);
    lf_jit_info info;
    double y = load_call(SRC_A, &fx->opts, 1, &info);
    lf_error err = {0};
    fn1 f;
    lf_jit_lib *lib;
    lf_jit_opts o = fx->opts;
    o.cc = "false";
    int rc = load_f(SRC_B, &o, &f, &lib, NULL, &err);
    sigaction(SIGCHLD, &old, NULL);
    printf("  compiled with SIGCHLD ignored: f(1) = %g, cached=%d, note: %s\n", y, info.cached, info.note);
    assert_true(y == 2);
    assert_non_null(strstr(info.note, "reaped elsewhere"));
    printf("  a failing compiler then: %s\n", err.msg);
    assert_int_equal(rc, LF_EINVAL);
    assert_non_null(strstr(err.msg, "wrote no shared object"));
}

static void test_no_procfs(void **state)
{
    fixture *fx = *state;
    lf_jit_opts o = fx->opts;
    o.no_procfs = 1;
    lf_jit_info info;
    assert_true(load_call(SRC_A, &o, 1, &info) == 2);
    assert_int_equal(info.cached, 0);
    assert_true(load_call(SRC_A, &o, 2, &info) == 4);
    assert_int_equal(info.cached, 1);
    assert_int_equal(chmod(info.path, 0664), 0); /* the same checks apply */
    lf_error err = {0};
    fn1 f;
    lf_jit_lib *lib;
    assert_int_equal(load_f(SRC_A, &o, &f, &lib, NULL, &err), LF_EDOMAIN);
    printf("  path + dev/ino check: compiled, then cached; group-writable refused\n");
}

static void test_environment(void **state)
{
    fixture *fx = *state;
    char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    char *xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    char want[300], dir[512], val[300];
    lf_error err = {0};
    snprintf(val, sizeof val, "%s/xdg", fx->root);
    setenv("XDG_CACHE_HOME", val, 1);
    assert_int_equal(lf_jit_cache_dir(NULL, dir, sizeof dir, &err), LF_OK);
    snprintf(want, sizeof want, "%s/xdg/lieflow", fx->root);
    assert_string_equal(dir, want);
    printf("  XDG_CACHE_HOME=%s -> %s\n", val, dir);
    setenv("XDG_CACHE_HOME", "relative/path", 1); /* ignored, as the XDG spec says */
    snprintf(val, sizeof val, "%s/home", fx->root);
    setenv("HOME", val, 1);
    assert_int_equal(lf_jit_cache_dir(NULL, dir, sizeof dir, &err), LF_OK);
    snprintf(want, sizeof want, "%s/home/.cache/lieflow", fx->root);
    assert_string_equal(dir, want);
    printf("  XDG_CACHE_HOME relative, HOME=%s -> %s\n", val, dir);
    struct stat st;
    snprintf(want, sizeof want, "%s/home/.cache", fx->root);
    assert_int_equal(stat(want, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(lf_jit_cache_dir(NULL, dir, 10, &err), LF_EINVAL);
    if (home) setenv("HOME", home, 1); else unsetenv("HOME");
    if (xdg) setenv("XDG_CACHE_HOME", xdg, 1); else unsetenv("XDG_CACHE_HOME");
    free(home);
    free(xdg);

    setenv("LIEFLOW_CC_TIMEOUT", "soon", 1);
    fn1 f;
    lf_jit_lib *lib;
    assert_int_equal(load_f(SRC_A, &fx->opts, &f, &lib, NULL, &err), LF_EINVAL);
    printf("  %s\n", err.msg);
    assert_non_null(strstr(err.msg, "LIEFLOW_CC_TIMEOUT='soon'"));
    unsetenv("LIEFLOW_CC_TIMEOUT");
    setenv("LIEFLOW_CC", "/nonexistent/lieflow-cc", 1);
    assert_int_equal(load_f(SRC_A, &fx->opts, &f, &lib, NULL, &err), LF_EINVAL);
    printf("  LIEFLOW_CC=/nonexistent/lieflow-cc: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "not found"));
    unsetenv("LIEFLOW_CC");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256),
        cmocka_unit_test_setup_teardown(test_compile_then_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_open_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_symlink_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_foreign_owner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_writable_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_not_regular, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_recompiled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_swapped_recompiled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compiler_not_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compiler_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compiler_hangs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_syntax_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_symbol, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_fd_leak, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sigchld_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_procfs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_environment, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
